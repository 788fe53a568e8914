//! Helpers shared by the unit tests.

use crate::{Endpoint, RetryPolicy};
use std::time::Duration;

/// Retries that keep tests fast: 10 ms, 20 ms, 40 ms.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(2),
    }
}

pub fn endpoint(url: &str) -> Endpoint {
    Endpoint::new(url)
        .with_api_key(Some("test-key".to_string()))
        .with_retry(fast_retry())
        .with_timeout(Duration::from_secs(5))
}
