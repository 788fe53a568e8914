//! Admission control for queries: a bounded number compute at once (the query slots) and a
//! bounded number wait for a slot; past that, a query is answered 503 with `Retry-After` at
//! once. Shedding early keeps the latency of the admitted queries bounded when the machine is
//! busy (a reindex, a burst), instead of letting every client's wait grow with the queue.

use crate::error::ApiError;
use crate::state::AppState;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::OwnedSemaphorePermit;

/// Seconds a shed client is told to wait before it retries.
const RETRY_AFTER_SECS: u64 = 1;

/// A query slot, or [`ApiError::Overloaded`] when too many queries already wait for one.
pub async fn admit(state: &AppState) -> Result<OwnedSemaphorePermit, ApiError> {
    if let Ok(permit) = state.query_slots.clone().try_acquire_owned() {
        return Ok(permit);
    }
    let Some(waiting) = Waiting::enter(&state.queued, state.options.max_queued_queries) else {
        return Err(ApiError::Overloaded {
            retry_after_secs: RETRY_AFTER_SECS,
        });
    };
    let permit = state
        .query_slots
        .clone()
        .acquire_owned()
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    drop(waiting);
    Ok(permit)
}

/// One place in the waiting line, given back on drop (also when the client hangs up first).
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn enter(queued: &'a AtomicUsize, limit: usize) -> Option<Waiting<'a>> {
        let ahead = queued.fetch_add(1, Ordering::AcqRel);
        let waiting = Waiting(queued);
        (ahead < limit).then_some(waiting)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_holds_at_most_its_limit_and_frees_places_on_drop() {
        let queued = AtomicUsize::new(0);
        let first = Waiting::enter(&queued, 2);
        let second = Waiting::enter(&queued, 2);
        assert!(first.is_some() && second.is_some());
        assert!(Waiting::enter(&queued, 2).is_none());
        assert_eq!(
            queued.load(Ordering::Acquire),
            2,
            "a refused entry leaves no trace"
        );
        drop(first);
        assert!(Waiting::enter(&queued, 2).is_some());
        drop(second);
        assert_eq!(queued.load(Ordering::Acquire), 0);
    }
}
