//! What a foreign web page can make a visitor's browser send, replayed over real HTTP: simple
//! cross-site requests (forms, `text/plain`, multipart, no custom header) and requests for a
//! host name the attacker controls (DNS rebinding). Every one is refused and changes nothing.

mod common;

use common::{error_code, status_and_json, TestServer};
use reqwest::multipart::{Form, Part};
use reqwest::{Method, RequestBuilder};
use serde_json::{json, Value};
use shiori_server::ServerOptions;

const EVIL: &str = "http://evil.example";
const CONVERSATION: &str = "/api/conversations/0123456789abcdef0123456789abcdef";

/// Every route, with a body a form could carry where it takes one.
fn routes(server: &TestServer) -> Vec<(Method, String)> {
    [
        (Method::GET, "/"),
        (Method::GET, "/assets/app.js"),
        (Method::GET, "/healthz"),
        (Method::GET, "/metrics"),
        (Method::GET, "/api/openapi.json"),
        (Method::GET, "/api/stats"),
        (Method::GET, "/api/reindex"),
        (Method::GET, "/api/documents"),
        (Method::GET, "/api/documents/faq.md"),
        (Method::GET, "/api/document?id=corpus/vpn.txt"),
        (Method::GET, "/favicon.svg"),
        (Method::GET, "/api/conversations"),
        (Method::GET, CONVERSATION),
        (Method::POST, "/api/query"),
        (Method::POST, "/api/reindex"),
        (Method::POST, "/api/eval"),
        (Method::POST, "/api/backup"),
        (Method::POST, "/api/documents"),
        (Method::DELETE, "/api/documents/faq.md"),
        (Method::GET, "/v1/models"),
        (Method::POST, "/v1/chat/completions"),
        (Method::POST, "/v1/embeddings"),
        (Method::POST, "/mcp"),
        (Method::POST, "/api/conversations"),
        (Method::DELETE, CONVERSATION),
    ]
    .into_iter()
    .map(|(method, path)| (method, server.url(path)))
    .collect()
}

async fn send(request: RequestBuilder) -> (u16, Value) {
    status_and_json(request.send().await.unwrap()).await
}

