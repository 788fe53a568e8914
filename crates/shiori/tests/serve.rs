//! End to end: `shiori serve` as a process, with the API key from `SHIORI_API_KEY`.

mod common;

use common::*;
use serde_json::{json, Value};
use shiori_mock::{MockServer, Reply};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command};

#[test]
fn serve_answers_over_http_behind_the_api_key() {
    let work = tempfile::tempdir().unwrap();
    copy_fixtures(&work.path().join("corpus"));
    let data = work.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("shiori.toml"),
        "[ingest]\nsources = [\"corpus\"]\n",
    )
    .unwrap();

    let mut serve = command(&data);
    serve.env("SHIORI_API_KEY", "k3y");
    let (_serving, addr, line) = start_serving(serve);
    assert!(line.contains("API key required"), "{line}");

    assert_eq!(http(&addr, "GET", "/healthz", &[], "").0, 200);
    let json = "Content-Type: application/json";
    assert_eq!(http(&addr, "POST", "/api/reindex", &[json], "").0, 401);
    let auth = "Authorization: Bearer k3y";
    let (status, body) = http(&addr, "POST", "/api/reindex", &[auth, json], "");
    assert_eq!(status, 200, "{body}");
    let question = r#"{"question": "How much storage does every workspace include?"}"#;
    let (status, body) = http(&addr, "POST", "/api/query", &[auth, json], question);
    assert_eq!(status, 200, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        answer["answer"].as_str().unwrap().contains("100 GB"),
        "{answer}"
    );
}

#[test]
fn serving_beyond_loopback_needs_a_key() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    let output = command(&data)
        .args(["serve", "--addr", "0.0.0.0:0"])
        .env_remove("SHIORI_API_KEY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("without an API key") && stderr.contains("--insecure-no-auth"),
        "{stderr}"
    );
}

/// Answerable and unanswerable questions of samples/faq, in Japanese and English.
const SAMPLE_QUESTIONS: [(&str, bool); 4] = [
    (
        "パスワードを忘れてしまいました。再設定メールのリンクはどのくらい有効ですか？",
        true,
    ),
    (
        "How long is the verification link valid after I sign up?",
        true,
    ),
    ("おいしいカレーライスの作り方を教えてください。", false),
    ("What is the capital of Peru?", false),
];

/// What must agree between two surfaces: everything but timings (and the trace's times).
fn comparable(answer: &Value) -> Value {
    let steps: Vec<Value> = answer["trace"]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no trace steps in {answer}"))
        .iter()
        .map(|step| json!([step["step"], step["model"], step["input"], step["output"]]))
        .collect();
    json!({
        "answer": answer["answer"],
        "refused": answer["refused"],
        "sources": answer["sources"],
        "citations": answer["citations"],
        "degraded": answer["degraded"],
        "pipeline": answer["trace"]["pipeline"],
        "steps": steps,
        "usage": answer["usage"],
    })
}

/// Asks every sample question through `shiori --json ask` and `POST /api/query` of a server over
/// the same data directory; both must give the same answer.
fn assert_cli_and_http_agree(data: &Path) -> Vec<Value> {
    let (_serving, addr, _) = start_serving(command(data));
    let mut answers = Vec::new();
    for (question, answerable) in SAMPLE_QUESTIONS {
        let cli = run_json(data, &["ask", question]);
        let body = json!({ "question": question }).to_string();
        let (status, http_body) = http(
            &addr,
            "POST",
            "/api/query",
            &["Content-Type: application/json"],
            &body,
        );
        assert_eq!(status, 200, "{http_body}");
        let served: Value = serde_json::from_str(&http_body).unwrap();
        assert_eq!(comparable(&cli), comparable(&served), "{question}");
        assert_eq!(cli["refused"], !answerable, "{question}: {cli}");
        answers.push(cli);
    }
    answers
}

