//! Admission control over real HTTP: past the queries computing and waiting, the next is
//! answered 503 with `Retry-After` at once, and `/metrics` counts every status.

mod common;

use common::TestServer;
use serde_json::json;
use shiori_server::ServerOptions;

#[tokio::test(flavor = "multi_thread")]
async fn queries_past_the_queue_are_shed_with_retry_after_and_counted() {
    let server = TestServer::start(ServerOptions {
        query_concurrency: 1,
        max_queued_queries: 0,
        ..ServerOptions::default()
    })
    .await;
    let reindex = server.reindex().await;
    let (_, progress) = server.get("/api/reindex").await;
    assert_eq!(
        progress["chunks_written"], reindex["report"]["chunks_added"],
        "{progress}"
    );
    let embedded = reindex["report"]["chunks_embedded"].as_u64().unwrap()
        + reindex["report"]["chunks_cached"].as_u64().unwrap();
    assert_eq!(progress["chunks_embedded"], embedded, "{progress}");

    let requests = (0..16).map(|i| {
        let request = server
            .client
            .post(server.url("/api/query"))
            .json(&json!({"question": format!("How much storage does workspace {i} include?")}));
        tokio::spawn(async move { request.send().await.unwrap() })
    });
    let mut answered = 0;
    let mut shed = 0;
    for request in requests.collect::<Vec<_>>() {
        let response = request.await.unwrap();
        match response.status().as_u16() {
            200 => answered += 1,
            503 => {
                assert_eq!(response.headers()["retry-after"], "1");
                let body: serde_json::Value = response.json().await.unwrap();
                assert_eq!(body["error"]["code"], "overloaded", "{body}");
                shed += 1;
            }
            other => panic!("status {other}: {}", response.text().await.unwrap()),
        }
    }
    assert!(
        answered >= 1 && shed >= 1,
        "{answered} answered, {shed} shed"
    );

    let metrics = server
        .client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let count = |status: u16| {
        let label = format!(
            "shiori_http_requests_total{{route=\"/api/query\",method=\"POST\",status=\"{status}\"}} "
        );
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(label.as_str()))
            .map_or(0, |n| n.parse::<u64>().unwrap())
    };
    assert_eq!((count(200), count(503)), (answered, shed), "{metrics}");
    assert!(
        metrics.contains(&format!("shiori_query_duration_seconds_count {answered}")),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn embeddings_wait_for_a_query_slot_and_are_shed_past_the_queue() {
    let server = TestServer::start(ServerOptions {
        query_concurrency: 1,
        max_queued_queries: 0,
        ..ServerOptions::default()
    })
    .await;
    let passage = "Employees connect to the office network through the VPN client. ".repeat(20);
    let requests = (0..8).map(|i| {
        let input: Vec<String> = (0..16).map(|j| format!("{i} {j} {passage}")).collect();
        let request = server
            .client
            .post(server.url("/v1/embeddings"))
            .json(&json!({"input": input}));
        tokio::spawn(async move { request.send().await.unwrap() })
    });
    let mut statuses = Vec::new();
    for request in requests.collect::<Vec<_>>() {
        let response = request.await.unwrap();
        statuses.push(response.status().as_u16());
    }
    assert!(
        statuses.contains(&200) && statuses.contains(&503),
        "with one slot and no queue, some embeddings are computed and the rest shed: {statuses:?}"
    );
    assert!(statuses.iter().all(|status| [200, 503].contains(status)));
}
