//! No response of any route names where the server keeps its files: sources, document ids,
//! index reports, evaluation reports and error messages show paths relative to the source root.

mod common;

use common::*;
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::json;
use shiori_server::ServerOptions;

/// Bytes no PDF reader accepts: a file that fails to index, so reports carry its path.
const BROKEN_PDF: &[u8] = b"%PDF-1.7\nthis is not a pdf body\n";

struct Exchange {
    label: String,
    status: u16,
    body: String,
}

async fn send(server: &TestServer, method: Method, path: &str, body: Option<&str>) -> Exchange {
    let (route, stream) = match path.strip_suffix("?stream") {
        Some(route) => (route, true),
        None => (path, false),
    };
    let mut request = server
        .client
        .request(method.clone(), server.url(route))
        .header("x-shiori-request", "1");
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    if stream {
        request = request.header("accept", "text/event-stream");
    }
    let response = request.send().await.unwrap();
    Exchange {
        label: format!("{method} {path}"),
        status: response.status().as_u16(),
        body: response.text().await.unwrap(),
    }
}

async fn upload(server: &TestServer, name: &str, bytes: &[u8]) -> Exchange {
    let form = Form::new().part(
        "file",
        Part::bytes(bytes.to_vec()).file_name(name.to_string()),
    );
    let response = server.post_multipart("/api/documents", form).await;
    Exchange {
        label: format!("upload {name}"),
        status: response.status().as_u16(),
        body: response.text().await.unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_response_names_an_absolute_server_path() {
    let server = TestServer::start(ServerOptions::default()).await;
    std::fs::write(server.corpus_dir().join("broken.pdf"), BROKEN_PDF).unwrap();
    let question = json!({"question": "How many vacation days do employees get?"}).to_string();
    let mut exchanges = vec![send(&server, Method::POST, "/api/reindex", None).await];
    for (method, path, body) in [
        (Method::GET, "/", None),
        (Method::GET, "/assets/app.js", None),
        (Method::GET, "/favicon.svg", None),
        (Method::GET, "/api/document?id=corpus/vpn.txt", None),
        (Method::GET, "/api/document?id=corpus/broken.pdf", None),
        (Method::GET, "/healthz", None),
        (Method::GET, "/metrics", None),
        (Method::GET, "/api/openapi.json", None),
        (Method::GET, "/api/stats", None),
        (Method::GET, "/api/reindex", None),
        (Method::POST, "/api/query", Some(question.as_str())),
        (Method::POST, "/api/query?stream", Some(question.as_str())),
        (Method::POST, "/api/query", Some(r#"{"question": 5}"#)),
        (Method::POST, "/api/eval", Some("{}")),
        (Method::GET, "/api/documents/missing.txt", None),
    ] {
        exchanges.push(send(&server, method, path, body).await);
    }
    exchanges.push(
        upload(
            &server,
            "notes.md",
            b"# Notes\n\nThe parking garage opens at 7.\n",
        )
        .await,
    );
    exchanges.push(upload(&server, "broken.pdf", BROKEN_PDF).await);
    for (method, path) in [
        (Method::GET, "/api/documents"),
        (Method::GET, "/api/documents/notes.md"),
        (Method::GET, "/api/document?id=data/uploads/notes.md"),
        (Method::DELETE, "/api/documents/notes.md"),
    ] {
        exchanges.push(send(&server, method, path, None).await);
    }

    let statuses: Vec<(String, u16)> = exchanges
        .iter()
        .map(|e| (e.label.clone(), e.status))
        .collect();
    let expected = [
        ("POST /api/reindex", 200),
        ("POST /api/query", 200),
        ("POST /api/query?stream", 200),
        ("POST /api/eval", 200),
        ("upload notes.md", 201),
        ("upload broken.pdf", 422),
        ("GET /api/documents/notes.md", 200),
        ("GET /api/documents/missing.txt", 404),
        ("GET /api/document?id=corpus/vpn.txt", 200),
        ("GET /api/document?id=data/uploads/notes.md", 200),
    ];
    for (label, status) in expected {
        assert!(
            statuses.contains(&(label.to_string(), status)),
            "{label} should answer {status}: {statuses:?}"
        );
    }

    let reindex = &exchanges[0].body;
    assert!(
        reindex.contains("corpus/broken.pdf"),
        "the failure is named by its shown path: {reindex}"
    );
    let forbidden = forbidden_paths(&server);
    for exchange in &exchanges {
        for path in &forbidden {
            assert!(
                !exchange.body.contains(path.as_str()),
                "{} ({}) shows the server path {path}: {}",
                exchange.label,
                exchange.status,
                exchange.body
            );
        }
    }
}

/// The folder holding the data directory and the corpus, as given and canonical, and the
/// repository's evaluation set.
fn forbidden_paths(server: &TestServer) -> Vec<String> {
    let work = server.work.path();
    let mut paths = vec![
        work.display().to_string(),
        work.canonicalize().unwrap().display().to_string(),
        sample_faq_dir()
            .canonicalize()
            .unwrap()
            .display()
            .to_string(),
    ];
    paths.dedup();
    paths
}

/// A caller's words come back as they were sent whether or not they name the server's real
/// folder: were only the real one rewritten, any echo would answer "is this where the files
/// live?" for each guess.
#[tokio::test(flavor = "multi_thread")]
async fn an_echo_does_not_tell_a_real_folder_from_a_guess() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    let real = server.corpus_dir().canonicalize().unwrap();
    let real = real.display().to_string();
    let guess = "/srv/shiori-guess/corpus".to_string();

    let (_, started) = server
        .post("/api/conversations", serde_json::Value::Null)
        .await;
    let id = started["id"].as_str().unwrap().to_string();
    for folder in [&real, &guess] {
        let question = format!("Is {folder}/vpn.txt about the VPN?");
        let (status, answer) = server
            .post(
                "/api/query",
                json!({"question": question, "conversation_id": id}),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
    }
    let (_, conversation) = server.get(&format!("/api/conversations/{id}")).await;
    let asked: Vec<&str> = conversation["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| turn["question"].as_str().unwrap())
        .collect();
    assert_eq!(
        asked,
        [
            format!("Is {real}/vpn.txt about the VPN?"),
            format!("Is {guess}/vpn.txt about the VPN?")
        ]
    );

    let mut refusals = Vec::new();
    for folder in [&real, &guess] {
        let filters = json!({"source_prefix": format!("{folder}/vpn.txt")});
        let (status, body) = server
            .post(
                "/api/query",
                json!({"question": "VPN?", "filters": filters}),
            )
            .await;
        assert_eq!(status, 400, "{body}");
        refusals.push(body["error"]["message"].as_str().unwrap().to_string());
    }
    assert_eq!(
        refusals[0], refusals[1],
        "an error quoting a path reads the same for both"
    );
}
