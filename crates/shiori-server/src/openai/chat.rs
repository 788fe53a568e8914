//! `POST /v1/chat/completions`: the last user message is the question; the answer's text (with
//! its `[n]` markers) is the message content, and its sources, citations and refusal travel in
//! the `shiori` extension of the message (whole) or of the last chunk (streamed). `/v1/completions`
//! answers through the same code in the legacy `text_completion` shape ([`Shape::Text`]).

use super::{pipeline_of, unix_now};
use crate::answering::{self, AnswerJob, Streamed};
use crate::error::ApiError;
use crate::json::ApiJson;
use crate::state::SharedState;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};
use shiori_core::{Answer, Filters, Turn, Usage};
use shiori_engine::{AnswerEvent, AskOptions, Engine, Question, Reader};
use std::convert::Infallible;
use tokio_stream::wrappers::ReceiverStream;

/// The fields Shiori reads; any other OpenAI field (temperature, max_tokens, …) is ignored, as
/// OpenAI-compatible servers do.
#[derive(Debug, Deserialize)]
pub struct ChatRequest {
    model: String,
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    stream_options: StreamOptions,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct StreamOptions {
    #[serde(default)]
    pub(super) include_usage: bool,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Content,
}

/// A message's content: a string, or parts of which only text can be read.
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
    #[default]
    Missing,
}

#[derive(Debug, Deserialize)]
struct ContentPart {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: String,
}

