//! Conversations end to end over samples/faq: `shiori chat` fed questions on stdin and
//! `shiori ask --conversation`, with no chat model (a follow-up is searched alone, or with the
//! questions it leans on when elliptical) and
//! with a scripted OpenAI-compatible model (the `condense` step rewrites the follow-up), on both
//! stores.

#[macro_use]
mod common;

use common::*;
use serde_json::{json, Value};
use shiori_mock::{MockServer, Recorded, Reply};
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

const RATE_LIMITS: &str = "faq-009";
const STORAGE: &str = "faq-011";
const SHARING: &str = "faq-040";
const KEY_VARIABLE: &str = "SHIORI_TEST_LLM_KEY";

/// The rewrites the scripted model gives, by follow-up.
const REWRITES: [(&str, &str); 2] = [
    (
        "What about the Starter plan?",
        "What are the API rate limits on the Starter plan?",
    ),
    (
        "パスワードで保護できますか？",
        "ファイルの共有リンクはパスワードで保護できますか？",
    ),
];

/// `shiori --json chat` fed `lines`; every line it printed, parsed.
fn chat(data: &Path, args: &[&str], lines: &[&str]) -> Vec<Value> {
    let mut child = command(data)
        .env(KEY_VARIABLE, "sk-test")
        .args(["--json", "chat"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(lines.join("\n").as_bytes()).unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "shiori chat failed: {stderr}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn first_source(answer: &Value) -> &str {
    answer["sources"][0]["doc_id"].as_str().unwrap_or_default()
}

fn step<'a>(answer: &'a Value, name: &str) -> Option<&'a Value> {
    answer["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|step| step["step"] == name)
}

fn faq_store(backend: Backend) -> TestStore {
    let store = test_store(backend);
    index(&store.data, &sample_faq_dir().join("documents.jsonl"));
    store
}

/// A follow-up asked first in a conversation and then alone: the first source of each.
fn follow_up_sources(data: &Path, question: &str, follow_up: &str) -> (Value, String) {
    let answers = chat(data, &[], &[question, follow_up]);
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(
        answers[0]["conversation_id"], answers[1]["conversation_id"],
        "one conversation"
    );
    assert!(
        step(&answers[0], "condense").is_none(),
        "a first question stands alone"
    );
    let alone = run_json(data, &["ask", follow_up]);
    assert!(alone.get("conversation_id").is_none(), "{alone}");
    (answers[1].clone(), first_source(&alone).to_string())
}

fn follow_ups_without_a_chat_model(backend: Backend) {
    let store = faq_store(backend);
    let data = &store.data;
    let (follow_up, _) = follow_up_sources(
        data,
        "What are the API rate limits on the Business plan?",
        "What about the Starter plan?",
    );
    assert_eq!(first_source(&follow_up), RATE_LIMITS, "{follow_up}");
    assert_eq!(follow_up["refused"], false, "{follow_up}");
    let condense = step(&follow_up, "condense").unwrap();
    assert!(condense["model"].is_null(), "{condense}");
    assert_eq!(
        condense["output"],
        "What about the Starter plan? What are the API rate limits on the Business plan?"
    );

    // Follow-ups that alone retrieve another document.
    for (question, follow_up, expected) in [
        (
            "How much storage does a Business workspace include?",
            "What about the Starter plan?",
            STORAGE,
        ),
        (
            "共有リンクの有効期限は最長何日ですか？",
            "パスワードは付けられますか？",
            SHARING,
        ),
    ] {
        let (answer, alone) = follow_up_sources(data, question, follow_up);
        assert_eq!(first_source(&answer), expected, "{follow_up}: {answer}");
        assert_ne!(alone, expected, "{follow_up} alone finds {alone} first");
    }

    // A follow-up that names its own subject is its own question: one the documents cannot
    // answer is refused, not answered from the turn before, and a change of topic is answered
    // from the new topic's page.
    let answers = chat(
        data,
        &[],
        &[
            "How long is the verification link valid after I sign up?",
            "What is the dress code at the office?",
            "What are the API rate limits on the Business plan?",
        ],
    );
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[1]["refused"], true, "{}", answers[1]);
    assert_eq!(first_source(&answers[2]), RATE_LIMITS, "{}", answers[2]);
    assert_eq!(answers[2]["refused"], false, "{}", answers[2]);
    let condense = step(&answers[2], "condense").unwrap();
    assert_eq!(
        condense["output"], "What are the API rate limits on the Business plan?",
        "searched alone: {condense}"
    );
}

fn completion(text: &str) -> Reply {
    Reply::json(json!({
        "model": "scripted",
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 200, "completion_tokens": 20}
    }))
}

/// Rewrites the known follow-ups and answers citing the first source.
fn scripted_model() -> MockServer {
    MockServer::start(|request: &Recorded| {
        let body = request.json();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        if system.starts_with("Rewrite the follow-up question") {
            let follow_up = user
                .rsplit("Follow-up question: ")
                .next()
                .unwrap_or_default();
            match REWRITES.iter().find(|(asked, _)| *asked == follow_up) {
                Some((_, rewritten)) => completion(rewritten),
                None => Reply::status(400, "unexpected follow-up"),
            }
        } else if system.starts_with("Answer the question") {
            completion("From the first source [1].")
        } else {
            Reply::status(400, "unexpected prompt")
        }
    })
}