fn sample_data_dir(work: &Path, config: &str) -> std::path::PathBuf {
    let data = work.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("shiori.toml"), config).unwrap();
    index(&data, &sample_faq_dir().join("documents.jsonl"));
    data
}

#[test]
fn the_cli_and_the_api_give_the_same_answers_without_a_chat_model() {
    let work = tempfile::tempdir().unwrap();
    let data = sample_data_dir(work.path(), "");
    let answers = assert_cli_and_http_agree(&data);
    let answered = &answers[0];
    assert_eq!(answered["citations"][0]["number"], 1, "{answered}");
    assert_eq!(
        answered["citations"][0]["chunk_id"],
        answered["sources"][0]["chunk_id"]
    );
}

#[test]
fn the_cli_and_the_api_give_the_same_answers_through_a_chat_model() {
    let llm = MockServer::start(|request| {
        let prompt = request.json()["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        // The scripted model knows which sample questions the FAQ cannot answer.
        let unanswerable = prompt.contains("カレー") || prompt.contains("Peru");
        let text = if unanswerable {
            "CANNOT_ANSWER"
        } else {
            "It is in the first source [1]."
        };
        Reply::json(json!({
            "model": "scripted",
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10}
        }))
    });
    let config = format!(
        "[pipeline]\ndefault = \"basic\"\n\n[llm.models.scripted]\nprovider = \"openai\"\n\
         model = \"scripted\"\nbase_url = \"{}\"\n",
        llm.url()
    );
    let work = tempfile::tempdir().unwrap();
    let data = sample_data_dir(work.path(), &config);
    let answers = assert_cli_and_http_agree(&data);
    assert_eq!(answers[0]["trace"]["pipeline"], "basic", "{}", answers[0]);
    assert_eq!(answers[0]["answer"], "It is in the first source [1].");
    assert_eq!(answers[0]["degraded"], Value::Null);
}

#[test]
fn a_bad_pipeline_name_in_the_config_fails_init_and_serve_with_the_valid_names() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    for table in [
        "default = \"rag-fusion\"",
        "fallback = [\"basic\", \"rag-fusion\"]",
    ] {
        std::fs::write(data.join("shiori.toml"), format!("[pipeline]\n{table}\n")).unwrap();
        for args in [&["init"][..], &["serve", "--addr", "127.0.0.1:0"]] {
            let output = run(&data, args);
            assert!(!output.status.success(), "{args:?} with {table}");
            let error = String::from_utf8_lossy(&output.stderr);
            assert!(
                error.contains("rag-fusion") && error.contains("extractive, basic, fusion"),
                "{args:?}: {error}"
            );
        }
    }
}

#[test]
fn the_cli_rejects_what_the_api_rejects() {
    let work = tempfile::tempdir().unwrap();
    let data = sample_data_dir(work.path(), "");
    let (_serving, addr, _) = start_serving(command(&data));
    for (flags, body) in [
        (vec!["--top-k", "1000000"], json!({"top_k": 1_000_000})),
        (vec!["--top-k", "0"], json!({"top_k": 0})),
        (vec!["--threshold", "5"], json!({"threshold": 5.0})),
        (vec!["--threshold=-2"], json!({"threshold": -2.0})),
        (
            vec!["--refusal", "balanced", "--threshold", "0.5"],
            json!({"refusal": "balanced", "threshold": 0.5}),
        ),
    ] {
        let mut args = vec!["ask", "How long is the verification link valid?"];
        args.extend(&flags);
        let output = run(&data, &args);
        assert!(!output.status.success(), "{flags:?}");
        let cli_error = String::from_utf8_lossy(&output.stderr).to_string();
        let mut request = body.clone();
        request["question"] = json!("How long is the verification link valid?");
        let (status, http_body) = http(
            &addr,
            "POST",
            "/api/query",
            &["Content-Type: application/json"],
            &request.to_string(),
        );
        assert_eq!(status, 400, "{body} → {http_body}");
        let message: Value = serde_json::from_str(&http_body).unwrap();
        let message = message["error"]["message"].as_str().unwrap();
        assert!(cli_error.contains(message), "{cli_error} vs {message}");
    }
    let output = run(&data, &["ask", "q", "--threshold", "NaN"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("threshold"));
}

/// Sends `signal` to the process the way `kill(1)` does.
fn send_signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} failed");
}