impl Content {
    fn text(&self, index: usize) -> Result<String, ApiError> {
        match self {
            Content::Text(text) => Ok(text.clone()),
            Content::Missing => Ok(String::new()),
            Content::Parts(parts) => parts
                .iter()
                .map(|part| match part.kind.as_str() {
                    "text" => Ok(part.text.as_str()),
                    other => Err(ApiError::BadRequest(format!(
                        "messages[{index}].content: only text parts can be read, not {other:?}"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|texts| texts.join("\n")),
        }
    }
}

impl ChatRequest {
    /// The question: the text of the last message, which must be the user's.
    fn question(&self) -> Result<String, ApiError> {
        let Some((index, last)) = self.messages.iter().enumerate().next_back() else {
            return Err(ApiError::BadRequest("messages: empty".into()));
        };
        if last.role != "user" {
            return Err(ApiError::BadRequest(format!(
                "messages[{index}].role: the last message must be the user's question, not {:?}",
                last.role
            )));
        }
        last.content.text(index)
    }

    /// The turns before the question: each user message with the assistant's reply after it
    /// (system messages and a user message left unanswered add nothing).
    fn history(&self) -> Result<Vec<Turn>, ApiError> {
        let earlier = &self.messages[..self.messages.len().saturating_sub(1)];
        let mut turns = Vec::new();
        let mut asked: Option<String> = None;
        for (index, message) in earlier.iter().enumerate() {
            match message.role.as_str() {
                "user" => asked = Some(message.content.text(index)?),
                "assistant" => {
                    if let Some(question) = asked.take() {
                        turns.push(Turn {
                            question,
                            answer: message.content.text(index)?,
                            refused: false,
                            sources: Vec::new(),
                            at_ms: 0,
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(turns)
    }
}

/// `POST /v1/chat/completions`, whole or (`stream: true`) as `chat.completion.chunk` events
/// ending with `[DONE]`.
pub async fn chat_completions(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    ApiJson(request): ApiJson<ChatRequest>,
) -> Result<Response, ApiError> {
    let pipeline = pipeline_of(&request.model)?;
    let engine = state.engine();
    let question = request.question()?;
    let job = AnswerJob {
        retrieval: engine.config.retrieval.clone(),
        question: Question::new(question.clone())?,
        engine: std::sync::Arc::clone(&engine),
        filters: Filters::default(),
        options: AskOptions {
            pipeline,
            history: request.history()?,
            ..AskOptions::default()
        },
        reader,
    };
    let completion = Completion::new(Shape::Chat, request.model.clone(), question);
    respond(
        &state,
        job,
        completion,
        request.stream,
        request.stream_options.include_usage,
    )
    .await
}

/// Answers `job` and sends the answer in `completion`'s shape, whole or streamed.
pub(super) async fn respond(
    state: &SharedState,
    job: AnswerJob,
    completion: Completion,
    stream: bool,
    include_usage: bool,
) -> Result<Response, ApiError> {
    let engine = std::sync::Arc::clone(&job.engine);
    if !stream {
        let answer = answering::answer(state, job).await?;
        return Ok(Json(completion.whole(&answer, &engine)).into_response());
    }
    let receiver = answering::answer_streamed(state, job).await?;
    let mut streamed_text = false;
    let role = completion.chunk(json!({"role": "assistant", "content": ""}), None);
    let head = futures_util::stream::iter([data(&role)]);
    let body = ReceiverStream::new(receiver).flat_map(move |streamed| {
        let events: Vec<Event> = match streamed {
            Streamed::Event(AnswerEvent::Token(text)) => {
                streamed_text = true;
                vec![data(&completion.chunk(json!({"content": text}), None))]
            }
            Streamed::Event(AnswerEvent::Step(_)) => Vec::new(),
            Streamed::Done(answer) => {
                completion.ending(&answer, &engine, streamed_text, include_usage)
            }
            Streamed::Failed(error) => vec![data(&error.body()), Event::default().data("[DONE]")],
        };
        futures_util::stream::iter(events)
    });
    let stream = head.chain(body).map(Ok::<_, Infallible>);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// Which OpenAI API a completion answers in: chat completions (messages and deltas) or the
/// legacy completions (`/v1/completions`, text only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Chat,
    Text,
}

/// What every object of one completion shares.
pub(super) struct Completion {
    shape: Shape,
    id: String,
    created: u64,
    model: String,
    question: String,
}

impl Completion {
    pub(super) fn new(shape: Shape, model: String, question: String) -> Self {
        let prefix = match shape {
            Shape::Chat => "chatcmpl",
            Shape::Text => "cmpl",
        };
        Completion {
            shape,
            id: format!("{prefix}-{:016x}", fastrand::u64(..)),
            created: unix_now(),
            model,
            question,
        }
    }

    fn whole(&self, answer: &Answer, engine: &Engine) -> Value {
        let (object, choice) = match self.shape {
            Shape::Chat => (
                "chat.completion",
                json!({
                    "index": 0,
                    "message": {"role": "assistant", "content": answer.answer, "shiori": extension(answer)},
                    "finish_reason": "stop",
                }),
            ),
            Shape::Text => (
                "text_completion",
                json!({
                    "index": 0,
                    "text": answer.answer,
                    "logprobs": null,
                    "finish_reason": "stop",
                    "shiori": extension(answer),
                }),
            ),
        };
        json!({
            "id": self.id,
            "object": object,
            "created": self.created,
            "model": self.model,
            "choices": [choice],
            "usage": self.usage(answer, engine),
        })
    }

    /// One streamed chunk carrying `delta` (a chat delta: `role`, `content`); the legacy shape
    /// has no deltas, so its chunk's `text` is the delta's `content`.
    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        let (object, choice) = match self.shape {
            Shape::Chat => (
                "chat.completion.chunk",
                json!({"index": 0, "delta": delta, "finish_reason": finish_reason}),
            ),
            Shape::Text => (
                "text_completion",
                json!({
                    "index": 0,
                    "text": delta["content"].as_str().unwrap_or_default(),
                    "logprobs": null,
                    "finish_reason": finish_reason,
                }),
            ),
        };
        json!({
            "id": self.id,
            "object": object,
            "created": self.created,
            "model": self.model,
            "choices": [choice],
        })
    }

    /// The last chunks: the answer's text if no token carried it (an extracted answer, a
    /// refusal), the stop chunk with the `shiori` extension, the usage, `[DONE]`.
    fn ending(
        &self,
        answer: &Answer,
        engine: &Engine,
        streamed_text: bool,
        include_usage: bool,
    ) -> Vec<Event> {
        let mut chunks = Vec::new();
        if !streamed_text {
            chunks.push(self.chunk(json!({"content": answer.answer}), None));
        }
        let mut last = self.chunk(json!({}), Some("stop"));
        last["shiori"] = extension(answer);
        chunks.push(last);
        if include_usage {
            let mut usage_chunk = self.chunk(json!({}), None);
            usage_chunk["choices"] = json!([]);
            usage_chunk["usage"] = self.usage(answer, engine);
            chunks.push(usage_chunk);
        }
        chunks
            .iter()
            .map(data)
            .chain(std::iter::once(Event::default().data("[DONE]")))
            .collect()
    }

    /// The chat model's tokens; when no chat model ran (an extracted answer), the question and
    /// answer counted by the embedder's tokenizer, so clients that meter usage see what was read.
    fn usage(&self, answer: &Answer, engine: &Engine) -> Value {
        let Usage {
            prompt_tokens,
            completion_tokens,
        } = if answer.usage.total() > 0 {
            answer.usage
        } else {
            let count = |text: &str| engine.embedder().count_tokens(text).unwrap_or(0) as u64;
            Usage {
                prompt_tokens: count(&self.question),
                completion_tokens: count(&answer.answer),
            }
        };
        json!({
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        })
    }
}

/// What Shiori adds to OpenAI's message: the checked answer, whether it is a refusal, the
/// numbered sources its `[n]` markers point at, and why it degraded, if it did.
fn extension(answer: &Answer) -> Value {
    let sources: Vec<Value> = answer
        .sources
        .iter()
        .enumerate()
        .map(|(index, source)| {
            let mut value = serde_json::to_value(source).unwrap_or_default();
            value["number"] = json!(index + 1);
            value
        })
        .collect();
    json!({
        "answer": answer.answer,
        "refused": answer.refused,
        "sources": sources,
        "citations": answer.citations,
        "degraded": answer.degraded,
        "pipeline": answer.trace.pipeline,
    })
}

fn data(value: &Value) -> Event {
    Event::default().data(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(value: Value) -> ChatRequest {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_question_is_the_last_user_message() {
        let chat = request(json!({"model": "shiori", "temperature": 0.2, "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "VPN?"}]},
        ]}));
        assert_eq!(chat.question().unwrap(), "VPN?");
        let last_is_assistant = request(json!({"model": "shiori", "messages": [
            {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
        ]}));
        let error = last_is_assistant.question().unwrap_err().to_string();
        assert!(error.starts_with("messages[1].role"), "{error}");
        let image = request(json!({"model": "shiori", "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
        ]}));
        assert!(image
            .question()
            .unwrap_err()
            .to_string()
            .contains("image_url"));
        let empty = request(json!({"model": "shiori", "messages": []}));
        assert_eq!(empty.question().unwrap_err().to_string(), "messages: empty");
    }

    #[test]
    fn earlier_messages_become_the_turns_before_the_question() {
        let chat = request(json!({"model": "shiori", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "Business plan rate limit?"},
            {"role": "assistant", "content": "600 per minute [1]."},
            {"role": "user", "content": "unanswered"},
            {"role": "user", "content": "And storage?"},
            {"role": "assistant", "content": "1 TB [1]."},
            {"role": "user", "content": "What about the Starter plan?"},
        ]}));
        let turns = chat.history().unwrap();
        let pairs: Vec<(&str, &str)> = turns
            .iter()
            .map(|turn| (turn.question.as_str(), turn.answer.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("Business plan rate limit?", "600 per minute [1]."),
                ("And storage?", "1 TB [1].")
            ]
        );
        assert_eq!(chat.question().unwrap(), "What about the Starter plan?");
    }
}
