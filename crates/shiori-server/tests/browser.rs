//! The web page end to end in headless Chromium, driven over the WebDriver protocol through
//! chromedriver: ask a question of the fixture corpus, see the answer and its sources, click
//! the citation, reindex from the page, and run the evaluation page. Screenshots go to
//! `target/test-artifacts/`.

mod common;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};
use shiori_server::ServerOptions;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// WebDriver's key for element references.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

struct Driver {
    process: Child,
    url: String,
    session: String,
    http: reqwest::Client,
    _profile: tempfile::TempDir,
}

impl Driver {
    async fn start() -> Driver {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let process = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is not installed (apt-get install chromium chromium-driver)");
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let started = Instant::now();
        loop {
            let ready = match http.get(format!("{url}/status")).send().await {
                Ok(response) => response.json::<Value>().await.ok(),
                Err(_) => None,
            };
            if ready.is_some_and(|status| status["value"]["ready"] == true) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                    "--window-size=1280,1000",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        }}});
        let mut driver = Driver {
            process,
            url,
            session: String::new(),
            http,
            _profile: profile,
        };
        let created = driver.call("POST", "/session", capabilities).await;
        driver.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        driver
    }

    async fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = if path == "/session" {
            format!("{}{path}", self.url)
        } else {
            format!("{}/session/{}{path}", self.url, self.session)
        };
        let request = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).json(&body),
        };
        let response = request.send().await.unwrap();
        let status = response.status();
        let value: Value = response.json().await.unwrap();
        assert!(status.is_success(), "WebDriver {method} {path}: {value}");
        value["value"].clone()
    }

    async fn find(&self, css: &str) -> Option<String> {
        let url = format!("{}/session/{}/element", self.url, self.session);
        let response = self
            .http
            .post(url)
            .json(&json!({"using": "css selector", "value": css}))
            .send()
            .await
            .unwrap();
        if !response.status().is_success() {
            return None;
        }
        let value: Value = response.json().await.unwrap();
        value["value"][ELEMENT].as_str().map(str::to_string)
    }

    /// Waits up to `seconds` for an element to appear.
    async fn wait_for(&self, css: &str, seconds: u64) -> String {
        let started = Instant::now();
        loop {
            if let Some(element) = self.find(css).await {
                return element;
            }
            assert!(
                started.elapsed() < Duration::from_secs(seconds),
                "{css} did not appear within {seconds} s"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn text(&self, element: &str) -> String {
        let value = self
            .call("GET", &format!("/element/{element}/text"), Value::Null)
            .await;
        value.as_str().unwrap_or_default().to_string()
    }

    /// Clicks once the element can take a click: on a loaded machine it may exist a moment
    /// before the page has laid it out ("element not interactable").
    async fn click(&self, element: &str) {
        let url = format!(
            "{}/session/{}/element/{element}/click",
            self.url, self.session
        );
        let started = Instant::now();
        loop {
            let response = self.http.post(&url).json(&json!({})).send().await.unwrap();
            let status = response.status();
            let value: Value = response.json().await.unwrap();
            if status.is_success() {
                return;
            }
            assert!(
                value["value"]["error"] == "element not interactable"
                    && started.elapsed() < Duration::from_secs(10),
                "WebDriver click: {value}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn screenshot(&self, name: &str) -> PathBuf {
        let encoded = self.call("GET", "/screenshot", Value::Null).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded.as_str().unwrap())
            .unwrap();
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, png).unwrap();
        path
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_answers_highlights_cited_sources_and_evaluates() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    let driver = Driver::start().await;

    driver
        .call("POST", "/url", json!({"url": server.url("/")}))
        .await;
    let question = driver.wait_for("#question", 10).await;
    // Wait until the page has read the stats, so the controls hold the configured values.
    let started = Instant::now();
    while !driver
        .text(&driver.wait_for("#stats", 5).await)
        .await
        .contains("chunks")
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "stats never loaded"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    driver
        .call(
            "POST",
            &format!("/element/{question}/value"),
            json!({"text": "How much storage does every workspace include?"}),
        )
        .await;
    driver.click(&driver.wait_for("#ask", 5).await).await;

    let citation = driver.wait_for("#answer a.cite", 30).await;
    let answer = driver.text(&driver.wait_for("#answer", 5).await).await;
    assert!(answer.contains("100 GB"), "{answer}");
    let source = driver.text(&driver.wait_for("#source-0", 5).await).await;
    assert!(source.contains("Storage quota"), "{source}");
    let trace = driver.text(&driver.wait_for("#trace", 5).await).await;
    assert!(
        trace.contains("retrieve") && trace.contains("cut"),
        "{trace}"
    );

    assert!(driver.find("#source-0.highlight").await.is_none());
    driver.click(&citation).await;
    driver.wait_for("#source-0.highlight", 5).await;
    let shot = driver.screenshot("serve-page.png").await;
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "{}",
        shot.display()
    );

    driver.click(&driver.wait_for("#reindex", 5).await).await;
    let status = driver.wait_for("#reindex-status", 5).await;
    let started = Instant::now();
    loop {
        let text = driver.text(&status).await;
        if text.starts_with("indexed") {
            assert!(text.contains("unchanged 5"), "{text}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "reindex: {text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    driver.click(&driver.wait_for("#nav-eval", 5).await).await;
    driver.click(&driver.wait_for("#run-eval", 5).await).await;
    driver.wait_for("#metric-cards > div", 300).await;
    driver.wait_for("#sweep-chart svg polyline", 5).await;
    let cards = driver
        .text(&driver.wait_for("#metric-cards", 5).await)
        .await;
    assert!(cards.contains("nDCG@10"), "{cards}");
    // The page sends the refusal it shows (the configured default): the server echoes what it
    // received.
    let status = driver.text(&driver.wait_for("#eval-status", 5).await).await;
    assert!(status.ends_with("refusal balanced"), "{status}");
    driver.screenshot("serve-eval.png").await;

    driver.call("DELETE", "", Value::Null).await;
}
