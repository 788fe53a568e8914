//! The HTTP layer every client shares: one blocking client, errors sorted into transient,
//! permanent, unreachable and context-too-long, retries, the breaker of an unreachable server,
//! and reading server-sent events line by line.

use crate::breaker::Breakers;
use crate::retry::{parse_retry_after, RetryPolicy, Retryable};
use reqwest::blocking::{Client, RequestBuilder, Response};
use reqwest::StatusCode;
use shiori_core::{ChatError, EmbedError, TokenReceiver, Usage, WebSearchError};
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant, SystemTime};
use thiserror::Error;

/// Where a provider lives and how patiently to talk to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// E.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`, `https://api.anthropic.com`.
    pub base_url: String,
    /// Read from the environment by the caller; never stored on disk.
    pub api_key: Option<String>,
    /// The environment variable `api_key` was read from (or would have been), named when the
    /// provider refuses the request, so the user knows which key to fix.
    pub api_key_env: Option<String>,
    pub timeout: Duration,
    pub retry: RetryPolicy,
}

impl Endpoint {
    pub fn new(base_url: impl Into<String>) -> Endpoint {
        Endpoint {
            base_url: base_url.into(),
            api_key: None,
            api_key_env: None,
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
        }
    }

    pub fn with_api_key(mut self, api_key: Option<String>) -> Endpoint {
        self.api_key = api_key;
        self
    }

