use crate::error::ApiError;
use crate::json::ApiJson;
use crate::pipeline::{PipelineEvent, PipelineQuery, QueryRequest, QueryResponse};
use crate::state::SharedState;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::convert::Infallible;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;

/// Events buffered between the pipeline thread and a slow client.
const STREAM_BUFFER: usize = 64;

/// `POST /api/query`: JSON by default; with `Accept: text/event-stream`, the events `step`,
/// `token` and finally `done` (the whole response) or `error`.
pub async fn query(
    State(state): State<SharedState>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<QueryRequest>,
) -> Result<Response, ApiError> {
    let engine = state.engine();
    let retrieval = request.retrieval(&engine.config.retrieval)?;
    let pipeline = state.pipelines.get(request.pipeline.as_deref())?;
    // Latency counts from arrival, so time spent waiting for a slot is in the histogram.
    let started = Instant::now();
    let permit = crate::admission::admit(&state).await?;
    let run = move |events: &mut dyn FnMut(PipelineEvent)| {
        let _permit = permit;
        let query = PipelineQuery {
            question: &request.question,
            retrieval,
            filters: &request.filters,
        };
        pipeline.run(&engine, &query, events)
    };

    if !wants_stream(&headers) {
        let response = tokio::task::spawn_blocking(move || run(&mut |_| {})).await??;
        state.metrics.record_query(started.elapsed().as_secs_f64());
        return Ok(Json(response).into_response());
    }

    let (sender, receiver) = mpsc::channel::<Event>(STREAM_BUFFER);
    tokio::task::spawn_blocking(move || {
        // A client that hung up only stops the stream; the run itself is cheap to finish.
        let send = |event: Event| {
            let _ = sender.blocking_send(event);
        };
        let outcome = run(&mut |event| send(pipeline_event(event)));
        state.metrics.record_query(started.elapsed().as_secs_f64());
        send(match outcome {
            Ok(response) => done_event(&response),
            Err(error) => {
                let error = ApiError::from(error);
                Event::default()
                    .event("error")
                    .data(error.body().to_string())
            }
        });
    });
    let stream = ReceiverStream::new(receiver).map(Ok::<_, Infallible>);
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

fn pipeline_event(event: PipelineEvent) -> Event {
    match event {
        PipelineEvent::Step(step) => Event::default()
            .event("step")
            .data(serde_json::to_string(&step).unwrap_or_default()),
        PipelineEvent::Token(text) => Event::default()
            .event("token")
            .data(serde_json::json!({ "text": text }).to_string()),
    }
}

fn done_event(response: &QueryResponse) -> Event {
    Event::default()
        .event("done")
        .data(serde_json::to_string(response).unwrap_or_default())
}
