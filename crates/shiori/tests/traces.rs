//! Traces end to end (issue 51): `shiori serve` with `OTEL_EXPORTER_OTLP_ENDPOINT` sends one
//! trace per request to a real OTLP/HTTP receiver the test starts (the official
//! `opentelemetry-proto` package decoding the protobuf exports); a query's trace holds the
//! retrieval, store, model-less answer spans under its request span.

mod common;

use common::{command, http, indexed_faq, start_serving};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

struct Collector {
    child: Child,
    spans: Receiver<Value>,
    port: u16,
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the receiver; panics naming the package when it is not installed.
fn start_collector() -> Collector {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/otlp_receiver.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let Some(Ok(first)) = lines.next() else {
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        panic!("the OTLP receiver did not start (pip install opentelemetry-proto): {stderr}");
    };
    let port = first.trim().parse().unwrap();
    let (sender, spans) = channel();
    std::thread::spawn(move || forward(lines, sender));
    Collector { child, spans, port }
}

fn forward(lines: std::io::Lines<BufReader<ChildStdout>>, sender: std::sync::mpsc::Sender<Value>) {
    for line in lines.map_while(Result::ok) {
        if sender.send(serde_json::from_str(&line).unwrap()).is_err() {
            return;
        }
    }
}

#[test]
fn a_query_is_one_trace_with_its_retrieval_and_answer_spans() {
    let collector = start_collector();
    let work = tempfile::tempdir().unwrap();
    let data = indexed_faq(work.path());
    let mut serve = command(&data);
    serve
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", collector.port),
        )
        .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    let (_serving, addr, _) = start_serving(serve);
    let body = json!({"question": "How many days of paid leave do I get?"}).to_string();
    let (status, answer) = http(
        &addr,
        "POST",
        "/api/query",
        &["Content-Type: application/json"],
        &body,
    );
    assert_eq!(status, 200, "{answer}");

    let wanted = [
        "answer",
        "retrieve",
        "embed_query",
        "bm25_search",
        "dense_search",
        "fuse_and_rank",
    ];
    let mut spans: Vec<Value> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let request = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match collector.spans.recv_timeout(left) {
            Ok(span) => spans.push(span),
            Err(_) => panic!("no trace of POST /api/query arrived; spans: {spans:#?}"),
        }
        let query = spans
            .iter()
            .find(|s| s["attributes"]["http.route"] == "/api/query");
        if let Some(query) = query {
            let trace = &query["trace_id"];
            let names: Vec<&Value> = spans
                .iter()
                .filter(|s| s["trace_id"] == *trace)
                .map(|s| &s["name"])
                .collect();
            if wanted.iter().all(|name| names.iter().any(|n| *n == name)) {
                break query.clone();
            }
        }
    };
    assert_eq!(request["service"], "shiori");
    assert_eq!(request["name"], "POST /api/query");
    assert_eq!(request["attributes"]["http.response.status_code"], 200);
    assert_eq!(
        request["parent_span_id"], "",
        "the request span is the trace's root"
    );

    // Every span of the trace hangs from the request span, through its parents.
    let trace: Vec<&Value> = spans
        .iter()
        .filter(|s| s["trace_id"] == request["trace_id"])
        .collect();
    let parents: HashMap<&str, &str> = trace
        .iter()
        .map(|s| {
            (
                s["span_id"].as_str().unwrap(),
                s["parent_span_id"].as_str().unwrap(),
            )
        })
        .collect();
    for span in &trace {
        let mut id = span["span_id"].as_str().unwrap();
        while let Some(parent) = parents.get(id).filter(|p| !p.is_empty()) {
            id = parent;
        }
        assert_eq!(id, request["span_id"].as_str().unwrap(), "{span}");
    }
    let named = |name: &str| trace.iter().find(|s| s["name"] == name).unwrap();
    let answer_span = named("answer");
    assert_eq!(answer_span["parent_span_id"], request["span_id"]);
    assert_eq!(named("retrieve")["parent_span_id"], answer_span["span_id"]);
    assert_eq!(
        named("bm25_search")["parent_span_id"],
        named("retrieve")["span_id"]
    );
    assert!(
        trace.iter().any(|s| s["name"] == "store.dense_search"),
        "{trace:#?}"
    );
}
