//! `POST /v1/completions`, OpenAI's legacy text completions (LlamaIndex's
//! `OpenAILike(is_chat_model=False)` speaks it): the prompt is the question, answered and sent
//! by the chat completions' code in the `text_completion` shape.

use super::chat::{self, Completion, Shape, StreamOptions};
use super::{pipeline_of, token_ids_unsupported};
use crate::answering::AnswerJob;
use crate::error::ApiError;
use crate::json::ApiJson;
use crate::state::SharedState;
use axum::extract::State;
use axum::response::Response;
use axum::Extension;
use serde::Deserialize;
use serde_json::Value;
use shiori_core::Filters;
use shiori_engine::{AskOptions, Question, Reader};

/// The fields Shiori reads; any other (max_tokens, temperature, suffix, echo, …) is ignored, as
/// OpenAI-compatible servers do.
#[derive(Debug, Deserialize)]
pub struct CompletionRequest {
    model: String,
    #[serde(default)]
    prompt: Value,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    stream_options: StreamOptions,
}

impl CompletionRequest {
    /// The question: `prompt` as a string, or an array holding one.
    fn question(&self) -> Result<String, ApiError> {
        match &self.prompt {
            Value::String(text) => Ok(text.clone()),
            Value::Array(items) => match items.as_slice() {
                [Value::String(text)] => Ok(text.clone()),
                _ if super::is_token_ids(&self.prompt) => Err(token_ids_unsupported("prompt")),
                [] => Err(ApiError::BadRequest("prompt: empty".into())),
                [_] => Err(ApiError::BadRequest(
                    "prompt: must be a string or an array of one string".into(),
                )),
                several => Err(ApiError::BadRequest(format!(
                    "prompt: one prompt per request, not {}; send each question on its own",
                    several.len()
                ))),
            },
            Value::Null => Err(ApiError::BadRequest(
                "prompt: missing; send the question as a string".into(),
            )),
            _ => Err(ApiError::BadRequest(
                "prompt: must be a string or an array of one string".into(),
            )),
        }
    }
}

/// `POST /v1/completions`, whole or (`stream: true`) as `text_completion` events ending with
/// `[DONE]`.
pub async fn completions(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    ApiJson(request): ApiJson<CompletionRequest>,
) -> Result<Response, ApiError> {
    let pipeline = pipeline_of(&request.model)?;
    let question = request.question()?;
    let engine = state.engine();
    let job = AnswerJob {
        retrieval: engine.config.retrieval.clone(),
        question: Question::new(question.clone())?,
        engine,
        filters: Filters::default(),
        options: AskOptions {
            pipeline,
            ..AskOptions::default()
        },
        reader,
    };
    let completion = Completion::new(Shape::Text, request.model.clone(), question);
    chat::respond(
        &state,
        job,
        completion,
        request.stream,
        request.stream_options.include_usage,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn question(prompt: Value) -> Result<String, ApiError> {
        let request: CompletionRequest =
            serde_json::from_value(json!({"model": "shiori", "prompt": prompt, "max_tokens": 16}))
                .unwrap();
        request.question()
    }

    #[test]
    fn the_prompt_is_the_question() {
        assert_eq!(question(json!("VPN?")).unwrap(), "VPN?");
        assert_eq!(question(json!(["VPN?"])).unwrap(), "VPN?");
    }

    #[test]
    fn other_prompts_are_refused_naming_the_field() {
        for (prompt, expected) in [
            (json!(["a", "b"]), "one prompt per request, not 2"),
            (json!([]), "prompt: empty"),
            (json!([1, 2, 3]), "token-id input is not supported"),
            (json!([[1, 2, 3]]), "token-id input is not supported"),
            (json!(null), "prompt: missing"),
            (json!(7), "must be a string"),
            (json!([{"text": "a"}]), "must be a string"),
        ] {
            let error = question(prompt.clone()).unwrap_err().to_string();
            assert!(error.starts_with("prompt"), "{prompt}: {error}");
            assert!(error.contains(expected), "{prompt}: {error}");
        }
    }
}