fn follow_ups_with_a_chat_model(backend: Backend) {
    let llm = scripted_model();
    let store = faq_store(backend);
    append_config(
        &store.data,
        &format!(
            "[llm.models.main]\nprovider = \"openai\"\nmodel = \"scripted-1\"\n\
             base_url = \"{}\"\napi_key_env = \"{KEY_VARIABLE}\"\n\n\
             [pipeline]\ndefault = \"basic\"\nanswer_model = \"main\"\n",
            llm.url()
        ),
    );
    for ((question, follow_up, expected), (_, rewritten)) in [
        (
            "What are the API rate limits on the Business plan?",
            REWRITES[0].0,
            RATE_LIMITS,
        ),
        (
            "共有リンクの有効期限は最長何日ですか？",
            REWRITES[1].0,
            SHARING,
        ),
    ]
    .into_iter()
    .zip(REWRITES)
    {
        let answers = chat(&store.data, &[], &[question, follow_up]);
        let answer = &answers[1];
        assert_eq!(first_source(answer), expected, "{answer}");
        let condense = step(answer, "condense").unwrap();
        assert_eq!(condense["output"], rewritten, "{condense}");
        assert_eq!(condense["model"], "openai:scripted-1");
        let retrieve = step(answer, "retrieve").unwrap();
        assert_eq!(
            retrieve["input"], rewritten,
            "retrieval searched the rewrite"
        );
        let condensed: Vec<Recorded> = llm
            .requests()
            .into_iter()
            .filter(|r| {
                r.json()["messages"][0]["content"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("Rewrite the follow-up question"))
            })
            .filter(|r| {
                r.json()["messages"][1]["content"]
                    .as_str()
                    .is_some_and(|s| s.ends_with(follow_up))
            })
            .collect();
        assert_eq!(condensed.len(), 1, "one rewrite per follow-up");
        let prompt = condensed[0].json()["messages"][1]["content"].clone();
        let prompt = prompt.as_str().unwrap();
        assert!(
            prompt.starts_with("<conversation>\n<turn>\nUser: ") && prompt.contains(question),
            "{prompt}"
        );
        let answered = llm.requests().into_iter().any(|r| {
            r.json()["messages"][1]["content"]
                .as_str()
                .is_some_and(|s| s.ends_with(&format!("Question: {rewritten}")))
        });
        assert!(answered, "the answer step was asked the rewritten question");
    }
}

fn chat_resumes_lists_sources_and_resets(backend: Backend) {
    let store = faq_store(backend);
    let data = &store.data;
    let printed = chat(
        data,
        &[],
        &[
            "What are the API rate limits on the Business plan?",
            "/sources",
            "/reset",
            "What about the Starter plan?",
            "/quit",
            "What is never asked?",
        ],
    );
    assert_eq!(printed.len(), 3, "{printed:?}");
    let first = &printed[0];
    assert_eq!(
        printed[1][0]["doc_id"], RATE_LIMITS,
        "/sources: {printed:?}"
    );
    assert_ne!(
        first["conversation_id"], printed[2]["conversation_id"],
        "/reset starts another conversation"
    );
    assert!(step(&printed[2], "condense").is_none());

    let id = first["conversation_id"].as_str().unwrap();
    let resumed = chat(
        data,
        &["--conversation", id],
        &["/sources", "What about the Starter plan?"],
    );
    assert_eq!(
        resumed[0][0]["doc_id"], RATE_LIMITS,
        "the last turn's sources"
    );
    assert_eq!(first_source(&resumed[1]), RATE_LIMITS);
    let asked = run_json(data, &["ask", "--conversation", id, "And on Enterprise?"]);
    assert_eq!(asked["conversation_id"], id);
    let condense = step(&asked, "condense").unwrap();
    assert!(
        condense["output"]
            .as_str()
            .unwrap()
            .starts_with("And on Enterprise? What about the Starter plan?"),
        "{condense}"
    );

    // Only the newest turn fits in 100 tokens: the older questions drop out.
    append_config(data, "[pipeline]\nhistory_tokens = 100\n");
    let bounded = run_json(
        data,
        &["ask", "--conversation", id, "What about the Starter plan?"],
    );
    assert_eq!(
        step(&bounded, "condense").unwrap()["output"],
        "What about the Starter plan? And on Enterprise?"
    );

    let unknown = "0".repeat(32);
    let output = run(
        data,
        &["ask", "--conversation", &unknown, "What about Starter?"],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no conversation with conversation_id"),
        "{stderr}"
    );
    let output = run(data, &["ask", "--conversation", "../x", "q"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("conversation_id must be 32"));
}

backend_tests!(
    follow_ups_without_a_chat_model,
    follow_ups_with_a_chat_model,
    chat_resumes_lists_sources_and_resets,
);
