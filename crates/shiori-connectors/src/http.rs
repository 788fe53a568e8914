//! The HTTP the WebDAV and Drive connectors share: one client with bounded waits, requests
//! retried with backoff on 429 and 5xx (honouring `Retry-After`), bodies copied to a file with
//! a size limit.

use crate::ConnectorError;
use reqwest::blocking::{Client, RequestBuilder, Response};
use shiori_llm::{parse_retry_after, RetryPolicy, Retryable};
use std::io::{Read, Write};
use std::time::{Duration, Instant, SystemTime};

/// How long connecting, and then getting the response and each read of its body, may take (the
/// blocking client applies its timeout to each read, not to the whole body).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Slowest a body may come once its first [`READ_TIMEOUT`] is over: each read waiting less
/// than the read timeout, a server sending a byte at a time would otherwise hold a sync (and
/// the index's write lock) for as long as it liked.
const MIN_BYTES_PER_SEC: u64 = 8 * 1024;
/// Characters of an error body kept in the message.
const DETAIL_CHARS: usize = 200;

/// Redirects followed for one request, all on the requested server.
const MAX_REDIRECTS: usize = 5;

pub(crate) fn client(what: &str) -> Result<Client, ConnectorError> {
    Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(READ_TIMEOUT)
        .redirect(same_server_redirects())
        .build()
        .map_err(|error| ConnectorError::transport(what, false, error))
}

/// Follows a redirect only to the scheme, host and port the operator wrote: the source's own
/// server may move a path, but may not send the sync (with its credentials' trust) to another
/// server, a loopback port or a cloud metadata address.
fn same_server_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.stop();
        };
        let same_server = |url: &url::Url| {
            (url.scheme(), url.host_str(), url.port_or_known_default())
                == (
                    first.scheme(),
                    first.host_str(),
                    first.port_or_known_default(),
                )
        };
        if !same_server(attempt.url()) {
            let refused = format!(
                "redirected from {} to another server ({}://{}); only redirects on the same \
                 scheme, host and port are followed",
                first.origin().ascii_serialization(),
                attempt.url().scheme(),
                attempt.url().host_str().unwrap_or("?"),
            );
            return attempt.error(refused);
        }
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        attempt.follow()
    })
}

/// Sends the request `build` makes (again on each retry) until a success status comes back.
pub(crate) fn send(
    what: &str,
    build: impl Fn() -> RequestBuilder,
) -> Result<Response, ConnectorError> {
    send_judging(what, build, |what, response| {
        status_error(what, response).into()
    })
}

/// [`send`] with the caller judging each failed response: a source may say "slow down" in a
/// status its number alone does not tell (Drive's 403 `rateLimitExceeded`).
pub(crate) fn send_judging(
    what: &str,
    build: impl Fn() -> RequestBuilder,
    judge: impl Fn(&str, Response) -> Refusal,
) -> Result<Response, ConnectorError> {
    RetryPolicy::default()
        .run(|| {
            let response = build().send().map_err(|error| {
                let transient = error.is_connect() || error.is_timeout() || error.is_request();
                Refusal::from(ConnectorError::transport(what, transient, error))
            })?;
            if response.status().is_success() {
                return Ok(response);
            }
            Err(judge(what, response))
        })
        .map_err(|refusal| refusal.error)
}

/// A failed try, and whether another may succeed where the error alone would not say so.
pub(crate) struct Refusal {
    pub(crate) error: ConnectorError,
    pub(crate) retry: bool,
}

