use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use shiori_engine::EngineError;
use shiori_store::StoreError;
use thiserror::Error;

/// How long a client is asked to wait when the database cannot be reached: about the time a
/// standby takes to be promoted or a restarted server to accept connections.
const DATABASE_RETRY_AFTER_SECS: u64 = 5;

/// Everything a request can fail with; [`ApiError::status`] is the one place errors become
/// status codes, and every error leaves as `{"error": {"code", "message"}}`.
#[derive(Debug, Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    /// A bad field of an OpenAI request, named in the body's `param` as OpenAI's clients read it.
    #[error("{param}: {message}")]
    InvalidParameter {
        param: &'static str,
        message: String,
    },
    /// The body is not JSON at all.
    #[error("malformed JSON: {0}")]
    MalformedJson(String),
    /// The body is JSON but not the expected shape (unknown or mistyped fields).
    #[error("invalid request body: {0}")]
    InvalidBody(String),
    #[error("expected Content-Type: {0}")]
    UnsupportedMediaType(String),
    #[error("the request body is larger than the limit of {limit_bytes} bytes")]
    PayloadTooLarge { limit_bytes: usize },
    #[error("missing or wrong API key: send `Authorization: Bearer <key>`")]
    Unauthorized,
    /// A request another site's page could have sent through the visitor's browser.
    #[error("{0}")]
    Forbidden(String),
    /// A `Host` this server does not answer for (DNS rebinding, or a missing --allowed-host).
    #[error("this server does not answer for the host {0:?} (add it with --allowed-host)")]
    MisdirectedHost(String),
    #[error("{0}")]
    NotFound(String),
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("{0}")]
    Conflict(String),
    #[error("the request took longer than {seconds} s")]
    Timeout { seconds: u64 },
    /// Too many queries wait already: the client should retry after a pause.
    #[error("the server is busy: retry in {retry_after_secs} s")]
    Overloaded { retry_after_secs: u64 },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_)
            | ApiError::InvalidParameter { .. }
            | ApiError::MalformedJson(_) => StatusCode::BAD_REQUEST,
            ApiError::InvalidBody(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::MisdirectedHost(_) => StatusCode::MISDIRECTED_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Timeout { .. } | ApiError::Overloaded { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::Engine(EngineError::Invalid(_)) => StatusCode::BAD_REQUEST,
            ApiError::Engine(EngineError::UnknownConversation(_)) => StatusCode::NOT_FOUND,
            ApiError::Engine(EngineError::ConversationFull(_)) => StatusCode::CONFLICT,
            // Another process (`shiori index`) writes the index: retry when it is done.
            ApiError::Engine(EngineError::Store(StoreError::Busy { .. })) => StatusCode::CONFLICT,
            ApiError::Engine(error) if error.is_unavailable() => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Engine(_) | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) | ApiError::InvalidParameter { .. } => "bad_request",
            ApiError::MalformedJson(_) => "malformed_json",
            ApiError::InvalidBody(_) => "invalid_body",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::PayloadTooLarge { .. } => "payload_too_large",
            ApiError::Unauthorized => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::MisdirectedHost(_) => "misdirected_host",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed => "method_not_allowed",
            ApiError::Conflict(_) => "conflict",
            ApiError::Timeout { .. } => "timeout",
            ApiError::Overloaded { .. } => "overloaded",
            ApiError::Engine(EngineError::Invalid(_)) => "bad_request",
            ApiError::Engine(EngineError::UnknownConversation(_)) => "not_found",
            ApiError::Engine(EngineError::ConversationFull(_)) => "conversation_full",
            ApiError::Engine(EngineError::Store(StoreError::Busy { .. })) => "conflict",
            ApiError::Engine(error) if error.is_unavailable() => "database_unavailable",
            ApiError::Engine(_) => "engine_error",
            ApiError::Internal(_) => "internal",
        }
    }

    /// The kind of error in OpenAI's vocabulary, so OpenAI clients read this body too.
    pub fn kind(&self) -> &'static str {
        match self.status().as_u16() {
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            503 => "overloaded_error",
            500..=599 => "server_error",
            _ => "invalid_request_error",
        }
    }

    /// The JSON body every error response carries (also the `error` event of a stream):
    /// `code` and `message`, and `type` (and `param`, when one field is at fault) as OpenAI
    /// clients expect.
    pub fn body(&self) -> serde_json::Value {
        let message = match self {
            // The database's address and the driver's words are for the server's log.
            ApiError::Engine(error) if error.is_unavailable() => {
                format!("the database is unavailable; retry in {DATABASE_RETRY_AFTER_SECS} s")
            }
            // A message may quote the caller's words: every absolute path in it is cut alike.
            _ => shiori_engine::without_absolute_paths(&self.to_string()),
        };
        let mut body =
            json!({"error": {"code": self.code(), "message": message, "type": self.kind()}});
        if let ApiError::InvalidParameter { param, .. } = self {
            body["error"]["param"] = json!(param);
        }
        body
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!("{self}");
        }
        let mut response = (status, axum::Json(self.body())).into_response();
        match self {
            ApiError::Unauthorized => {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
            }
            ApiError::Overloaded { retry_after_secs } => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, retry_after_secs.into());
            }
            ApiError::Engine(error) if error.is_unavailable() => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, DATABASE_RETRY_AFTER_SECS.into());
            }
            _ => {}
        }
        response
    }
}

impl From<tokio::task::JoinError> for ApiError {
    fn from(error: tokio::task::JoinError) -> Self {
        ApiError::Internal(format!("a worker task failed: {error}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 48: a write refused because another process holds the index's writer lock (`shiori
    /// index --watch`) is a conflict to retry, not a server error.
    #[test]
    fn a_store_busy_with_another_writer_is_a_conflict() {
        let busy = ApiError::Engine(EngineError::Store(StoreError::Busy {
            path: "data".into(),
        }));
        assert_eq!(busy.status(), StatusCode::CONFLICT);
        assert_eq!(busy.code(), "conflict");
    }
}
