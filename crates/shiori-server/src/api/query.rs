//! `POST /api/query`: transport only. The request becomes the engine's typed query, is checked
//! by the engine's `check_query` and answered by `Engine::answer`, the path the CLI takes.

use crate::answering::{self, AnswerJob, Streamed};
use crate::error::ApiError;
use crate::json::ApiJson;
use crate::state::SharedState;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use serde::Deserialize;
use shiori_core::{ConversationId, Filters, Refusal, RetrievalMode};
use shiori_engine::{AnswerEvent, AskOptions, PipelineKind, Question, Reader, RetrievalOverrides};
use std::convert::Infallible;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;

/// The body of `POST /api/query`; what it leaves out comes from `shiori.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryRequest {
    pub question: String,
    pub pipeline: Option<PipelineKind>,
    pub top_k: Option<usize>,
    /// `balanced`, `answer_rate:R` or `cosine:T`.
    pub refusal: Option<Refusal>,
    /// A cosine cut, the same as `refusal: "cosine:T"`.
    pub threshold: Option<f32>,
    #[serde(default)]
    pub filters: Filters,
    pub mode: Option<RetrievalMode>,
    /// Overrides `[retrieval] two_stage` (it applies with `filters.projects`).
    pub two_stage: Option<bool>,
    /// Reorder retrieved chunks with the configured LLM reranker (`--rerank`).
    #[serde(default)]
    pub rerank: bool,
    /// Ask as the next turn of this conversation (from `POST /api/conversations`); without it
    /// the question stands alone.
    pub conversation_id: Option<ConversationId>,
}

impl QueryRequest {
    /// What this request changes of `[retrieval]`.
    pub fn overrides(&self) -> RetrievalOverrides {
        RetrievalOverrides {
            top_k: self.top_k,
            refusal: self.refusal,
            threshold: self.threshold,
            mode: self.mode,
            two_stage: self.two_stage,
            ..RetrievalOverrides::default()
        }
    }
}

/// `POST /api/query`: the [`Answer`](shiori_core::Answer) as JSON by default; with
/// `Accept: text/event-stream`, `step` events as steps end, `token` events as the answer is
/// generated, and finally `done` (the checked answer) or `error`. A client that hangs up, or the
/// request time limit, stops the answer (and the model's generation) at its next step or token.
pub async fn query(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<QueryRequest>,
) -> Result<Response, ApiError> {
    let engine = state.engine();
    let job = AnswerJob {
        retrieval: engine.retrieval(&request.overrides())?,
        question: Question::new(request.question)?,
        engine,
        filters: request.filters,
        options: AskOptions {
            pipeline: request.pipeline,
            rerank: request.rerank,
            conversation: request.conversation_id,
            ..AskOptions::default()
        },
        reader,
    };
    if !wants_stream(&headers) {
        return Ok(Json(answering::answer(&state, job).await?).into_response());
    }
    let receiver = answering::answer_streamed(&state, job).await?;
    let stream = ReceiverStream::new(receiver).map(|streamed| {
        Ok::<_, Infallible>(match streamed {
            Streamed::Event(event) => stream_event(event),
            Streamed::Done(answer) => json_event("done", &answer),
            Streamed::Failed(error) => json_event("error", &error.body()),
        })
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("text/event-stream"))
}

fn stream_event(event: AnswerEvent) -> Event {
    match event {
        AnswerEvent::Step(step) => json_event("step", &step),
        AnswerEvent::Token(text) => json_event("token", &serde_json::json!({ "text": text })),
    }
}

fn json_event(name: &str, value: &impl serde::Serialize) -> Event {
    Event::default()
        .event(name)
        .data(serde_json::to_string(value).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: serde_json::Value) -> Result<QueryRequest, serde_json::Error> {
        serde_json::from_value(json)
    }

    #[test]
    fn translates_its_settings_into_overrides_and_rejects_unknown_fields() {
        let ok = request(serde_json::json!({"question": "vpn?", "top_k": 3, "mode": "bm25"}))
            .unwrap()
            .overrides();
        assert_eq!((ok.top_k, ok.mode), (Some(3), Some(RetrievalMode::Bm25)));
        assert_eq!(ok.refusal, None);
        let cosine = request(serde_json::json!({"question": "q", "threshold": 0.8})).unwrap();
        assert_eq!(cosine.overrides().threshold, Some(0.8));
        let target = request(serde_json::json!({"question": "q", "refusal": "answer_rate:0.9"}));
        assert_eq!(
            target.unwrap().overrides().refusal,
            Some(Refusal::AnswerRate(0.9))
        );
        let bad = request(serde_json::json!({"question": "q", "refusal": "strict"}));
        assert!(bad.unwrap_err().to_string().contains("answer_rate:R"));
        assert!(request(serde_json::json!({"question": "q", "topk": 3})).is_err());
        let crag = request(serde_json::json!({"question": "q", "pipeline": "crag"})).unwrap();
        assert_eq!(crag.pipeline, Some(PipelineKind::Crag));
        let error = request(serde_json::json!({"question": "q", "pipeline": "telepathy"}))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("expected one of: extractive, basic"),
            "{error}"
        );
    }
}