impl From<ConnectorError> for Refusal {
    fn from(error: ConnectorError) -> Refusal {
        Refusal {
            error,
            retry: false,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl Retryable for Refusal {
    fn transient(&self) -> Option<Option<Duration>> {
        if self.retry {
            Some(None)
        } else {
            self.error.transient()
        }
    }
}

/// A response whose status is not a success.
pub(crate) fn status_error(what: &str, response: Response) -> ConnectorError {
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| parse_retry_after(value, SystemTime::now()));
    let body = response.text().unwrap_or_default();
    let detail: String = body.trim().chars().take(DETAIL_CHARS).collect();
    ConnectorError::Status {
        what: what.to_string(),
        status,
        retry_after,
        detail: if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        },
    }
}

/// Copies a response body to `into`, failing once more than `limit` bytes come (or the
/// `Content-Length` says they will) without reading the rest.
pub(crate) fn copy_limited(
    what: &str,
    mut response: Response,
    into: &mut dyn Write,
    limit: u64,
) -> Result<u64, ConnectorError> {
    if let Some(length) = response.content_length().filter(|&length| length > limit) {
        return Err(ConnectorError::too_large(what, limit, Some(length)));
    }
    let mut paced = Paced::new(&mut response, READ_TIMEOUT, MIN_BYTES_PER_SEC);
    copy_stream(what, &mut paced, into, limit)
}

/// A body read at no less than a minimum pace: past `grace`, a read fails (`TimedOut`) once
/// fewer than `min_bytes_per_sec` bytes a second have come on average beyond it.
pub(crate) struct Paced<R> {
    inner: R,
    started: Instant,
    received: u64,
    grace: Duration,
    min_bytes_per_sec: u64,
}

impl<R: Read> Paced<R> {
    pub(crate) fn new(inner: R, grace: Duration, min_bytes_per_sec: u64) -> Paced<R> {
        Paced {
            inner,
            started: Instant::now(),
            received: 0,
            grace,
            min_bytes_per_sec,
        }
    }

    /// For a listing: the pace every connector body keeps.
    pub(crate) fn body(inner: R) -> Paced<R> {
        Paced::new(inner, READ_TIMEOUT, MIN_BYTES_PER_SEC)
    }
}

impl<R: Read> Read for Paced<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let earned = Duration::from_secs_f64(self.received as f64 / self.min_bytes_per_sec as f64);
        if self.started.elapsed() > self.grace + earned {
            let message = format!(
                "the body came slower than {} KiB/s ({} bytes in {:.0} s)",
                self.min_bytes_per_sec / 1024,
                self.received,
                self.started.elapsed().as_secs_f64()
            );
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, message));
        }
        let read = self.inner.read(buffer)?;
        self.received += read as u64;
        Ok(read)
    }
}

/// Copies at most `limit` bytes of `from` to `into`; more is [`ConnectorError::TooLarge`].
pub(crate) fn copy_stream(
    what: &str,
    from: &mut dyn Read,
    into: &mut dyn Write,
    limit: u64,
) -> Result<u64, ConnectorError> {
    let mut bounded = from.take(limit.saturating_add(1));
    let copied = std::io::copy(&mut bounded, into).map_err(|error| {
        let transient = error.kind() != std::io::ErrorKind::StorageFull;
        ConnectorError::transport(what, transient, error)
    })?;
    if copied > limit {
        return Err(ConnectorError::too_large(what, limit, None));
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends one byte per read, each after `delay`.
    struct Trickle {
        delay: Duration,
    }

    impl Read for Trickle {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(self.delay);
            buffer[0] = b'x';
            Ok(1)
        }
    }

    #[test]
    fn a_body_that_trickles_fails_once_past_its_grace() {
        let trickle = Trickle {
            delay: Duration::from_millis(20),
        };
        let mut paced = Paced::new(trickle, Duration::from_millis(300), 1024);
        let mut out = Vec::new();
        let error = copy_stream("slow.txt", &mut paced, &mut out, 1 << 20).unwrap_err();
        assert!(error.to_string().contains("slower than 1 KiB/s"), "{error}");
        assert!(out.len() < 100, "{} bytes", out.len());
    }

    #[test]
    fn a_stream_past_the_limit_fails_without_reading_it_all() {
        let mut big = std::io::repeat(7).take(10_000_000);
        let mut out = Vec::new();
        let error = copy_stream("big.bin", &mut big, &mut out, 1000).unwrap_err();
        assert!(matches!(error, ConnectorError::TooLarge { .. }), "{error}");
        assert!(out.len() <= 1001);
        let mut small = std::io::repeat(7).take(1000);
        assert_eq!(
            copy_stream("x", &mut small, &mut Vec::new(), 1000).unwrap(),
            1000
        );
    }
}