    pub fn with_api_key_env(mut self, variable: impl Into<String>) -> Endpoint {
        self.api_key_env = Some(variable.into());
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Endpoint {
        self.retry = retry;
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Endpoint {
        self.timeout = timeout;
        self
    }

    /// `base_url` joined with `path` (which starts with `/`).
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url.trim_end_matches('/'))
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum FailureKind {
    Transient {
        retry_after: Option<Duration>,
    },
    Permanent,
    /// No connection could be made (refused, no such host, connect timeout): retrying at once
    /// cannot help, and the endpoint's breaker opens.
    Unreachable,
    ContextTooLong,
    /// The caller's token sink broke off a stream.
    Cancelled,
}

/// A failed HTTP exchange, sorted by what retrying can do.
#[derive(Debug, Clone, Error)]
#[error("{message}")]
pub(crate) struct HttpError {
    pub provider: &'static str,
    pub kind: FailureKind,
    pub message: String,
}

impl HttpError {
    pub fn permanent(provider: &'static str, message: impl Into<String>) -> HttpError {
        HttpError {
            provider,
            kind: FailureKind::Permanent,
            message: message.into(),
        }
    }

    pub fn cancelled(provider: &'static str) -> HttpError {
        HttpError {
            provider,
            kind: FailureKind::Cancelled,
            message: "cancelled by the caller".to_string(),
        }
    }
}

/// Passes `text` to `sink`; an error once the sink breaks off, which ends the stream and drops
/// the connection.
pub(crate) fn forward(
    provider: &'static str,
    sink: &mut dyn TokenReceiver,
    text: &str,
) -> Result<(), HttpError> {
    match sink.token(text) {
        std::ops::ControlFlow::Continue(()) => Ok(()),
        std::ops::ControlFlow::Break(()) => Err(HttpError::cancelled(provider)),
    }
}

impl Retryable for HttpError {
    fn transient(&self) -> Option<Option<Duration>> {
        match self.kind {
            FailureKind::Transient { retry_after } => Some(retry_after),
            _ => None,
        }
    }
}

impl From<HttpError> for ChatError {
    fn from(error: HttpError) -> ChatError {
        let provider = error.provider.to_string();
        let message = error.message;
        match error.kind {
            FailureKind::Transient { retry_after } => ChatError::Transient {
                provider,
                message,
                retry_after,
            },
            // The server may be back later: that is what a caller's retry would wait for.
            FailureKind::Unreachable => ChatError::Transient {
                provider,
                message,
                retry_after: None,
            },
            FailureKind::Permanent => ChatError::Permanent { provider, message },
            FailureKind::ContextTooLong => ChatError::ContextTooLong { provider, message },
            FailureKind::Cancelled => ChatError::Cancelled {
                provider,
                usage: Usage::default(),
            },
        }
    }
}

impl From<HttpError> for WebSearchError {
    fn from(error: HttpError) -> WebSearchError {
        let provider = error.provider.to_string();
        let message = error.message;
        match error.kind {
            FailureKind::Transient { retry_after } => WebSearchError::Transient {
                provider,
                message,
                retry_after,
            },
            FailureKind::Unreachable => WebSearchError::Transient {
                provider,
                message,
                retry_after: None,
            },
            _ => WebSearchError::Permanent { provider, message },
        }
    }
}

impl From<HttpError> for EmbedError {
    fn from(error: HttpError) -> EmbedError {
        EmbedError::inference(error.provider).because(error)
    }
}

/// Phrases providers use when a prompt exceeds the context window.
const CONTEXT_MARKERS: [&str; 5] = [
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "too many tokens",
    "exceeds the maximum number of tokens",
];

/// Sorts a non-success status into a failure kind.
pub(crate) fn classify(status: u16, retry_after: Option<Duration>, body: &str) -> FailureKind {
    let lower = body.to_lowercase();
    match status {
        408 | 409 | 425 | 429 | 500..=599 => FailureKind::Transient { retry_after },
        400 | 413 | 422 if CONTEXT_MARKERS.iter().any(|m| lower.contains(m)) => {
            FailureKind::ContextTooLong
        }
        _ => FailureKind::Permanent,
    }
}

/// A blocking client bound to one provider.
pub(crate) struct Http {
    client: Client,
    pub provider: &'static str,
    pub endpoint: Endpoint,
}

impl Http {
    pub fn new(provider: &'static str, endpoint: Endpoint) -> Result<Http, HttpError> {
        let client = Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(endpoint.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| {
                HttpError::permanent(provider, format!("cannot build the HTTP client: {e}"))
            })?;
        Ok(Http {
            client,
            provider,
            endpoint,
        })
    }

    /// Sends the request `build` makes (again on each retry) until a success status comes back.
    pub fn send(&self, build: impl Fn(&Client) -> RequestBuilder) -> Result<Response, HttpError> {
        self.guarded(|| {
            self.endpoint
                .retry
                .run(|| self.send_once(build(&self.client)))
        })
    }

    /// Sends and parses a JSON reply.
    pub fn json(
        &self,
        build: impl Fn(&Client) -> RequestBuilder,
    ) -> Result<serde_json::Value, HttpError> {
        self.guarded(|| {
            self.endpoint.retry.run(|| {
                let response = self.send_once(build(&self.client))?;
                response
                    .json::<serde_json::Value>()
                    .map_err(|e| self.transport(e))
            })
        })
    }

    /// Runs `call` unless the endpoint's breaker is open; a call that cannot connect opens it,
    /// one that reaches the server closes it.
    fn guarded<T>(&self, call: impl FnOnce() -> Result<T, HttpError>) -> Result<T, HttpError> {
        let breakers = Breakers::global();
        let endpoint = self.endpoint.base_url.trim_end_matches('/');
        breakers
            .check(endpoint, Instant::now())
            .map_err(|message| self.unreachable(message))?;
        match call() {
            Err(error) if error.kind == FailureKind::Unreachable => {
                let (message, began) = breakers.trip(endpoint, &error.message, Instant::now());
                match began {
                    true => tracing::warn!("{message}"),
                    false => tracing::debug!("{message}"),
                }
                Err(self.unreachable(message))
            }
            result => {
                if breakers.reset(endpoint) {
                    tracing::info!("{endpoint} is reachable again");
                }
                result
            }
        }
    }

    fn unreachable(&self, message: String) -> HttpError {
        HttpError {
            provider: self.provider,
            kind: FailureKind::Unreachable,
            message,
        }
    }

    fn send_once(&self, request: RequestBuilder) -> Result<Response, HttpError> {
        let response = request.send().map_err(|e| self.transport(e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, SystemTime::now()));
        let body = response.text().unwrap_or_default();
        let mut message = format!("HTTP {status}: {}", error_summary(&body));
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            message.push_str(&format!(" ({})", self.key_sent()));
        }
        Err(HttpError {
            provider: self.provider,
            kind: classify(status.as_u16(), retry_after, &body),
            message,
        })
    }

    /// Which key went with a refused request: a provider's "invalid key" names none.
    fn key_sent(&self) -> String {
        let endpoint = &self.endpoint;
        match (&endpoint.api_key, &endpoint.api_key_env) {
            (Some(_), Some(variable)) => format!("the key in {variable} was sent"),
            (Some(_), None) => "an API key was sent".to_string(),
            (None, Some(variable)) => format!("no API key was sent: {variable} is not set"),
            (None, None) => "no API key was sent".to_string(),
        }
    }

    fn transport(&self, error: reqwest::Error) -> HttpError {
        let (kind, message) = if error.is_connect() {
            // Only the cause is shown: the breaker's message names the endpoint.
            (FailureKind::Unreachable, root_cause(&error))
        } else if error.is_decode() || error.is_builder() || error.is_redirect() {
            (FailureKind::Permanent, error_chain(&error))
        } else {
            (
                FailureKind::Transient { retry_after: None },
                error_chain(&error),
            )
        };
        HttpError {
            provider: self.provider,
            kind,
            message,
        }
    }
}

/// The innermost cause of `error` (`connection refused (os error 111)`, `operation timed
/// out`), in lower case as it reads inside a sentence.
fn root_cause(error: &dyn std::error::Error) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    let text = cause.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// `error` followed by the errors that caused it (reqwest's "error sending request" leaves
/// "connection refused" to its sources); a cause an error's own message already ends with (as
/// `"{what}: {source}"` messages do) is not repeated.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

/// The provider's own error message when the body is JSON, else the body cut short.
fn error_summary(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        value
            .pointer("/error/message")
            .or_else(|| value.pointer("/message"))
            .or_else(|| value.get("error"))
            .and_then(|m| m.as_str().map(str::to_string))
    });
    let text = message.unwrap_or_else(|| body.to_string());
    text.chars().take(500).collect()
}

