//! A circuit breaker per endpoint: once a server cannot be connected to, calls to it fail at
//! once for a while, instead of each one waiting out its own connection failure. One answer
//! makes several calls (CRAG grades, rewrites, answers), and a server that is down would
//! otherwise cost every one of them.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How long an endpoint that could not be reached is not tried again.
pub const OPEN_FOR: Duration = Duration::from_secs(30);

/// One endpoint's outage: from the first failed connection until a call gets through.
#[derive(Debug, Clone)]
struct Outage {
    /// Why the last connection failed, e.g. `connection refused`.
    cause: String,
    /// No call goes out before this.
    until: Instant,
}

/// The outages of endpoints by base URL.
#[derive(Debug, Default)]
pub(crate) struct Breakers {
    outages: Mutex<HashMap<String, Outage>>,
}

impl Breakers {
    /// The process's breakers: every client of the same base URL (the models of one server,
    /// its embedder, an engine opened again) shares them, so none of them tries a server
    /// another has just found down.
    pub fn global() -> &'static Breakers {
        static BREAKERS: OnceLock<Breakers> = OnceLock::new();
        BREAKERS.get_or_init(Breakers::default)
    }

    /// An error message while `endpoint` is not to be tried.
    pub fn check(&self, endpoint: &str, now: Instant) -> Result<(), String> {
        let outages = self.outages.lock().unwrap_or_else(PoisonError::into_inner);
        match outages.get(endpoint) {
            Some(outage) if now < outage.until => Err(unreachable_message(
                endpoint,
                &outage.cause,
                outage.until - now,
            )),
            _ => Ok(()),
        }
    }

    /// Records that `endpoint` could not be connected to and opens its breaker; returns the
    /// message for the caller and whether this failure began an outage (only that is worth a
    /// warning: one outage, one line in the log).
    pub fn trip(&self, endpoint: &str, cause: &str, now: Instant) -> (String, bool) {
        let mut outages = self.outages.lock().unwrap_or_else(PoisonError::into_inner);
        let outage = Outage {
            cause: cause.to_string(),
            until: now + OPEN_FOR,
        };
        let began = outages.insert(endpoint.to_string(), outage).is_none();
        (unreachable_message(endpoint, cause, OPEN_FOR), began)
    }

    /// Records that a call reached `endpoint`; returns whether that ended an outage.
    pub fn reset(&self, endpoint: &str) -> bool {
        let mut outages = self.outages.lock().unwrap_or_else(PoisonError::into_inner);
        outages.remove(endpoint).is_some()
    }
}

fn unreachable_message(endpoint: &str, cause: &str, left: Duration) -> String {
    // Rounded up, so the last second of a window does not read "0 s".
    let seconds = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    format!("{endpoint} is unreachable ({cause}); not tried again for {seconds} s")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENDPOINT: &str = "http://127.0.0.1:9/v1";

    #[test]
    fn stays_open_for_its_window_and_warns_once_per_outage() {
        let breakers = Breakers::default();
        let start = Instant::now();
        assert_eq!(breakers.check(ENDPOINT, start), Ok(()));

        let (message, began) = breakers.trip(ENDPOINT, "connection refused", start);
        assert!(began);
        assert_eq!(
            message,
            "http://127.0.0.1:9/v1 is unreachable (connection refused); not tried again for 30 s"
        );
        let later = start + Duration::from_millis(12_500);
        let refused = breakers.check(ENDPOINT, later).unwrap_err();
        assert!(refused.ends_with("not tried again for 18 s"), "{refused}");
        assert_eq!(breakers.check("http://127.0.0.1:10/v1", later), Ok(()));

        // Once the window is over the endpoint is tried again; failing again is the same
        // outage, which has been logged already.
        let after = start + OPEN_FOR;
        assert_eq!(breakers.check(ENDPOINT, after), Ok(()));
        assert!(!breakers.trip(ENDPOINT, "connection refused", after).1);
        assert!(breakers.check(ENDPOINT, after).is_err());

        // A call that gets through ends it; the next failure begins a new one.
        assert!(breakers.reset(ENDPOINT));
        assert!(!breakers.reset(ENDPOINT));
        assert_eq!(breakers.check(ENDPOINT, after), Ok(()));
        assert!(breakers.trip(ENDPOINT, "dns error", after).1);
    }
}