#[test]
fn sigterm_stops_the_server_within_five_seconds_while_an_answer_streams() {
    // A model that would take 60 s to finish its answer.
    let llm = MockServer::start(|_| {
        let pieces: Vec<String> = (0..300)
            .map(|i| {
                json!({"choices": [{"index": 0, "delta": {"content": format!("w{i} ")}}]})
                    .to_string()
            })
            .collect();
        Reply::paced_sse(&pieces, std::time::Duration::from_millis(200))
    });
    let config = format!(
        "[llm.models.scripted]\nprovider = \"openai\"\nmodel = \"scripted\"\nbase_url = \"{}\"\n",
        llm.url()
    );
    let work = tempfile::tempdir().unwrap();
    let data = sample_data_dir(work.path(), &config);
    let (mut serving, addr, _) = start_serving(command(&data));

    let mut stream = TcpStream::connect(&addr).unwrap();
    let body =
        json!({"question": "What are the API rate limits on the Business plan?"}).to_string();
    write!(
        stream,
        "POST /api/query HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    while !line.starts_with("event: token") {
        line.clear();
        assert_ne!(
            reader.read_line(&mut line).unwrap(),
            0,
            "the stream ended before a token"
        );
    }

    let signalled = std::time::Instant::now();
    send_signal(&serving.0, "TERM");
    let status = loop {
        if let Some(status) = serving.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            signalled.elapsed() < std::time::Duration::from_secs(5),
            "still running 5 s after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    let streams = llm.streams();
    assert!(
        streams.iter().all(|s| s.sent.len() < s.planned),
        "the upstream answer was not cut short: {streams:?}"
    );
}

/// Issue 47: a server started before `shiori index` edits one file and removes another serves
/// the new index within five seconds of the index finishing, without a restart or Reindex.
#[test]
fn a_running_server_serves_what_the_cli_indexed_since_it_started() {
    let work = tempfile::tempdir().unwrap();
    let docs = work.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("lounge.md"), "The staff lounge opens at 7 am.\n").unwrap();
    std::fs::write(docs.join("parking.md"), "Visitors park on level B2.\n").unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    append_config(&data, "[ingest]\nsources = [\"docs\"]\n");
    run_json(&data, &["index"]);
    let (_serving, addr, _) = start_serving(command(&data));
    let json = "Content-Type: application/json";
    let question = r#"{"question": "When does the staff lounge open?"}"#;
    let served = || {
        let (status, files) = http(&addr, "GET", "/api/documents", &[], "");
        assert_eq!(status, 200, "{files}");
        let files: Value = serde_json::from_str(&files).unwrap();
        let (status, answer) = http(&addr, "POST", "/api/query", &[json], question);
        assert_eq!(status, 200, "{answer}");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        (files, answer["answer"].as_str().unwrap().to_string())
    };
    let (files, answer) = served();
    assert!(
        files["indexed_files"] == 2 && answer.contains("7 am"),
        "{files} {answer}"
    );

    std::fs::write(docs.join("lounge.md"), "The staff lounge opens at 9 am.\n").unwrap();
    std::fs::remove_file(docs.join("parking.md")).unwrap();
    let report = run_json(&data, &["index"]);
    assert_eq!(report["files_removed"], 1, "{report}");
    let indexed = std::time::Instant::now();
    loop {
        let (files, answer) = served();
        if files["indexed_files"] == 1 && answer.contains("9 am") {
            break;
        }
        assert!(
            indexed.elapsed() < std::time::Duration::from_secs(5),
            "still served 5 s after the index finished: {files} {answer}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
