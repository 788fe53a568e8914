//! Stats, health, metrics, OpenAPI, evaluation, and writes that never block readers.

mod common;

use common::*;
use serde_json::{json, Value};
use shiori_server::ServerOptions;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn stats_health_metrics_and_openapi() {
    let server = TestServer::start(ServerOptions::default()).await;
    let (status, before) = server.get("/api/stats").await;
    assert_eq!(status, 200);
    assert_eq!(before["chunks"], 0);
    assert!(before["last_reindex"].is_null());
    server.reindex().await;
    server.ask("How do I connect to the office VPN?").await;

    let (_, stats) = server.get("/api/stats").await;
    assert_eq!(stats["dimension"], 384, "{stats}");
    assert!(stats["embedder"].as_str().unwrap().contains("e5"));
    assert!(stats["chunks"].as_u64().unwrap() > 5, "{stats}");
    assert_eq!(stats["files"], 5);
    let pipelines = stats["pipelines"].as_array().unwrap();
    for name in ["extractive", "basic", "crag", "fusion-crag", "reflective"] {
        assert!(pipelines.contains(&json!(name)), "{stats}");
    }
    assert_eq!(stats["default_pipeline"], "extractive", "{stats}");
    assert_eq!(stats["answer_model"], Value::Null, "no chat model: {stats}");
    assert_eq!(stats["last_reindex"]["ok"], true, "{stats}");
    assert_eq!(stats["reindex"]["running"], false);

    let (status, health) = server.get("/healthz").await;
    assert_eq!((status, health), (200, json!({"status": "ok"})));

    let response = server
        .client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let metrics = response.text().await.unwrap();
    for needle in [
        "shiori_http_requests_total{route=\"/api/query\",method=\"POST\",status=\"200\"} 1",
        "shiori_http_requests_total{route=\"/api/reindex\",method=\"POST\",status=\"200\"} 1",
        "shiori_index_writes_total{operation=\"reindex\",outcome=\"ok\"} 1",
        "shiori_query_duration_seconds_count 1",
        "shiori_index_files 5",
    ] {
        assert!(metrics.contains(needle), "{needle} missing:\n{metrics}");
    }

    let (status, openapi) = server.get("/api/openapi.json").await;
    assert_eq!(status, 200);
    assert!(openapi["openapi"].as_str().unwrap().starts_with("3."));
    for (path, method) in [
        ("/api/query", "post"),
        ("/api/reindex", "post"),
        ("/api/reindex", "get"),
        ("/api/eval", "post"),
        ("/api/backup", "post"),
        ("/api/documents", "get"),
        ("/api/documents", "post"),
        ("/api/documents/{id}", "get"),
        ("/api/documents/{id}", "delete"),
        ("/api/document", "get"),
        ("/api/conversations", "get"),
        ("/api/conversations", "post"),
        ("/api/conversations/{id}", "get"),
        ("/api/conversations/{id}", "delete"),
        ("/api/stats", "get"),
        ("/healthz", "get"),
        ("/metrics", "get"),
        ("/v1/models", "get"),
        ("/v1/chat/completions", "post"),
        ("/v1/completions", "post"),
        ("/v1/embeddings", "post"),
    ] {
        assert!(
            openapi["paths"][path][method].is_object(),
            "{method} {path} is not documented"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn evaluates_the_configured_set_with_failures_and_the_threshold_sweep() {
    let server = TestServer::start(ServerOptions::default()).await;
    let (status, eval) = server.post("/api/eval", json!({"mode": "hybrid"})).await;
    assert_eq!(status, 200, "{eval}");
    let report = &eval["report"];
    assert_eq!(report["queries"], 60, "{report}");
    assert!(report["ndcg@10"].as_f64().unwrap() > 0.7, "{report}");
    assert_eq!(
        eval["threshold_sweep"].as_array().unwrap().len(),
        shiori_eval::sweep_grid().len()
    );
    assert_eq!(
        eval["refusal_sweep"].as_array().unwrap().len(),
        shiori_eval::target_grid().len()
    );
    assert_eq!(eval["refusal_sweep"][0]["refusal"], "balanced", "{eval}");
    let failures = eval["failures"].as_array().unwrap();
    let hit_at_1 = report["hit@1"].as_f64().unwrap();
    assert!(!failures.is_empty() || hit_at_1 == 1.0, "{eval}");
    for failure in failures {
        assert!(failure["question"].is_string(), "{failure}");
        assert!(failure["gold"]["answerable"].is_boolean(), "{failure}");
        assert!(failure["got"]["refused"].is_boolean(), "{failure}");
        assert!(failure["reason"].is_string(), "{failure}");
    }
    let (status, body) = server.post("/api/eval", json!({"dataset": "/etc"})).await;
    assert_eq!((status, error_code(&body).as_str()), (422, "invalid_body"));

    std::fs::write(
        server.data_dir().join("shiori.toml"),
        "[ingest]\nsources = [\"corpus\"]\n",
    )
    .unwrap();
    // The serving engine re-reads shiori.toml when a write swaps it.
    server.reindex().await;
    let (status, body) = server.post("/api/eval", json!({})).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("[eval]"));
}

/// Enough fresh text that embedding it takes a few seconds (unique, so the cache cannot help).
fn write_big_source(dir: &std::path::Path, paragraphs: usize) {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let text: String = (0..paragraphs)
        .map(|i| {
            format!(
                "Section {i} of handbook {nonce}: team {i} meets in room {} on weekday {} to \
                 review ticket backlog number {} and the release checklist.\n\n",
                i * 7 % 101,
                i % 5,
                i * 13
            )
        })
        .collect();
    std::fs::write(dir.join("handbook.txt"), text).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn queries_are_served_during_a_reindex_and_a_failed_one_keeps_the_old_index() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    write_big_source(&server.corpus_dir(), 800);
    let faq = server.corpus_dir().join("faq.jsonl");
    let changed = std::fs::read_to_string(&faq)
        .unwrap()
        .replace("100 GB", "250 GB");
    std::fs::write(&faq, changed).unwrap();

    let reindex = {
        let client = server.client.clone();
        let url = server.url("/api/reindex");
        tokio::spawn(async move {
            client
                .post(url)
                .header("x-shiori-request", "1")
                .send()
                .await
                .unwrap()
        })
    };
    let started = Instant::now();
    let mut running = json!(null);
    while running["running"] != true && started.elapsed() < Duration::from_secs(30) {
        running = server.get("/api/reindex").await.1;
    }
    assert_eq!(
        running["running"], true,
        "the reindex never showed as running"
    );
    assert!(
        running["chunks_per_second"].is_number() && running.get("eta_s").is_some(),
        "the page's status gets the CLI's rate and ETA: {running}"
    );
    let (status, body) = server.post("/api/reindex", json!(null)).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (409, "conflict"),
        "{body}"
    );

    let mut answered_while_running = 0;
    loop {
        let (_, progress) = server.get("/api/reindex").await;
        if progress["running"] != true {
            break;
        }
        let answer = server
            .ask("How much storage does every workspace include?")
            .await;
        // The swap happens before the write reports it is done.
        let (_, progress) = server.get("/api/reindex").await;
        if progress["running"] == true {
            let text = answer["answer"].as_str().unwrap();
            assert!(text.contains("100 GB"), "the old index answers: {answer}");
            answered_while_running += 1;
        }
    }
    assert!(
        answered_while_running > 0,
        "no query was answered during the reindex"
    );
    let response = reindex.await.unwrap();
    assert_eq!(response.status(), 200);
    let answer = server
        .ask("How much storage does every workspace include?")
        .await;
    let text = answer["answer"].as_str().unwrap();
    assert!(
        text.contains("250 GB"),
        "the new index after the swap: {answer}"
    );
    let answer = server
        .ask("Which room does team 42 of the handbook meet in?")
        .await;
    assert!(
        answer["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["doc_id"].as_str().unwrap().ends_with("handbook.txt")),
        "the new file is served after the swap: {answer}"
    );

    // A source that does not exist fails the reindex before it writes anything.
    write_config(&server.data_dir(), &["corpus", "missing-folder"]);
    let (status, body) = server.post("/api/reindex", json!(null)).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (500, "engine_error"),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing-folder"),
        "{body}"
    );
    let answer = server
        .ask("How much storage does every workspace include?")
        .await;
    assert!(
        answer["answer"].as_str().unwrap().contains("250 GB"),
        "{answer}"
    );
    let (_, stats) = server.get("/api/stats").await;
    assert_eq!(stats["last_reindex"]["ok"], false, "{stats}");
    assert!(
        stats["chunks"].as_u64().unwrap() > 100,
        "the handbook is still served: {stats}"
    );
}
