//! Real streaming through `/api/query`: a scripted chat server sends a cited answer piece by
//! piece, in the OpenAI, Anthropic and Gemini stream formats; the answer's tokens must reach the
//! HTTP client while the model is still generating, and a client that hangs up must stop the
//! upstream request.

mod common;

use common::*;
use serde_json::{json, Value};
use shiori_mock::{MockServer, Reply};
use shiori_server::ServerOptions;
use std::time::{Duration, Instant};

const PACE: Duration = Duration::from_millis(150);

#[derive(Clone, Copy, Debug)]
enum Format {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Format {
    fn provider(self) -> &'static str {
        match self {
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
        }
    }

    /// One stream event carrying `text`.
    fn event(self, text: &str) -> String {
        match self {
            Format::OpenAi => json!({"choices": [{"index": 0, "delta": {"content": text}}]}),
            Format::Anthropic => json!({"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": text}}),
            Format::Gemini => json!({"candidates": [{"content": {"parts": [{"text": text}]}}]}),
        }
        .to_string()
    }

    fn last_event(self) -> Option<String> {
        match self {
            Format::OpenAi => Some("[DONE]".to_string()),
            Format::Anthropic => Some(json!({"type": "message_stop"}).to_string()),
            Format::Gemini => None,
        }
    }
}

/// A chat server that streams [`VPN_ANSWER`] word by word, one word per [`PACE`].
fn scripted_model(format: Format) -> MockServer {
    MockServer::start(move |_| {
        let mut events: Vec<String> = word_pieces(VPN_ANSWER)
            .into_iter()
            .map(|piece| format.event(piece))
            .collect();
        events.extend(format.last_event());
        Reply::paced_sse(&events, PACE)
    })
}

/// A server over the fixture corpus whose answer model is `model`, indexed.
async fn server_with(format: Format, model: &MockServer, options: ServerOptions) -> TestServer {
    let server = TestServer::start(options).await;
    server.add_chat_model(format.provider(), model.url());
    server.reindex().await;
    server
}

