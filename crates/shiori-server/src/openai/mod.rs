//! The OpenAI-compatible face under `/v1`: models (one per answer pipeline), chat completions
//! and legacy completions answered by the same `Engine::answer` as every other surface, and
//! embeddings from the configured embedder. Errors keep the server's `{"error": {...}}` body, which carries OpenAI's
//! `message`, `type` and `code`.

mod chat;
mod completions;
mod embeddings;

pub use chat::chat_completions;
pub use completions::completions;
pub use embeddings::embeddings;

use crate::error::ApiError;
use axum::Json;
use serde_json::{json, Value};
use shiori_engine::PipelineKind;
use std::time::{SystemTime, UNIX_EPOCH};

/// The model name of the configured default pipeline; `shiori-NAME` picks pipeline `NAME`.
const DEFAULT_MODEL: &str = "shiori";
const MODEL_PREFIX: &str = "shiori-";

/// `GET /v1/models`: `shiori` (the configured default pipeline), then `shiori-NAME` per pipeline.
pub async fn models() -> Json<Value> {
    let created = unix_now();
    let names = std::iter::once(DEFAULT_MODEL.to_string()).chain(
        PipelineKind::ALL
            .iter()
            .map(|kind| format!("{MODEL_PREFIX}{}", kind.name())),
    );
    let data: Vec<Value> = names
        .map(|id| json!({"id": id, "object": "model", "created": created, "owned_by": "shiori"}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

/// The pipeline a model name stands for: `None` for the configured default.
fn pipeline_of(model: &str) -> Result<Option<PipelineKind>, ApiError> {
    if model == DEFAULT_MODEL {
        return Ok(None);
    }
    model
        .strip_prefix(MODEL_PREFIX)
        .and_then(|name| name.parse().ok())
        .map(Some)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "model: no model {model:?}; GET /v1/models lists them (shiori, shiori-PIPELINE)"
            ))
        })
}

/// Whether `value` is what OpenAI's APIs accept as pre-tokenised text: an array of token ids, or
/// an array of such arrays.
fn is_token_ids(value: &Value) -> bool {
    let ids = |value: &Value| {
        value
            .as_array()
            .is_some_and(|items| !items.is_empty() && items.iter().all(Value::is_u64))
    };
    ids(value)
        || value
            .as_array()
            .is_some_and(|items| !items.is_empty() && items.iter().all(ids))
}

/// Token ids mean another model's tokenizer, so Shiori reads text only.
fn token_ids_unsupported(param: &'static str) -> ApiError {
    ApiError::InvalidParameter {
        param,
        message: "token-id input is not supported; send the text itself (a string or an array \
                  of strings)"
            .into(),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ids_are_arrays_of_integers_or_of_such_arrays() {
        for ids in [json!([1, 2, 3]), json!([[1, 2], [3]])] {
            assert!(is_token_ids(&ids), "{ids}");
        }
        for text in [
            json!("a"),
            json!(["a"]),
            json!([]),
            json!([[]]),
            json!([1.5]),
            json!([1, "a"]),
            json!([[1], "a"]),
        ] {
            assert!(!is_token_ids(&text), "{text}");
        }
    }

    #[test]
    fn token_ids_are_refused_naming_the_field() {
        let body = token_ids_unsupported("input").body();
        assert_eq!(body["error"]["param"], "input");
        assert_eq!(body["error"]["type"], "invalid_request_error");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("token-id input is not supported"),
            "{message}"
        );
    }

    #[test]
    fn model_names_pick_pipelines() {
        assert_eq!(pipeline_of("shiori").unwrap(), None);
        assert_eq!(
            pipeline_of("shiori-crag").unwrap(),
            Some(PipelineKind::Crag)
        );
        for unknown in ["gpt-4o", "shiori-telepathy", "shiori-"] {
            assert_eq!(pipeline_of(unknown).unwrap_err().status(), 404, "{unknown}");
        }
    }
}