/// Calls `on_event` with the payload of every `data:` line of a server-sent-event stream, until
/// the stream ends or sends `[DONE]`.
pub(crate) fn read_sse(
    provider: &'static str,
    response: Response,
    mut on_event: impl FnMut(serde_json::Value) -> Result<(), HttpError>,
) -> Result<(), HttpError> {
    let reader = BufReader::new(response);
    for line in reader.lines() {
        let line = line.map_err(|e| HttpError {
            provider,
            kind: FailureKind::Transient { retry_after: None },
            message: format!("the stream broke off: {e}"),
        })?;
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            break;
        }
        if data.is_empty() {
            continue;
        }
        let event = serde_json::from_str(data).map_err(|e| {
            HttpError::permanent(provider, format!("unparsable stream event {data:?}: {e}"))
        })?;
        on_event(event)?;
    }
    Ok(())
}

/// A reply that lacks what the protocol promises.
pub(crate) fn malformed(
    provider: &'static str,
    what: &str,
    reply: &serde_json::Value,
) -> HttpError {
    let mut shown = reply.to_string();
    shown.truncate(300);
    HttpError::permanent(provider, format!("the reply has no {what}: {shown}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_statuses_by_what_a_retry_can_do() {
        let wait = Some(Duration::from_secs(2));
        assert_eq!(
            classify(429, wait, ""),
            FailureKind::Transient { retry_after: wait }
        );
        assert!(matches!(
            classify(503, None, ""),
            FailureKind::Transient { .. }
        ));
        assert!(matches!(
            classify(529, None, ""),
            FailureKind::Transient { .. }
        ));
        assert_eq!(classify(401, None, "bad key"), FailureKind::Permanent);
        assert_eq!(classify(400, None, "bad request"), FailureKind::Permanent);
        assert_eq!(
            classify(
                400,
                None,
                r#"{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 8192 tokens"}}"#
            ),
            FailureKind::ContextTooLong
        );
        assert_eq!(
            classify(
                400,
                None,
                "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            FailureKind::ContextTooLong
        );
    }

    #[test]
    fn summarises_provider_errors() {
        assert_eq!(
            error_summary(r#"{"error":{"message":"Invalid API key"}}"#),
            "Invalid API key"
        );
        assert_eq!(error_summary("plain text"), "plain text");
    }
}