/// What the server holds that a forged write could change: the uploads, the index, the
/// record of the last write and the conversations.
async fn state_of(server: &TestServer) -> (Value, Value, Value, Value) {
    let (_, documents) = server.get("/api/documents").await;
    let (_, stats) = server.get("/api/stats").await;
    let (_, conversations) = server.get("/api/conversations").await;
    (
        documents,
        stats["index"].clone(),
        stats["last_reindex"].clone(),
        conversations,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn simple_cross_site_writes_are_refused_and_change_nothing() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    let (status, started) = server.post("/api/conversations", Value::Null).await;
    assert_eq!(status, 201, "{started}");
    let conversation = format!("/api/conversations/{}", started["id"].as_str().unwrap());
    let before = state_of(&server).await;
    let client = &server.client;
    let post = |path: &str| {
        client
            .post(server.url(path))
            .header("origin", EVIL)
            .header("sec-fetch-site", "cross-site")
    };
    let planted = || {
        Form::new().part(
            "file",
            Part::bytes(b"The VPN password is hunter2.".to_vec()).file_name("evil.txt"),
        )
    };
    let forged = [
        post("/api/query")
            .header("content-type", "text/plain")
            .body(r#"{"question": "What is the VPN password?"}"#),
        post("/api/reindex"),
        post("/api/reindex").header("content-type", "application/x-www-form-urlencoded"),
        post("/api/eval")
            .header("content-type", "text/plain")
            .body("{}"),
        post("/api/backup"),
        post("/api/backup").header("content-type", "application/x-www-form-urlencoded"),
        client
            .post(server.url("/api/backup"))
            .header("content-type", "text/plain"),
        post("/api/documents").multipart(planted()),
        // A simple request from a browser that sends neither Origin nor Sec-Fetch-Site.
        client
            .post(server.url("/api/documents"))
            .multipart(planted()),
        client
            .post(server.url("/api/reindex"))
            .header("content-type", "text/plain"),
        // JSON with a foreign Origin: only possible after a preflight the server refuses.
        post("/api/reindex").json(&json!({})),
        client
            .delete(server.url("/api/documents/faq.md"))
            .header("origin", EVIL),
        // The OpenAI-compatible routes read the index too: a foreign page may not use them.
        post("/v1/chat/completions")
            .header("content-type", "text/plain")
            .body(r#"{"model": "shiori", "messages": [{"role": "user", "content": "VPN password?"}]}"#),
        post("/v1/embeddings")
            .header("content-type", "text/plain")
            .body(r#"{"input": "x"}"#),
        post("/mcp")
            .header("content-type", "text/plain")
            .body(r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#),
        post("/v1/chat/completions").json(
            &json!({"model": "shiori", "messages": [{"role": "user", "content": "VPN password?"}]}),
        ),
        post("/api/conversations").header("content-type", "text/plain"),
        post("/api/conversations").header("content-type", "application/x-www-form-urlencoded"),
        post("/api/query")
            .header("content-type", "text/plain")
            .body(
                json!({"question": "What is the VPN password?", "conversation_id": started["id"]})
                    .to_string(),
            ),
        client
            .delete(server.url(&conversation))
            .header("origin", EVIL),
        client
            .delete(server.url(&conversation))
            .header("sec-fetch-site", "cross-site"),
    ];
    for request in forged {
        let described = format!("{request:?}");
        let (status, body) = send(request).await;
        assert_eq!(status, 403, "{described}: {body}");
        assert_eq!(error_code(&body), "forbidden");
    }
    assert_eq!(state_of(&server).await, before);
    assert!(!server.data_dir().join("uploads/evil.txt").exists());
    assert!(
        !server.data_dir().join("backups").exists(),
        "a forged backup was written"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_and_tools_still_write() {
    let server = TestServer::start(ServerOptions::default()).await;
    let same_origin = server
        .client
        .post(server.url("/api/documents"))
        .header("origin", &server.url)
        .header("sec-fetch-site", "same-origin")
        .header("x-shiori-request", "1")
        .multipart(Form::new().part(
            "file",
            Part::bytes(b"Lunch is served at noon.".to_vec()).file_name("lunch.txt"),
        ));
    let (status, body) = send(same_origin).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = send(server.client.delete(server.url("/api/documents/lunch.txt"))).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.post("/api/reindex", Value::Null).await;
    assert_eq!(status, 200, "{body}");
    let page_starts = server
        .client
        .post(server.url("/api/conversations"))
        .header("origin", &server.url)
        .header("sec-fetch-site", "same-origin")
        .header("x-shiori-request", "1");
    let (status, started) = send(page_starts).await;
    assert_eq!(status, 201, "{started}");
    let conversation = format!("/api/conversations/{}", started["id"].as_str().unwrap());
    let (status, body) = send(server.client.delete(server.url(&conversation))).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_host_is_refused_on_every_route() {
    let server = TestServer::start(ServerOptions::default()).await;
    let before = state_of(&server).await;
    for host in ["attacker.example", "attacker.example:80", "10.9.8.7"] {
        for (method, url) in routes(&server) {
            let request = server
                .client
                .request(method.clone(), &url)
                .header("host", host)
                .json(&json!({"question": "What is the VPN password?"}));
            let (status, body) = send(request).await;
            assert_eq!(status, 421, "{method} {url} as {host}: {body}");
            assert_eq!(error_code(&body), "misdirected_host");
        }
    }
    assert_eq!(state_of(&server).await, before);
    let (status, _) = send(
        server
            .client
            .get(server.url("/healthz"))
            .header("host", "localhost"),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_host_names_are_served() {
    let server = TestServer::start(ServerOptions {
        allowed_hosts: vec!["rag.internal".into()],
        ..ServerOptions::default()
    })
    .await;
    let (status, body) = send(
        server
            .client
            .get(server.url("/api/stats"))
            .header("host", "rag.internal:8000"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}
