//! The OpenAI-compatible face under `/v1`: models (one per answer pipeline), chat completions
//! answered by the same `Engine::answer` as every other surface, and embeddings from the
//! configured embedder. Errors keep the server's `{"error": {...}}` body, which carries OpenAI's
//! `message`, `type` and `code`.

mod chat;
mod embeddings;

pub use chat::chat_completions;
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

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

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