async fn open_stream(server: &TestServer) -> reqwest::Response {
    let response = server
        .client
        .post(server.url("/api/query"))
        .header("Accept", "text/event-stream")
        .json(&json!({"question": VPN_QUESTION, "pipeline": "basic"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response
}

/// Reads events off `response` until `until` says stop; returns them with when each arrived.
async fn read_events(
    response: &mut reqwest::Response,
    until: impl Fn(&str) -> bool,
) -> Vec<(String, Value, Instant)> {
    let mut events = Vec::new();
    let mut buffer = String::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(cut) = buffer.find("\n\n") {
            let block: String = buffer.drain(..cut + 2).collect();
            let name = block.lines().find_map(|l| l.strip_prefix("event:"));
            let data: String = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            let Some(name) = name.map(str::trim) else {
                continue;
            };
            events.push((
                name.to_string(),
                serde_json::from_str(&data).unwrap(),
                Instant::now(),
            ));
            if until(name) {
                return events;
            }
        }
    }
    events
}

async fn tokens_arrive_while_the_model_generates(format: Format) {
    let model = scripted_model(format);
    let server = server_with(format, &model, ServerOptions::default()).await;
    let mut response = open_stream(&server).await;
    let events = read_events(&mut response, |name| name == "done").await;

    let names: Vec<&str> = events.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(names.first(), Some(&"step"), "{names:?}");
    assert_eq!(names.last(), Some(&"done"), "{names:?}");
    let tokens: Vec<&(String, Value, Instant)> = events
        .iter()
        .filter(|(name, _, _)| name == "token")
        .collect();
    // Each sentence of the answer is streamed once the model has written it and it is checked.
    assert_eq!(tokens.len(), 2, "{format:?}: {names:?}");
    let streamed: String = tokens
        .iter()
        .map(|(_, data, _)| data["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, VPN_ANSWER);

    let stream = &model.streams()[0];
    let last_piece = *stream.sent.last().unwrap();
    let first_token = tokens[0].2;
    assert!(
        first_token + PACE * 5 < last_piece,
        "{format:?}: the first token reached the client {:?} before the last piece was sent",
        last_piece.saturating_duration_since(first_token)
    );

    let done = &events.last().unwrap().1;
    assert_eq!(done["answer"], VPN_ANSWER, "{done}");
    assert_eq!(done["refused"], false);
    assert_eq!(done["citations"][0]["number"], 1, "{done}");
    assert_eq!(done["trace"]["pipeline"], "basic");
    assert_eq!(done["degraded"], Value::Null);
    let first_token_ms = done["timings_ms"]["first_token_ms"].as_f64().unwrap();
    let total_ms = done["timings_ms"]["total_ms"].as_f64().unwrap();
    assert!(first_token_ms < total_ms, "{done}");
    let step_names: Vec<&str> = events
        .iter()
        .filter(|(name, _, _)| name == "step")
        .map(|(_, step, _)| step["step"].as_str().unwrap())
        .collect();
    assert_eq!(step_names, ["retrieve", "answer", "check_citations"]);
    let answer_step = events
        .iter()
        .position(|(name, step, _)| name == "step" && step["step"] == "answer")
        .unwrap();
    let last_token = events
        .iter()
        .rposition(|(name, _, _)| name == "token")
        .unwrap();
    assert!(
        last_token < answer_step,
        "the answer step is reported when it ends: {names:?}"
    );
}

async fn a_client_that_hangs_up_stops_the_upstream_request(format: Format) {
    let model = scripted_model(format);
    let server = server_with(format, &model, ServerOptions::default()).await;
    let mut response = open_stream(&server).await;
    let events = read_events(&mut response, |name| name == "token").await;
    assert_eq!(events.last().unwrap().0, "token");
    drop(response);

    let deadline = Instant::now() + PACE * word_pieces(VPN_ANSWER).len() as u32 * 2;
    let stream = loop {
        let stream = model.streams()[0].clone();
        if stream.hung_up.is_some() || Instant::now() > deadline {
            break stream;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        stream.hung_up.is_some(),
        "{format:?}: the upstream stream ran to its end after the client left: {stream:?}"
    );
    assert!(stream.sent.len() < stream.planned - 3, "{stream:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_tokens_arrive_while_the_model_generates() {
    tokens_arrive_while_the_model_generates(Format::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_tokens_arrive_while_the_model_generates() {
    tokens_arrive_while_the_model_generates(Format::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_tokens_arrive_while_the_model_generates() {
    tokens_arrive_while_the_model_generates(Format::Gemini).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_hang_up_stops_the_upstream_request() {
    a_client_that_hangs_up_stops_the_upstream_request(Format::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_hang_up_stops_the_upstream_request() {
    a_client_that_hangs_up_stops_the_upstream_request(Format::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_hang_up_stops_the_upstream_request() {
    a_client_that_hangs_up_stops_the_upstream_request(Format::Gemini).await;
}

/// An answer out of time is not a 503: its model is stopped and it quotes its sources instead,
/// saying so; the stream carries exactly that answer.
#[tokio::test(flavor = "multi_thread")]
async fn the_time_limit_stops_the_model_and_the_answer_quotes_its_sources() {
    let model = scripted_model(Format::OpenAi);
    let options = ServerOptions {
        request_timeout: PACE * 4,
        ..ServerOptions::default()
    };
    let server = server_with(Format::OpenAi, &model, options).await;
    let mut response = open_stream(&server).await;
    let events = read_events(&mut response, |name| name == "done" || name == "error").await;
    let (name, done, _) = events.last().unwrap();
    assert_eq!(name, "done", "{events:?}");
    assert_eq!(done["refused"], false, "{done}");
    assert_eq!(done["trace"]["pipeline"], "extractive", "{done}");
    let degraded = done["degraded"].as_str().unwrap_or_default();
    assert!(degraded.contains("ran out of time"), "{done}");
    let streamed: String = events
        .iter()
        .filter(|(name, _, _)| name == "token")
        .map(|(_, data, _)| data["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, done["answer"].as_str().unwrap(), "{events:?}");
    assert!(streamed.contains("WireGuard"), "{streamed}");
    let stream = &model.streams()[0];
    assert!(stream.sent.len() < stream.planned, "{stream:?}");
}
