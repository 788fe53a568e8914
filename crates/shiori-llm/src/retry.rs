//! Retries with exponential backoff and jitter, honouring the provider's `Retry-After`.

use std::time::{Duration, SystemTime};

/// How often and how patiently transient failures are retried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; each further one doubles, before jitter.
    pub base_delay: Duration,
    /// No wait is longer than this, whatever the provider asks.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): what the provider asked for, otherwise
    /// `base * 2^retry` scaled by a random factor in [0.5, 1) so that clients spread out.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let wait = match retry_after {
            Some(asked) => asked,
            None => {
                let exponential = self
                    .base_delay
                    .saturating_mul(1u32.checked_shl(retry).unwrap_or(u32::MAX));
                exponential
                    .min(self.max_delay)
                    .mul_f64(0.5 + fastrand::f64() / 2.0)
            }
        };
        wait.min(self.max_delay)
    }

    /// Runs `attempt` until it succeeds, fails for good, or the retries run out.
    pub fn run<T, E: Retryable>(&self, mut attempt: impl FnMut() -> Result<T, E>) -> Result<T, E> {
        let mut retry = 0;
        loop {
            match attempt() {
                Err(error) if retry < self.max_retries => match error.transient() {
                    Some(retry_after) => {
                        let wait = self.delay(retry, retry_after);
                        tracing::warn!("{error}; retrying in {} ms", wait.as_millis());
                        std::thread::sleep(wait);
                        retry += 1;
                    }
                    None => return Err(error),
                },
                result => return result,
            }
        }
    }
}

/// An error that may be worth retrying.
pub trait Retryable: std::fmt::Display {
    /// `Some(retry_after)` when retrying may help, with the wait the provider asked for.
    fn transient(&self) -> Option<Option<Duration>>;
}

/// Reads a `Retry-After` value: delay seconds or an HTTP date (a date in the past means now).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_off_exponentially_with_jitter_and_a_cap() {
        let policy = RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
        };
        for _ in 0..50 {
            let first = policy.delay(0, None);
            assert!(first >= Duration::from_millis(50) && first < Duration::from_millis(100));
            let third = policy.delay(2, None);
            assert!(third >= Duration::from_millis(175) && third < Duration::from_millis(350));
            assert!(policy.delay(30, None) <= Duration::from_millis(350));
        }
        assert_eq!(
            policy.delay(0, Some(Duration::from_millis(200))),
            Duration::from_millis(200)
        );
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(60))),
            Duration::from_millis(350)
        );
    }

    #[test]
    fn parses_retry_after_seconds_and_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }
}
