//! `shiori bench generate --server`: the same measurement against an OpenAI-compatible server,
//! here a scripted one, through Shiori's OpenAI provider (streamed). The prompt is built with
//! the local SmolLM2's tokenizer, as `shiori models fetch` installs it.

mod common;

use common::*;
use serde_json::{json, Value};
use shiori_mock::{MockServer, Reply};
use std::time::Duration;

fn chunk(delta: Value) -> String {
    json!({"model": "scripted", "choices": [{"index": 0, "delta": delta}]}).to_string()
}

/// The benchmark's JSON, once it succeeded.
fn bench_json(server: &MockServer, runs: &str) -> Value {
    let output = bench_server(server, runs);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn bench_server(server: &MockServer, runs: &str) -> std::process::Output {
    let work = tempfile::tempdir().unwrap();
    let corpus = sample_faq_dir().join("documents.jsonl");
    command(&work.path().join("data"))
        .args(["--json", "bench", "generate"])
        .arg(corpus)
        .args([
            "--server",
            server.url(),
            "--server-model",
            "scripted",
            "--runs",
            runs,
        ])
        .output()
        .unwrap()
}

#[test]
fn times_a_server_from_its_stream_with_a_new_prompt_each_run() {
    let mut events: Vec<String> = ["The", " passages", " are", " FAQ", " answers"]
        .iter()
        .map(|text| chunk(json!({"content": text})))
        .collect();
    events.push(
        json!({"model": "scripted", "choices": [],
               "usage": {"prompt_tokens": 530, "completion_tokens": 5}})
        .to_string(),
    );
    events.push("[DONE]".to_string());
    let server = MockServer::start(move |_| Reply::paced_sse(&events, Duration::from_millis(40)));

    let result = bench_json(&server, "2");
    assert_eq!(result["server"], server.url());
    assert_eq!(result["model"], "openai:scripted");
    assert_eq!(result["prompt_tokens"], 530);
    assert_eq!(result["completion_tokens"], 5);
    assert_eq!(result["usage"], "reported");
    assert!(result["peak_rss_mb"].is_null() && result["load_seconds"].is_null());
    assert!(
        result["kernels"].is_null(),
        "the server's kernels are its own: {result}"
    );
    // Four pieces after the first, 40 ms apart: at most 25 tokens/s.
    let generation = result["generation_tokens_per_second"].as_f64().unwrap();
    assert!(generation > 0.0 && generation <= 25.0, "{result}");
    assert!(result["passages"].as_u64().unwrap() >= 1);

    let requests = server.requests_to("/chat/completions");
    assert_eq!(requests.len(), 2);
    let bodies: Vec<Value> = requests.iter().map(|request| request.json()).collect();
    for body in &bodies {
        assert_eq!(body["model"], "scripted");
        assert_eq!(body["stream"], true);
        assert_eq!(body["max_tokens"], 64);
        assert!(body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .starts_with("Passages:\n- "));
    }
    // The runs differ from their first token on, so no server answers one from its cache.
    assert_ne!(bodies[0]["messages"][0], bodies[1]["messages"][0]);
}

#[test]
fn counts_the_tokens_when_the_server_streams_no_usage() {
    let mut events: Vec<String> = ["A", "B", "C"]
        .iter()
        .map(|text| chunk(json!({"content": text})))
        .collect();
    events.push("[DONE]".to_string());
    let server = MockServer::start(move |_| Reply::sse(&events));

    let result = bench_json(&server, "1");
    assert_eq!(result["usage"], "counted here");
    assert_eq!(result["completion_tokens"], 3);
    // SmolLM2's count of the prompt: about the 512 tokens asked for.
    let prompt_tokens = result["prompt_tokens"].as_u64().unwrap();
    assert!((512..1024).contains(&prompt_tokens), "{result}");
}

#[test]
fn a_server_error_fails_the_benchmark_without_a_retry() {
    let server = MockServer::start(|_| Reply::status(500, "model not loaded"));
    let output = bench_server(&server, "3");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(server.url()), "{stderr}");
    assert!(stderr.contains("500"), "{stderr}");
    assert_eq!(server.requests_to("/chat/completions").len(), 1);
}
