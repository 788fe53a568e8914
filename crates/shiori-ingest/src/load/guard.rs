//! Panics of the code that reads a file, caught as that file's failure: pdf-extract and lopdf
//! panic on constructs they do not support, and a bug in any loader must cost one file, not the
//! folder's index.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::sync::Once;

/// A panic while a file was read, by its message.
#[derive(Debug, thiserror::Error)]
#[error("unsupported construct: {0}")]
pub(super) struct Panicked(String);

thread_local! {
    /// Set while this thread runs guarded code, whose panics are reported as failures.
    static PANICS_ARE_FAILURES: Cell<bool> = const { Cell::new(false) };
}
static QUIET_GUARDED_PANICS: Once = Once::new();

/// Runs `work`, a panic in it becoming the file's failure reason instead of a backtrace on
/// stderr; every other panic still reaches the hook that was there before. Guards nest.
pub(super) fn guarded<T>(work: impl FnOnce() -> T) -> Result<T, Panicked> {
    QUIET_GUARDED_PANICS.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !PANICS_ARE_FAILURES.get() {
                previous(info);
            }
        }));
    });
    let outer = PANICS_ARE_FAILURES.replace(true);
    let outcome = catch_unwind(AssertUnwindSafe(work));
    PANICS_ARE_FAILURES.set(outer);
    outcome.map_err(|panic| panic_message(panic.as_ref()))
}

fn panic_message(panic: &(dyn Any + Send)) -> Panicked {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown failure".to_owned());
    Panicked(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_failure_and_guards_nest() {
        let outer = guarded(|| {
            let inner = guarded(|| -> u32 { panic!("bad table") });
            assert_eq!(
                inner.map_err(|panic| panic.to_string()),
                Err("unsupported construct: bad table".to_owned())
            );
            assert!(PANICS_ARE_FAILURES.get(), "the outer guard still holds");
            panic!("{}", String::from("after"))
        });
        assert_eq!(
            outer.map_err(|panic| panic.to_string()),
            Err("unsupported construct: after".to_owned())
        );
        assert!(!PANICS_ARE_FAILURES.get());
        assert_eq!(guarded(|| 7).ok(), Some(7));
    }
}
