//! `/api/query` and `/api/reindex` over real HTTP: answers, refusals, streaming, bad requests.

mod common;

use common::*;
use serde_json::{json, Value};
use shiori_server::ServerOptions;

#[tokio::test(flavor = "multi_thread")]
async fn reindexes_then_answers_with_citations_trace_and_refusals() {
    let server = TestServer::start(ServerOptions::default()).await;
    let reindex = server.reindex().await;
    assert_eq!(reindex["report"]["files_indexed"], 5, "{reindex}");
    let embedding = &reindex["embedding"];
    let vectors = embedding["chunks_embedded"].as_u64().unwrap()
        + embedding["chunks_cached"].as_u64().unwrap();
    assert!(vectors > 0, "{reindex}");
    assert!(
        embedding["model"].as_str().unwrap().contains("e5"),
        "{reindex}"
    );
    assert!(reindex["timings_ms"]["total_ms"].as_f64().unwrap() > 0.0);

    let answer = server
        .ask("How much storage does every workspace include?")
        .await;
    assert_eq!(answer["refused"], false, "{answer}");
    let text = answer["answer"].as_str().unwrap();
    assert!(text.contains("100 GB") && text.ends_with("[1]"), "{answer}");
    // `[pipeline] default` is `basic`; without a chat model it answers extractively.
    assert_eq!(answer["trace"]["pipeline"], "extractive");
    assert_eq!(answer["citations"][0]["number"], 1);
    assert_eq!(
        answer["citations"][0]["chunk_id"],
        answer["sources"][0]["chunk_id"]
    );
    assert_eq!(answer["sources"][0]["doc_id"], "faq-storage");
    let steps: Vec<&str> = answer["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["retrieve", "extract"]);
    assert_eq!(
        answer["usage"],
        json!({"prompt_tokens": 0, "completion_tokens": 0})
    );
    assert_eq!(answer["cost_usd"], 0.0);
    assert!(answer["timings_ms"]["total_ms"].as_f64().unwrap() > 0.0);

    // A generation pipeline with no chat model configured degrades to the extractive answer and
    // says so in its trace.
    let (status, generated) = server
        .post(
            "/api/query",
            json!({"question": "How much storage does every workspace include?", "pipeline": "basic"}),
        )
        .await;
    assert_eq!(status, 200, "{generated}");
    assert!(
        generated["answer"].as_str().unwrap().contains("100 GB"),
        "{generated}"
    );
    assert!(
        generated["trace"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["step"] == "degrade"),
        "{generated}"
    );
    assert!(
        generated["degraded"]
            .as_str()
            .is_some_and(|why| why.starts_with("no chat model is configured: basic")),
        "{generated}"
    );

    let refusal = server.ask("What is the melting point of tungsten?").await;
    assert_eq!(refusal["refused"], true, "{refusal}");
    assert_eq!(refusal["citations"], json!([]));

    let (status, bm25) = server
        .post(
            "/api/query",
            json!({"question": "WireGuard profile", "mode": "bm25", "top_k": 2,
                   "filters": {"source_prefix": "corpus/"}}),
        )
        .await;
    assert_eq!(status, 200, "{bm25}");
    assert_eq!(bm25["sources"].as_array().unwrap().len(), 2, "{bm25}");

    let (status, strict) = server
        .post(
            "/api/query",
            json!({"question": "How much storage does every workspace include?", "threshold": 0.99}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        strict["refused"], true,
        "a threshold of 0.99 refuses: {strict}"
    );
}

/// Parses an event-stream body into (event, data) pairs.
fn events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    name = Some(value.trim().to_string());
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.strip_prefix(' ').unwrap_or(value));
                }
            }
            Some((name?, serde_json::from_str(&data).unwrap()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn streams_steps_tokens_and_the_final_response() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    let response = server
        .client
        .post(server.url("/api/query"))
        .header("Accept", "text/event-stream")
        .json(&json!({"question": "How do I connect to the office VPN?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let events = events(&response.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    // An extractive answer generates nothing: its text arrives as one token after its steps.
    assert_eq!(names, ["step", "step", "token", "done"], "{names:?}");
    let tokens: String = events
        .iter()
        .filter(|(name, _)| name == "token")
        .map(|(_, data)| data["text"].as_str().unwrap())
        .collect();
    let done = &events.last().unwrap().1;
    assert_eq!(tokens, done["answer"].as_str().unwrap());
    assert!(tokens.contains("WireGuard"), "{done}");
    let steps: Vec<&Value> = events[..2].iter().map(|(_, step)| step).collect();
    let done_steps: Vec<&Value> = done["trace"]["steps"].as_array().unwrap().iter().collect();
    assert_eq!(steps, done_steps);

    let bad = server
        .client
        .post(server.url("/api/query"))
        .header("Accept", "text/event-stream")
        .json(&json!({"question": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        bad.status(),
        400,
        "validation happens before the stream starts"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_clear_errors() {
    let server = TestServer::start(ServerOptions {
        body_limit_bytes: 1024,
        ..ServerOptions::default()
    })
    .await;
    let raw = |body: &'static str, content_type: &'static str| {
        server
            .client
            .post(server.url("/api/query"))
            .header("Content-Type", content_type)
            .body(body)
            .send()
    };
    let (status, body) =
        status_and_json(raw("{\"question\": ", "application/json").await.unwrap()).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "malformed_json"),
        "{body}"
    );

    // A text/plain POST is what another site's page can send without asking: refused as such.
    let (status, body) = status_and_json(raw("question=hi", "text/plain").await.unwrap()).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (403, "forbidden"),
        "{body}"
    );

    let cases = [
        (json!({"question": "vpn", "colour": "red"}), 422, "colour"),
        (json!({"question": 5}), 422, "invalid type"),
        (json!({}), 422, "question"),
        (json!({"question": "   "}), 400, "empty"),
        (
            json!({"question": "vpn", "pipeline": "telepathy"}),
            422,
            "expected one of: extractive, basic, fusion",
        ),
        (json!({"question": "vpn", "top_k": 0}), 400, "top_k"),
        (json!({"question": "vpn", "threshold": 7}), 400, "threshold"),
        (
            json!({"question": "vpn", "mode": "fuzzy"}),
            422,
            "unknown variant",
        ),
        (
            json!({"question": "vpn", "filters": {"colour": "red"}}),
            422,
            "colour",
        ),
        (json!({"question": "x".repeat(2_000)}), 413, "1024 bytes"),
    ];
    for (request, expected_status, needle) in cases {
        let (status, body) = server.post("/api/query", request.clone()).await;
        error_code(&body);
        assert_eq!(status, expected_status, "{request} → {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{request} → {message}");
    }

    let (status, body) = server.get("/api/query").await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (405, "method_not_allowed")
    );
    let (status, body) = server.get("/api/nothing-here").await;
    assert_eq!((status, error_code(&body).as_str()), (404, "not_found"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_api_key_guards_every_api_route_but_not_the_page_or_health() {
    let server = TestServer::start(ServerOptions {
        keys: shiori_engine::Keyring::single_admin("s3cret-key"),
        ..ServerOptions::default()
    })
    .await;
    for path in [
        "/api/stats",
        "/api/documents",
        "/api/openapi.json",
        "/api/reindex",
        "/api/document?id=corpus/vpn.txt",
    ] {
        let response = server.client.get(server.url(path)).send().await.unwrap();
        assert_eq!(
            response.headers()["www-authenticate"].to_str().unwrap(),
            "Bearer"
        );
        let (status, body) = status_and_json(response).await;
        assert_eq!(
            (status, error_code(&body).as_str()),
            (401, "unauthorized"),
            "{path}"
        );
    }
    let wrong = server
        .client
        .post(server.url("/api/query"))
        .bearer_auth("s3cret-kez")
        .json(&json!({"question": "vpn"}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let right = server
        .client
        .get(server.url("/api/stats"))
        .bearer_auth("s3cret-key")
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), 200);
    for open in ["/", "/healthz", "/assets/app.js"] {
        let response = server.client.get(server.url(open)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{open}");
    }
    // The page links its icon, and browsers ask for /favicon.ico on their own.
    for icon in ["/favicon.svg", "/favicon.ico"] {
        let response = server.client.get(server.url(icon)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{icon}");
        assert_eq!(
            response.headers()["content-type"],
            "image/svg+xml",
            "{icon}"
        );
        assert!(response.text().await.unwrap().starts_with("<svg"), "{icon}");
    }
    let metrics = |key: Option<&'static str>| {
        let request = server.client.get(server.url("/metrics"));
        match key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
        .send()
    };
    assert_eq!(metrics(None).await.unwrap().status(), 401);
    assert_eq!(metrics(Some("s3cret-key")).await.unwrap().status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn cors_is_off_unless_an_origin_is_allowed() {
    let closed = TestServer::start(ServerOptions::default()).await;
    let preflight = |server: &TestServer| {
        server
            .client
            .request(reqwest::Method::OPTIONS, server.url("/api/query"))
            .header("Origin", "http://app.example")
            .header("Access-Control-Request-Method", "POST")
            .send()
    };
    let response = preflight(&closed).await.unwrap();
    assert!(response
        .headers()
        .get("access-control-allow-origin")
        .is_none());

    let open = TestServer::start(ServerOptions {
        cors_origins: vec!["http://app.example".into()],
        ..ServerOptions::default()
    })
    .await;
    let response = preflight(&open).await.unwrap();
    assert_eq!(
        response.headers()["access-control-allow-origin"]
            .to_str()
            .unwrap(),
        "http://app.example"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reindex_covers_projects_and_queries_filter_by_project() {
    let server = TestServer::start(ServerOptions::default()).await;
    let handbook = server.work.path().join("handbook");
    std::fs::create_dir_all(&handbook).unwrap();
    std::fs::write(
        handbook.join("leave.txt"),
        "Parental leave lasts sixteen weeks and workspace storage is never counted against it.",
    )
    .unwrap();
    let config = server.data_dir().join("shiori.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[projects.handbook]\npaths = [\"handbook\"]\n");
    std::fs::write(&config, text).unwrap();

    let reindex = server.reindex().await;
    assert_eq!(reindex["report"]["files_indexed"], 6, "{reindex}");

    let question = "How much storage does every workspace include?";
    let (status, scoped) = server
        .post(
            "/api/query",
            json!({"question": question, "filters": {"projects": ["handbook"]}, "two_stage": true}),
        )
        .await;
    assert_eq!(status, 200, "{scoped}");
    let sources = scoped["sources"].as_array().unwrap();
    assert!(!sources.is_empty(), "{scoped}");
    for source in sources {
        assert!(
            source["source"]
                .as_str()
                .unwrap()
                .ends_with("handbook/leave.txt"),
            "{scoped}"
        );
    }
    let everything = server.ask(question).await;
    assert_eq!(everything["sources"][0]["doc_id"], "faq-storage");
}
