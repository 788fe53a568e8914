use crate::error::ApiError;
use crate::state::SharedState;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use serde::de::DeserializeOwned;

/// A JSON body whose every failure is an [`ApiError`] with a clear message: not JSON (400),
/// the wrong shape or unknown fields (422), the wrong content type (415), too large (413).
/// An empty body reads as `{}`, so endpoints whose fields are all optional need no body.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned> FromRequest<SharedState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &SharedState) -> Result<Self, ApiError> {
        let is_json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| {
                let mime = value.split(';').next().unwrap_or("").trim();
                mime.eq_ignore_ascii_case("application/json")
            });
        let has_content_type = request.headers().contains_key(header::CONTENT_TYPE);
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::PayloadTooLarge {
                        limit_bytes: state.options.body_limit_bytes,
                    }
                } else {
                    ApiError::BadRequest(rejection.body_text())
                }
            })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return parse(b"{}").map(ApiJson);
        }
        if has_content_type && !is_json {
            return Err(ApiError::UnsupportedMediaType("application/json".into()));
        }
        parse(&bytes).map(ApiJson)
    }
}

fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|error| match error.classify() {
        serde_json::error::Category::Data => ApiError::InvalidBody(error.to_string()),
        _ => ApiError::MalformedJson(error.to_string()),
    })
}
