//! `POST /v1/embeddings`: the configured embedder over OpenAI's embeddings API, so other tools
//! can use it. Texts are embedded as passages (as the index embeds chunks) unless the request's
//! `input_type` extension says `query`.

use crate::error::ApiError;
use crate::json::ApiJson;
use crate::state::SharedState;
use axum::extract::State;
use axum::Json;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{json, Value};
use shiori_engine::EmbedAs;

/// The fields Shiori reads; others (`dimensions`, `user`) are ignored.
#[derive(Debug, Deserialize)]
pub struct EmbeddingsRequest {
    input: Input,
    model: Option<String>,
    #[serde(default)]
    encoding_format: EncodingFormat,
    /// Shiori's extension: `query` embeds the texts as search queries.
    #[serde(default)]
    input_type: EmbedAs,
}

/// `input` as sent; anything but text is kept whole so the error can say what was wrong.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Input {
    One(String),
    Many(Vec<String>),
    Other(Value),
}

impl Input {
    fn texts(self) -> Result<Vec<String>, ApiError> {
        match self {
            Input::One(text) => Ok(vec![text]),
            Input::Many(texts) => Ok(texts),
            Input::Other(value) if super::is_token_ids(&value) => {
                Err(super::token_ids_unsupported("input"))
            }
            Input::Other(_) => Err(ApiError::InvalidParameter {
                param: "input",
                message: "must be a string or an array of strings".into(),
            }),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum EncodingFormat {
    #[default]
    Float,
    Base64,
}

/// `POST /v1/embeddings`: one unit vector per input, in order.
pub async fn embeddings(
    State(state): State<SharedState>,
    ApiJson(request): ApiJson<EmbeddingsRequest>,
) -> Result<Json<Value>, ApiError> {
    let engine = state.engine();
    let texts = request.input.texts()?;
    let embed_as = request.input_type;
    // Embedding takes the cores an answer needs: it waits for a query slot as answers do.
    let permit = crate::admission::admit(&state).await?;
    let (vectors, tokens) = tokio::task::spawn_blocking({
        let engine = std::sync::Arc::clone(&engine);
        move || -> Result<_, ApiError> {
            let _permit = permit;
            let borrowed: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = engine.embed(&borrowed, embed_as)?;
            let tokens: usize = borrowed
                .iter()
                .map(|text| engine.embedder().count_tokens(text).unwrap_or(0))
                .sum();
            Ok((vectors, tokens))
        }
    })
    .await??;
    let data: Vec<Value> = vectors
        .iter()
        .enumerate()
        .map(|(index, vector)| {
            let embedding = match request.encoding_format {
                EncodingFormat::Float => json!(vector),
                EncodingFormat::Base64 => json!(little_endian_base64(vector)),
            };
            json!({"object": "embedding", "index": index, "embedding": embedding})
        })
        .collect();
    Ok(Json(json!({
        "object": "list",
        "data": data,
        "model": request.model.unwrap_or_else(|| engine.embedder().model_id().to_string()),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    })))
}

/// What OpenAI's `encoding_format: base64` sends: the f32s' little-endian bytes.
fn little_endian_base64(vector: &[f32]) -> String {
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_little_endian_f32() {
        let encoded = little_endian_base64(&[1.0, -0.5]);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(bytes, [0, 0, 128, 63, 0, 0, 0, 191]);
    }

    #[test]
    fn reads_one_or_many_inputs_and_rejects_other_encodings() {
        let one: EmbeddingsRequest = serde_json::from_value(json!({"input": "a"})).unwrap();
        assert!(matches!(one.input, Input::One(_)));
        let many: EmbeddingsRequest =
            serde_json::from_value(json!({"input": ["a", "b"], "input_type": "query"})).unwrap();
        assert!(matches!(many.input, Input::Many(ref texts) if texts.len() == 2));
        assert_eq!(many.input_type, EmbedAs::Query);
        let bad = json!({"input": "a", "encoding_format": "int8"});
        assert!(serde_json::from_value::<EmbeddingsRequest>(bad).is_err());
    }

    fn input_error(input: Value) -> Value {
        let request: EmbeddingsRequest = serde_json::from_value(json!({"input": input})).unwrap();
        let error = request.input.texts().unwrap_err();
        assert_eq!(error.status(), 400, "{input}");
        error.body()
    }

    #[test]
    fn token_ids_and_other_inputs_get_a_clear_error_naming_input() {
        for tokens in [json!([1, 2, 3]), json!([[1, 2, 3]])] {
            let body = input_error(tokens.clone());
            assert_eq!(body["error"]["param"], "input", "{tokens}");
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("token-id input is not supported"),
                "{message}"
            );
            assert!(message.contains("send the text"), "{message}");
        }
        let body = input_error(json!({"text": "a"}));
        assert_eq!(body["error"]["param"], "input");
        assert_eq!(
            body["error"]["message"],
            "input: must be a string or an array of strings"
        );
    }
}
