//! Starts a real `shiori-server` on 127.0.0.1:0 over a copy of the fixture corpus, with the
//! models `shiori models fetch` installed under `SHIORI_HOME`.

// Each test binary compiles this module and uses only some of it.
#![allow(dead_code)]

use serde_json::Value;
use shiori_engine::Engine;
use shiori_models::assets::ShioriHome;
use shiori_server::{Server, ServerOptions};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shiori/tests/fixtures/corpus")
}

pub fn sample_faq_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/faq")
}

/// A question of the fixture corpus, and the cited answer scripted models stream for it.
pub const VPN_QUESTION: &str = "How do I connect to the office VPN?";
pub const VPN_ANSWER: &str = "Install the WireGuard client from the IT portal [1]. Then import \
    the profile named kumo-office.conf and sign in with your company account [1].";

/// `text` in the pieces a scripted model streams it in: word by word.
pub fn word_pieces(text: &str) -> Vec<&str> {
    text.split_inclusive(' ').collect()
}

pub struct TestServer {
    pub url: String,
    pub work: TempDir,
    pub client: reqwest::Client,
}

impl TestServer {
    /// A server whose `[ingest] sources` is a copy of the fixture corpus (`work/corpus`) and
    /// whose `[eval] dataset` is samples/faq.
    pub async fn start(options: ServerOptions) -> TestServer {
        let work = tempfile::tempdir().unwrap();
        let corpus = work.path().join("corpus");
        std::fs::create_dir_all(&corpus).unwrap();
        for entry in std::fs::read_dir(fixture_dir()).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), corpus.join(entry.file_name())).unwrap();
        }
        let data = work.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        write_config(&data, &["corpus"]);
        let engine = Engine::open(&data, &ShioriHome::from_env().unwrap()).unwrap();
        let server = Server::new(engine, options).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(server.serve(listener));
        TestServer {
            url,
            work,
            client: reqwest::Client::new(),
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.work.path().join("data")
    }

    pub fn corpus_dir(&self) -> PathBuf {
        self.work.path().join("corpus")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.client.get(self.url(path)).send().await.unwrap();
        status_and_json(response).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .client
            .post(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        status_and_json(response).await
    }

    /// A multipart upload as the page sends it (with its `X-Shiori-Request` header).
    pub async fn post_multipart(
        &self,
        path: &str,
        form: reqwest::multipart::Form,
    ) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .header("x-shiori-request", "1")
            .multipart(form)
            .send()
            .await
            .unwrap()
    }

    /// Adds `[llm.models.scripted]`, a chat model of `provider` served at `base_url`, to
    /// `shiori.toml`, answering with it by default (`basic`); the next write (a reindex) loads
    /// it.
    pub fn add_chat_model(&self, provider: &str, base_url: &str) {
        let config = self.data_dir().join("shiori.toml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "\n[pipeline]\ndefault = \"basic\"\n\n[llm.models.scripted]\nprovider = {provider:?}\n\
             model = \"scripted\"\nbase_url = {base_url:?}\n",
        ));
        std::fs::write(&config, text).unwrap();
    }

    pub async fn reindex(&self) -> Value {
        let (status, body) = self.post("/api/reindex", Value::Null).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    pub async fn ask(&self, question: &str) -> Value {
        let (status, body) = self
            .post("/api/query", serde_json::json!({"question": question}))
            .await;
        assert_eq!(status, 200, "{body}");
        body
    }
}

/// Writes `shiori.toml` with these sources and samples/faq as the evaluation set.
pub fn write_config(data: &Path, sources: &[&str]) {
    let sources: Vec<String> = sources.iter().map(|s| format!("{s:?}")).collect();
    let dataset = sample_faq_dir().canonicalize().unwrap();
    std::fs::write(
        data.join("shiori.toml"),
        format!(
            "[ingest]\nsources = [{}]\n\n[eval]\ndataset = {:?}\n",
            sources.join(", "),
            dataset.display().to_string()
        ),
    )
    .unwrap();
}

pub async fn status_and_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("status {status}: body is not JSON ({e}): {text}"));
    (status, value)
}

/// Asserts the uniform error body and returns its code.
pub fn error_code(body: &Value) -> String {
    let code = body["error"]["code"].as_str();
    let message = body["error"]["message"].as_str();
    assert!(
        code.is_some() && message.is_some_and(|m| !m.is_empty()),
        "not an error body: {body}"
    );
    code.unwrap().to_string()
}
