//! The web page end to end in headless Chromium, driven over the WebDriver protocol through
//! chromedriver: a conversation with a scripted chat model that streams its answer in paced
//! pieces (the first tokens on screen before the last is sent), a follow-up, a refusal and a
//! citation click; an upload, a reindex followed to its end with its failures listed, and the
//! evaluation page, all under the Content-Security-Policy the server sends (the browser refuses
//! nothing). Screenshots go to `target/test-artifacts/`.

mod common;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};
use shiori_mock::{MockServer, Recorded, Reply};
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
            "goog:loggingPrefs": {"browser": "ALL"},
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

    /// Fails when the browser refused anything under the server's Content-Security-Policy
    /// (an inline script or style, a foreign source): the page must work under the policy
    /// every response carries.
    async fn assert_no_policy_violations(&self) {
        let entries = self
            .call("POST", "/se/log", json!({"type": "browser"}))
            .await;
        let refused: Vec<&Value> = entries
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| {
                let message = entry["message"].as_str().unwrap_or_default();
                message.contains("Content Security Policy")
            })
            .collect();
        assert!(
            refused.is_empty(),
            "refused by the page's policy: {refused:?}"
        );
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

    /// Waits up to `seconds` for the text of `css` to satisfy `done`; returns that text.
    async fn wait_for_text(&self, css: &str, seconds: u64, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            if let Some(element) = self.find(css).await {
                let text = self.text(&element).await;
                if done(&text) {
                    return text;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(seconds),
                "{css} did not show what was expected within {seconds} s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn type_into(&self, css: &str, text: &str) {
        let element = self.wait_for(css, 5).await;
        self.call(
            "POST",
            &format!("/element/{element}/value"),
            json!({ "text": text }),
        )
        .await;
    }

    async fn displayed(&self, element: &str) -> bool {
        self.call("GET", &format!("/element/{element}/displayed"), Value::Null)
            .await
            .as_bool()
            .unwrap_or(false)
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

/// Opens the page and waits until it has read the stats, so its controls hold the configured
/// values.
async fn open_page(driver: &Driver, server: &TestServer) {
    driver
        .call("POST", "/url", json!({"url": server.url("/")}))
        .await;
    driver
        .wait_for_text("#stats", 10, |text| text.contains("chunks"))
        .await;
}

const FOLLOW_UP: &str = "What if it keeps dropping?";
/// What the scripted model condenses the follow-up into.
const CONDENSED: &str = "What if the office VPN tunnel keeps dropping?";
const FOLLOW_UP_ANSWER: &str = "Reconnect the WireGuard profile and check your network [1].";
/// A question the scripted model fails on, as a model whose context is too small does.
const TOO_LONG: &str = "How much storage does every workspace include, in short?";
/// A question the fixture corpus does not answer.
const REFUSED: &str = "What is the melting point of tungsten?";
const PACE: Duration = Duration::from_millis(200);

/// An OpenAI-compatible chat model: it condenses the follow-up into [`CONDENSED`] and streams
/// each answer in pieces, one per [`PACE`].
fn scripted_model() -> MockServer {
    MockServer::start(|request: &Recorded| {
        let body = request.json();
        if request.body.contains("Rewrite the follow-up question") {
            let asked = asked_in_condensing(&body);
            let standalone = if asked == FOLLOW_UP {
                CONDENSED
            } else {
                &asked
            };
            return Reply::json(json!({
                "choices": [{"message": {"role": "assistant", "content": standalone}}],
            }));
        }
        if request.body.contains(TOO_LONG) {
            return Reply::status(
                400,
                json!({"error": {"message": "you requested 1313 tokens, the context holds 512"}})
                    .to_string(),
            );
        }
        let answer = match request.body.contains("keeps dropping") {
            true => FOLLOW_UP_ANSWER,
            false => VPN_ANSWER,
        };
        assert_eq!(body["stream"], true, "answers are streamed: {body}");
        let mut events: Vec<String> = word_pieces(answer)
            .into_iter()
            .map(|piece| {
                json!({"choices": [{"index": 0, "delta": {"content": piece}}]}).to_string()
            })
            .collect();
        events.push("[DONE]".to_string());
        Reply::paced_sse(&events, PACE)
    })
}

/// The follow-up question a condensing prompt ends with.
fn asked_in_condensing(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let prompt = messages.last().unwrap()["content"].as_str().unwrap();
    let (_, question) = prompt.rsplit_once("Follow-up question: ").unwrap();
    question.to_string()
}

async fn ask(driver: &Driver, question: &str) {
    driver.type_into("#question", question).await;
    driver.click(&driver.wait_for("#ask", 5).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_is_a_conversation_with_streamed_cited_answers_and_refusals() {
    let model = scripted_model();
    let server = TestServer::start(ServerOptions::default()).await;
    server.add_chat_model("openai", model.url());
    server.reindex().await;
    let driver = Driver::start().await;
    open_page(&driver, &server).await;
    let answers_with = driver
        .text(&driver.wait_for("#answer-model", 5).await)
        .await;
    assert_eq!(answers_with, "answers with scripted");
    let pipelines = driver.text(&driver.wait_for("#pipeline", 5).await).await;
    assert!(
        pipelines.contains("basic (default)") && pipelines.contains("crag"),
        "{pipelines}"
    );

    ask(&driver, VPN_QUESTION).await;
    let partial = driver
        .wait_for_text("#turn-0 .answer", 30, |text| !text.is_empty())
        .await;
    let partial_seen = Instant::now();
    driver.screenshot("chat-streaming.png").await;
    assert!(
        partial.len() < VPN_ANSWER.len() && VPN_ANSWER.starts_with(&partial),
        "the answer appeared whole ({partial:?}), not as it streamed"
    );
    let citation = driver.wait_for("#turn-0 .answer a.cite", 30).await;
    let last_piece = *model.streams()[0].sent.last().unwrap();
    assert!(
        partial_seen + PACE * 3 < last_piece,
        "the first tokens were on screen only {:?} before the last piece was sent",
        last_piece.saturating_duration_since(partial_seen)
    );
    let answer = driver
        .text(&driver.wait_for("#turn-0 .answer", 5).await)
        .await;
    assert_eq!(answer, VPN_ANSWER);
    let conversation = driver
        .text(&driver.wait_for("#conversation", 5).await)
        .await;
    let id = conversation
        .strip_prefix("Conversation ")
        .unwrap_or_else(|| panic!("{conversation}"))
        .to_string();

    assert!(driver.find("#turn-0 .sources li.highlight").await.is_none());
    driver.click(&citation).await;
    let cited = driver.wait_for("#turn-0 .sources li.highlight", 5).await;
    let cited = driver.text(&cited).await;
    assert!(cited.contains("WireGuard"), "{cited}");
    driver.screenshot("chat-ask.png").await;

    ask(&driver, FOLLOW_UP).await;
    driver.wait_for("#turn-1 .answer a.cite", 30).await;
    let follow_up = driver
        .text(&driver.wait_for("#turn-1 .answer", 5).await)
        .await;
    assert_eq!(follow_up, FOLLOW_UP_ANSWER);
    let answered_with = model.requests();
    assert!(
        answered_with.last().unwrap().body.contains(CONDENSED),
        "the follow-up is answered as condensed"
    );
    let (_, stored) = server.get(&format!("/api/conversations/{id}")).await;
    let asked: Vec<&str> = stored["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("{stored}"))
        .iter()
        .map(|turn| turn["question"].as_str().unwrap())
        .collect();
    assert_eq!(asked, [VPN_QUESTION, FOLLOW_UP]);
    driver
        .call(
            "POST",
            "/execute/sync",
            json!({"script": "window.scrollTo(0, 0)", "args": []}),
        )
        .await;
    driver.screenshot("chat-follow-up.png").await;

    ask(&driver, REFUSED).await;
    let notice = driver
        .wait_for_text("#turn-2 .notice.refusal", 30, |text| !text.is_empty())
        .await;
    assert!(notice.starts_with("Refused"), "{notice}");
    assert!(driver.find("#turn-2 .notice.degraded").await.is_none());
    assert_eq!(model.streams().len(), 2, "a refusal calls no model");
    driver.screenshot("chat-refusal.png").await;

    ask(&driver, TOO_LONG).await;
    let notice = driver
        .wait_for_text("#turn-3 .notice.degraded", 30, |text| !text.is_empty())
        .await;
    assert!(
        notice.starts_with("Degraded: ") && notice.contains("1313 tokens"),
        "{notice}"
    );
    let answer = driver
        .text(&driver.wait_for("#turn-3 .answer", 5).await)
        .await;
    assert!(answer.contains("100 GB"), "the fallback answered: {answer}");
    driver.screenshot("chat-degraded.png").await;

    driver
        .click(&driver.wait_for("#new-conversation", 5).await)
        .await;
    assert!(driver.find("#turn-0").await.is_none());
    ask(&driver, VPN_QUESTION).await;
    driver.wait_for("#turn-0 .answer a.cite", 30).await;
    let (_, listed) = server.get("/api/conversations").await;
    let conversations = listed["conversations"].as_array().unwrap();
    assert_eq!(conversations.len(), 2, "{listed}");
    assert_eq!(conversations[1]["turns"], 4, "{listed}");

    driver.assert_no_policy_violations().await;
    driver.call("DELETE", "", Value::Null).await;
}

/// Files enough to make a reindex last a while (text new to the embedding cache, so every
/// chunk is embedded), and two it cannot index.
fn add_files_to_index(corpus: &std::path::Path) {
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    for i in 0..200 {
        std::fs::write(
            corpus.join(format!("note-{i:03}.md")),
            format!("# Meeting note {i}\n\nRoom {i} is booked for review {run} of project {i}. Bring the agenda and the figures."),
        )
        .unwrap();
    }
    std::fs::write(corpus.join("empty.txt"), "").unwrap();
    std::fs::write(corpus.join("binary.txt"), b"ELF\x00\x01\x02\x00\x00binary").unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_uploads_follows_a_whole_reindex_with_its_failures_and_evaluates() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    let driver = Driver::start().await;
    open_page(&driver, &server).await;
    assert_eq!(
        driver
            .text(&driver.wait_for("#answer-model", 5).await)
            .await,
        "no chat model: extractive answers"
    );

    let upload = tempfile::tempdir().unwrap();
    let parking = upload.path().join("parking.md");
    std::fs::write(
        &parking,
        "# Parking\n\nVisitors park on level 2 of the east garage.",
    )
    .unwrap();
    driver
        .type_into("#upload-file", &parking.display().to_string())
        .await;
    driver.click(&driver.wait_for("#upload", 5).await).await;
    let outcome = driver
        .wait_for_text("#upload-outcomes", 60, |text| !text.is_empty())
        .await;
    assert_eq!(outcome, "parking.md: indexed");
    driver
        .wait_for_text("#documents", 10, |text| text.contains("parking.md"))
        .await;
    ask(&driver, "Where do visitors park?").await;
    let source = driver
        .text(&driver.wait_for("#turn-0-source-0", 30).await)
        .await;
    assert!(source.contains("east garage"), "{source}");

    add_files_to_index(&server.corpus_dir());
    driver.click(&driver.wait_for("#reindex", 5).await).await;
    let bar = driver.wait_for("#reindex-progress", 5).await;
    let progress = driver
        .wait_for_text("#reindex-status", 60, |text| {
            (text.starts_with("reindex: ") && !text.contains(" 0/")) || text.starts_with("indexed")
        })
        .await;
    assert!(
        progress.starts_with("reindex: ") && progress.contains("chunks embedded"),
        "the progress bar never showed the run: {progress}"
    );
    driver.screenshot("reindex-progress.png").await;
    assert!(driver.displayed(&bar).await, "{progress}");
    let report = driver
        .wait_for_text("#reindex-status", 300, |text| text.starts_with("indexed"))
        .await;
    assert!(
        report.contains("indexed 200") && report.contains("2 failure(s)"),
        "{report}"
    );
    assert!(!driver.displayed(&bar).await);
    let failures = driver
        .text(&driver.wait_for("#reindex-failures", 5).await)
        .await;
    let lines: Vec<&str> = failures.lines().collect();
    assert_eq!(lines.len(), 2, "{failures}");
    for (file, reason) in [("binary.txt", "binary"), ("empty.txt", "empty")] {
        assert!(
            lines
                .iter()
                .any(|line| line.contains(file) && line.to_lowercase().contains(reason)),
            "{file} is not listed with its reason: {failures}"
        );
    }
    assert!(
        !failures.contains(&server.work.path().display().to_string()),
        "paths are shown relative: {failures}"
    );
    driver.screenshot("reindex-failures.png").await;

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

    driver.assert_no_policy_violations().await;
    driver.call("DELETE", "", Value::Null).await;
}
