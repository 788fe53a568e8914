//! The web page end to end in headless Chromium, driven over the WebDriver protocol through
//! chromedriver: a conversation with a scripted chat model that streams its answer in paced
//! pieces (the first tokens on screen before the last is sent, with the turn's state shown), a
//! follow-up, a refusal that keeps its sources folded, a citation click, an answer in Markdown,
//! a stop mid-stream, an earlier conversation reopened from the list and a source opened in its
//! document; the layout at 390, 1,280 and 1,920 px; an upload (a PDF opened at its page), a
//! reindex followed to its end with its failures listed, and the evaluation page, all under the
//! Content-Security-Policy the server sends (the browser refuses nothing). Screenshots go to
//! `target/test-artifacts/`.

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
    /// every response carries. Fails too when the page's icon did not load.
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
                message.contains("Content Security Policy") || message.contains("favicon")
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

    async fn enabled(&self, element: &str) -> bool {
        self.call("GET", &format!("/element/{element}/enabled"), Value::Null)
            .await
            .as_bool()
            .unwrap_or(false)
    }

    /// What `script` returns, run in the page with `args` as `arguments`.
    async fn execute(&self, script: &str, args: Value) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            json!({"script": script, "args": args}),
        )
        .await
    }

    /// Resizes the window until the page's viewport is `width` CSS pixels wide.
    async fn set_viewport(&self, width: i64, height: i64) {
        let mut outer = width;
        for _ in 0..3 {
            self.call(
                "POST",
                "/window/rect",
                json!({"width": outer, "height": height}),
            )
            .await;
            let inner = self
                .execute("return window.innerWidth", json!([]))
                .await
                .as_i64()
                .unwrap_or_default();
            if inner == width {
                return;
            }
            outer += width - inner;
        }
        panic!("the viewport could not be made {width} px wide");
    }

    /// Fails when the page is wider than its window, which would make it scroll sideways.
    async fn assert_fits(&self, when: &str) {
        let widths = self
            .execute(
                "return [document.documentElement.scrollWidth, window.innerWidth]",
                json!([]),
            )
            .await;
        let (page, window) = (widths[0].as_i64().unwrap(), widths[1].as_i64().unwrap());
        assert!(
            page <= window,
            "{when}: the page is {page} px wide in a {window} px window"
        );
    }

    /// Whether the `<details>` element `css` is open.
    async fn is_open(&self, css: &str) -> bool {
        self.execute(
            "return document.querySelector(arguments[0]).open",
            json!([css]),
        )
        .await
        .as_bool()
        .unwrap_or_else(|| panic!("{css} is not a details element"))
    }

    async fn count(&self, css: &str) -> usize {
        self.execute(
            "return document.querySelectorAll(arguments[0]).length",
            json!([css]),
        )
        .await
        .as_u64()
        .unwrap_or_default() as usize
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
/// A question the fixture corpus does not answer, with words too long for any line: a URL and
/// a file path.
const REFUSED: &str = "What is the melting point of tungsten, as https://materials.example.com/\
    reference-tables/high-temperature-metals/tungsten/melting-point?edition=2024&units=kelvin \
    or /mnt/shared/reference/materials/high-temperature-metals/tungsten-melting-points-2024.xlsx \
    list it?";
/// A question the scripted model answers in Markdown.
const STEPS: &str = "Which steps connect me to the office VPN?";
/// A list, emphasis and code, and markup that must stay text; every sentence is one the answer
/// checker keeps (cited, and stating only what the VPN note says).
const STEPS_ANSWER: &str = "To connect to the office VPN:\n\n\
    - Install the **WireGuard** client from the IT portal [1].\n\
    - Import the profile named `kumo-office.conf` [1].\n\
    - Sign in with your *company account* <img src=x onerror=alert(origin)> \
    <script>alert(origin)</script> [1].\n";
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
        let answer = if request.body.contains("keeps dropping") {
            FOLLOW_UP_ANSWER
        } else if request.body.contains(STEPS) {
            STEPS_ANSWER
        } else {
            VPN_ANSWER
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

async fn text_of(driver: &Driver, css: &str) -> String {
    driver.text(&driver.wait_for(css, 5).await).await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_is_a_conversation_with_streamed_cited_answers_and_refusals() {
    let model = scripted_model();
    let server = TestServer::start(ServerOptions::default()).await;
    server.add_chat_model("openai", model.url());
    server.reindex().await;
    let driver = Driver::start().await;
    open_page(&driver, &server).await;
    assert_eq!(
        text_of(&driver, "#answer-model").await,
        "answers with scripted"
    );
    let pipelines = text_of(&driver, "#pipeline").await;
    assert!(
        pipelines.contains("basic (default) — writes with scripted")
            && pipelines.contains("crag — writes with scripted")
            && pipelines.contains("extractive — quotes the documents, no model"),
        "{pipelines}"
    );

    ask(&driver, VPN_QUESTION).await;
    let partial = driver
        .wait_for_text("#turn-0 .answer", 30, |text| !text.is_empty())
        .await;
    let partial_seen = Instant::now();
    let state = text_of(&driver, "#turn-0 .turn-status").await;
    driver.screenshot("chat-streaming.png").await;
    assert!(
        partial.len() < VPN_ANSWER.len() && VPN_ANSWER.starts_with(&partial),
        "the answer appeared whole ({partial:?}), not as it streamed"
    );
    assert!(
        state.starts_with("Answering with scripted") && state.contains("checked"),
        "{state}"
    );
    let citation = driver.wait_for("#turn-0 .answer a.cite", 30).await;
    let last_piece = *model.streams()[0].sent.last().unwrap();
    assert!(
        partial_seen + PACE * 3 < last_piece,
        "the first tokens were on screen only {:?} before the last piece was sent",
        last_piece.saturating_duration_since(partial_seen)
    );
    assert_eq!(text_of(&driver, "#turn-0 .answer").await, VPN_ANSWER);
    let status = driver.wait_for("#turn-0 .turn-status", 5).await;
    assert!(!driver.displayed(&status).await, "the answer is done");
    assert!(driver.is_open("#turn-0 .sources-box").await);
    let sources = text_of(&driver, "#turn-0 .sources-box").await;
    assert!(
        !sources.contains("score"),
        "scores mean nothing to a reader: {sources}"
    );

    assert!(driver.find("#turn-0 .sources li.highlight").await.is_none());
    driver.click(&citation).await;
    let cited = driver.wait_for("#turn-0 .sources li.highlight", 5).await;
    let cited = driver.text(&cited).await;
    assert!(cited.contains("WireGuard"), "{cited}");
    driver.screenshot("chat-ask.png").await;

    ask(&driver, FOLLOW_UP).await;
    driver.wait_for("#turn-1 .answer a.cite", 30).await;
    assert_eq!(text_of(&driver, "#turn-1 .answer").await, FOLLOW_UP_ANSWER);
    let answered_with = model.requests();
    assert!(
        answered_with.last().unwrap().body.contains(CONDENSED),
        "the follow-up is answered as condensed"
    );
    let (_, listed) = server.get("/api/conversations").await;
    let id = listed["conversations"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, stored) = server.get(&format!("/api/conversations/{id}")).await;
    let asked: Vec<&str> = stored["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("{stored}"))
        .iter()
        .map(|turn| turn["question"].as_str().unwrap())
        .collect();
    assert_eq!(asked, [VPN_QUESTION, FOLLOW_UP]);
    assert_eq!(text_of(&driver, "#conversation").await, VPN_QUESTION);
    driver.execute("window.scrollTo(0, 0)", json!([])).await;
    driver.screenshot("chat-follow-up.png").await;

    ask(&driver, REFUSED).await;
    let notice = driver
        .wait_for_text("#turn-2 .notice.refusal", 30, |text| !text.is_empty())
        .await;
    assert!(notice.starts_with("Refused"), "{notice}");
    assert!(driver.find("#turn-2 .notice.degraded").await.is_none());
    assert_eq!(model.streams().len(), 2, "a refusal calls no model");
    assert!(
        !driver.is_open("#turn-2 .sources-box").await,
        "a refusal's sources answer nothing and stay folded"
    );
    driver.assert_fits("after a refusal with long words").await;
    driver.screenshot("chat-refusal.png").await;

    ask(&driver, TOO_LONG).await;
    let notice = driver
        .wait_for_text("#turn-3 .notice.degraded", 30, |text| !text.is_empty())
        .await;
    assert!(
        notice.starts_with("Degraded: ") && notice.contains("1313 tokens"),
        "{notice}"
    );
    let answer = text_of(&driver, "#turn-3 .answer").await;
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

    answers_in_markdown(&driver).await;
    stops_mid_stream(&driver, &model).await;
    reopens_an_earlier_conversation_and_a_source_in_its_document(&driver).await;
    fits_every_width(&driver).await;

    driver.assert_no_policy_violations().await;
    driver.call("DELETE", "", Value::Null).await;
}

/// A model's Markdown is lists, emphasis and code on the page; no markup in it runs.
async fn answers_in_markdown(driver: &Driver) {
    ask(driver, STEPS).await;
    driver.wait_for("#turn-1 .answer a.cite", 30).await;
    let status = driver.wait_for("#turn-1 .turn-status", 5).await;
    driver
        .wait_for_text("#turn-1 .timings", 30, |text| !text.is_empty())
        .await;
    assert!(!driver.displayed(&status).await);
    assert_eq!(driver.count("#turn-1 .answer ul > li").await, 3);
    assert_eq!(text_of(driver, "#turn-1 .answer strong").await, "WireGuard");
    assert_eq!(
        text_of(driver, "#turn-1 .answer code").await,
        "kumo-office.conf"
    );
    assert_eq!(
        text_of(driver, "#turn-1 .answer em").await,
        "company account"
    );
    assert_eq!(
        driver
            .count("#turn-1 .answer img, #turn-1 .answer script")
            .await,
        0
    );
    // The answer's checker drops the tags; what stood between them is text.
    let last = text_of(driver, "#turn-1 .answer li:last-child").await;
    assert!(
        last.contains("company account alert(origin)") && !last.contains('<'),
        "{last}"
    );
    driver.screenshot("chat-markdown.png").await;
}

/// The stop button ends the stream: the turn says it stopped, the question can be asked again,
/// and the server stops the model.
async fn stops_mid_stream(driver: &Driver, model: &MockServer) {
    let streams = model.streams().len();
    ask(driver, VPN_QUESTION).await;
    driver
        .wait_for_text("#turn-2 .answer", 30, |text| !text.is_empty())
        .await;
    let question = driver.wait_for("#question", 5).await;
    assert!(!driver.enabled(&question).await, "a question is in flight");
    driver.click(&driver.wait_for("#stop", 5).await).await;
    let notice = driver
        .wait_for_text("#turn-2 .notice.stopped", 10, |text| !text.is_empty())
        .await;
    assert!(notice.starts_with("Stopped"), "{notice}");
    assert!(driver.enabled(&question).await);
    assert!(driver.displayed(&driver.wait_for("#ask", 5).await).await);
    assert!(!driver.displayed(&driver.wait_for("#stop", 5).await).await);
    driver.screenshot("chat-stopped.png").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let stream = loop {
        let stream = model.streams()[streams].clone();
        if stream.hung_up.is_some() || Instant::now() > deadline {
            break stream;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        stream.hung_up.is_some() && stream.sent.len() < stream.planned,
        "the model kept generating after the stop: {stream:?}"
    );
    let answer = text_of(driver, "#turn-2 .answer").await;
    assert!(VPN_ANSWER.starts_with(&answer), "{answer}");
}

/// The conversation list holds the first conversation; it opens with its turns, and a source of
/// them opens in its document.
async fn reopens_an_earlier_conversation_and_a_source_in_its_document(driver: &Driver) {
    let listed = driver
        .wait_for_text("#conversations", 10, |text| text.contains("4 turns"))
        .await;
    assert!(listed.contains("2 turns"), "{listed}");
    let earlier = "#conversations li:nth-child(2) .conversation-link";
    assert!(text_of(driver, earlier).await.contains("4 turns"));
    driver.click(&driver.wait_for(earlier, 5).await).await;
    driver.wait_for("#turn-3", 10).await;
    assert_eq!(text_of(driver, "#turn-0 .question").await, VPN_QUESTION);
    assert_eq!(text_of(driver, "#turn-0 .answer").await, VPN_ANSWER);
    assert_eq!(text_of(driver, "#turn-1 .question").await, FOLLOW_UP);
    assert!(driver.find("#turn-2 .notice.refusal").await.is_some());
    assert!(driver.find("#turn-4").await.is_none());
    assert_eq!(text_of(driver, "#conversation").await, VPN_QUESTION);

    driver
        .click(&driver.wait_for("#turn-0 .answer a.cite", 5).await)
        .await;
    let cited = driver.wait_for("#turn-0 .sources li.highlight", 5).await;
    let open = driver
        .execute(
            "return arguments[0].querySelector('.open-doc')",
            json!([{ ELEMENT: cited }]),
        )
        .await;
    driver.click(open[ELEMENT].as_str().unwrap()).await;
    let current = driver
        .wait_for_text("#document-view .doc-chunk.current", 10, |text| {
            !text.is_empty()
        })
        .await;
    assert!(current.contains("WireGuard"), "{current}");
    let title = text_of(driver, "#document-title").await;
    assert!(!title.is_empty());
    driver.screenshot("document-view.png").await;
    driver.assert_fits("with the document open").await;
    driver
        .click(&driver.wait_for("#document-close", 5).await)
        .await;
    let view = driver.wait_for("#document-view", 5).await;
    assert!(!driver.displayed(&view).await);
}

/// The page with four turns, one a refusal with long words, holds from a phone to a wide
/// screen: nothing scrolls sideways.
async fn fits_every_width(driver: &Driver) {
    for (width, height) in [(390, 844), (1280, 1000), (1920, 1080)] {
        driver.set_viewport(width, height).await;
        driver.execute("window.scrollTo(0, 0)", json!([])).await;
        driver.assert_fits(&format!("at {width} px")).await;
        driver.screenshot(&format!("page-{width}.png")).await;
    }
    driver.set_viewport(390, 844).await;
    let refusal = driver.wait_for("#turn-2", 5).await;
    driver
        .execute(
            "arguments[0].scrollIntoView({block: 'start'})",
            json!([{ ELEMENT: refusal }]),
        )
        .await;
    driver.assert_fits("at 390 px, at the refusal").await;
    driver.screenshot("page-390-refusal.png").await;
    driver.set_viewport(1280, 1000).await;
}

/// An uploaded PDF's page, cited by an answer, opens as the whole file at that page.
async fn opens_a_pdf_source_at_its_page(driver: &Driver, folder: &std::path::Path) {
    let pdf = folder.join("facilities.pdf");
    let bytes = shiori_ingest::samples::pdf(&[
        "Facilities\nThe gym in building C opens at 6 am on weekdays.",
        "Cafeteria\nThe cafeteria on the ground floor serves lunch from noon.",
    ])
    .unwrap();
    std::fs::write(&pdf, bytes).unwrap();
    driver
        .type_into("#upload-file", &pdf.display().to_string())
        .await;
    driver.click(&driver.wait_for("#upload", 5).await).await;
    driver
        .wait_for_text("#upload-outcomes", 60, |text| {
            text == "facilities.pdf: indexed"
        })
        .await;
    ask(driver, "When does the gym in building C open?").await;
    let source = driver
        .wait_for_text("#turn-1-source-0", 30, |text| !text.is_empty())
        .await;
    assert!(source.contains("page 1"), "{source}");
    driver
        .click(&driver.wait_for("#turn-1-source-0 .open-doc", 5).await)
        .await;
    let current = driver
        .wait_for_text("#document-view .doc-chunk.current", 10, |text| {
            !text.is_empty()
        })
        .await;
    assert!(current.contains("gym in building C"), "{current}");
    let pages = text_of(driver, "#document-body").await;
    assert!(
        pages.contains("Page 1") && pages.contains("Page 2") && pages.contains("cafeteria"),
        "the whole file, page by page: {pages}"
    );
    let path = text_of(driver, "#document-path").await;
    assert!(path.ends_with("facilities.pdf · page 1"), "{path}");
    driver.screenshot("document-pdf.png").await;
    driver
        .click(&driver.wait_for("#document-close", 5).await)
        .await;
}

/// Files enough to make a reindex last a while (text new to the embedding cache, so every
/// chunk is embedded), one it cannot index and a blank one it indexes with a warning.
/// Notes the reindex test adds: enough batches of files (128 a batch) that the run outlasts a
/// few of the page's polls after its first batch even where embedding is fast.
const NOTES: usize = 600;

fn add_files_to_index(corpus: &std::path::Path) {
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    for i in 0..NOTES {
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
    let timings = driver
        .wait_for_text("#turn-0 .timings", 10, |text| !text.is_empty())
        .await;
    assert!(
        timings.starts_with("extractive · answered in")
            && !timings.contains("token")
            && !timings.contains('$'),
        "an answer no model wrote spent nothing: {timings}"
    );
    opens_a_pdf_source_at_its_page(&driver, upload.path()).await;

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
    // The blank file is indexed with nothing in it, and a warning.
    assert!(
        report.contains(&format!("indexed {}", NOTES + 1))
            && report.contains("1 failure(s)")
            && report.contains("1 warning(s)"),
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

/// Markdown as the page renders it, serialised: `(input, HTML)`. `[1]` is a citation the
/// answer has, `[2]` one it does not.
const MARKDOWN: [(&str, &str); 9] = [
    (
        "**Bold** and *em*, `<b>code</b>` [1] [2]",
        "<p><strong>Bold</strong> and <em>em</em>, <code>&lt;b&gt;code&lt;/b&gt;</code> \
         <a class=\"cite\" href=\"#c\">[1]</a> [2]</p>",
    ),
    (
        "Steps: [1] - one [1]. - two **2** [1].",
        "<p>Steps: <a class=\"cite\" href=\"#c\">[1]</a></p><ul><li>one \
         <a class=\"cite\" href=\"#c\">[1]</a>.</li><li>two <strong>2</strong> \
         <a class=\"cite\" href=\"#c\">[1]</a>.</li></ul>",
    ),
    (
        "3. three\n4. four\n\nAfter the list.\nA second line.",
        "<ol start=\"3\"><li>three</li><li>four</li></ol><p>After the list.<br>A second line.</p>",
    ),
    (
        "[home](https://example.com/a?b=1) [run](javascript:alert%281%29) [here](/etc/passwd) \
         see https://example.com/x.",
        "<p><a href=\"https://example.com/a?b=1\" target=\"_blank\" \
         rel=\"noopener noreferrer nofollow\">home</a> run (javascript:alert%281%29) \
         here (/etc/passwd) see <a href=\"https://example.com/x\" target=\"_blank\" \
         rel=\"noopener noreferrer nofollow\">https://example.com/x</a>.</p>",
    ),
    (
        "<img src=x onerror=alert(1)><script>alert(2)</script>",
        "<p>&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;</p>",
    ),
    (
        "```\n<b>x</b> *not em*\n```\nsnake_case_name and 2 * 3 * 4",
        "<pre><code>&lt;b&gt;x&lt;/b&gt; *not em*</code></pre><p>snake_case_name and 2 * 3 * 4</p>",
    ),
    (
        "## Heading\n> quoted _text_",
        "<p class=\"md-heading\"><strong>Heading</strong></p><blockquote><p>quoted \
         <em>text</em></p></blockquote>",
    ),
    (
        "- a\n\n- b\n  more of b\n1. other",
        "<ul><li>a</li><li>b<br>more of b</li></ul><ol><li>other</li></ol>",
    ),
    ("", ""),
];

#[tokio::test(flavor = "multi_thread")]
async fn markdown_becomes_elements_and_never_html() {
    let server = TestServer::start(ServerOptions::default()).await;
    let driver = Driver::start().await;
    open_page(&driver, &server).await;
    let render = "const cite = (n) => n === 1 ? Object.assign(document.createElement('a'), \
        {className: 'cite', href: '#c', textContent: '[1]'}) : null; \
        const box = document.createElement('div'); \
        box.append(...markdown(arguments[0], cite)); \
        return box.innerHTML.replaceAll(location.href.split('#')[0] + '#c', '#c');";
    for (input, html) in MARKDOWN {
        let rendered = driver.execute(render, json!([input])).await;
        assert_eq!(rendered.as_str(), Some(html), "{input:?}");
    }
    driver.assert_no_policy_violations().await;
    driver.call("DELETE", "", Value::Null).await;
}
