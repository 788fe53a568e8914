//! End to end: `shiori ask --pipeline …` against scripted OpenAI-compatible and Tavily servers
//! on 127.0.0.1, over the fixture corpus.

mod common;

use common::*;
use serde_json::{json, Value};
use shiori_mock::{MockServer, Recorded, Reply};
use std::path::Path;

const QUESTION: &str = "How much storage does every workspace include?";
const WEB_URL: &str = "https://example.org/storage-plans";
const KEY_VARIABLE: &str = "SHIORI_TEST_LLM_KEY";
const KEY: &str = "sk-test-secret";

fn completion(text: &str) -> Reply {
    Reply::json(json!({
        "model": "scripted",
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100}
    }))
}

fn prompt(request: &Recorded) -> (String, String) {
    let body = request.json();
    let text = |index: usize| {
        body["messages"][index]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    (text(0), text(1))
}

/// The number the prompt gives the source whose heading contains `needle`.
fn number_of(prompt: &str, needle: &str) -> Option<usize> {
    prompt.lines().find_map(|line| {
        let (number, heading) = line.strip_prefix('[')?.split_once(']')?;
        heading
            .contains(needle)
            .then(|| number.parse().ok())
            .flatten()
    })
}

/// Plays every LLM step: grades documents without "100 GB" irrelevant, cites the storage source, the web
/// result when there is one, and a made-up [7].
fn scripted_llm() -> MockServer {
    MockServer::start(|request| {
        if request.header("authorization") != Some(&format!("Bearer {KEY}")) {
            return Reply::status(401, r#"{"error":{"message":"missing key"}}"#);
        }
        let (system, user) = prompt(request);
        if system.starts_with("You grade") {
            let document = user.split("Document:").nth(1).unwrap_or_default();
            let grade = if document.contains("100 GB") {
                "relevant"
            } else {
                "irrelevant"
            };
            completion(&json!({"grade": grade}).to_string())
        } else if system.starts_with("You keep") {
            completion(r#"{"relevant": [1]}"#)
        } else if system.starts_with("Rewrite the question") {
            completion("workspace storage quota")
        } else if system.starts_with("Rank the passages") {
            let last = user.matches("<passage number=").count();
            completion(&json!({"ranking": (1..=last).rev().collect::<Vec<_>>()}).to_string())
        } else if system.starts_with("Answer the question") {
            let Some(storage) = number_of(&user, "Storage quota") else {
                return completion("CANNOT_ANSWER");
            };
            let web = number_of(&user, WEB_URL)
                .map(|n| format!(" Plans are listed online [{n}]."))
                .unwrap_or_default();
            completion(&format!(
                "Every workspace includes 100 GB [{storage}].{web} Refunds are instant [7]."
            ))
        } else {
            Reply::status(400, "unexpected prompt")
        }
    })
}

fn tavily() -> MockServer {
    MockServer::start(|_| {
        Reply::json(json!({"results": [
            {"title": "Storage plans", "url": WEB_URL, "content": "Plans start at 100 GB per workspace."}
        ]}))
    })
}

/// A data directory with the fixture corpus indexed and `config` appended to its shiori.toml.
fn data_dir(work: &Path, config: &str) -> std::path::PathBuf {
    let corpus = work.join("corpus");
    copy_fixtures(&corpus);
    let data = work.join("data");
    index(&data, &corpus);
    let path = data.join("shiori.toml");
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push_str(config);
    std::fs::write(&path, text).unwrap();
    data
}

fn llm_config(url: &str) -> String {
    format!(
        r#"
[llm.models.main]
provider = "openai"
model = "scripted-1"
base_url = "{url}"
api_key_env = "{KEY_VARIABLE}"
input_per_million = 2.0
output_per_million = 10.0

[llm.retry]
max_retries = 2
base_delay_ms = 10
max_delay_ms = 100

[pipeline]
answer_model = "main"
"#
    )
}

fn ask(data: &Path, args: &[&str]) -> Value {
    ask_about(data, QUESTION, args)
}

fn ask_about(data: &Path, question: &str, args: &[&str]) -> Value {
    let output = command(data)
        .env(KEY_VARIABLE, KEY)
        .arg("--json")
        .arg("ask")
        .arg(question)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "shiori ask {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn steps(answer: &Value) -> Vec<String> {
    answer["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["step"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn basic_pipeline_cites_sources_checks_citations_and_costs_tokens() {
    let llm = scripted_llm();
    let work = tempfile::tempdir().unwrap();
    let data = data_dir(work.path(), &llm_config(llm.url()));

    let answer = ask(&data, &["--pipeline", "basic"]);
    assert_eq!(answer["refused"], false, "{answer}");
    let text = answer["answer"].as_str().unwrap();
    assert!(text.contains("100 GB ["), "{text}");
    assert!(
        !text.contains("[7]"),
        "the fabricated citation is removed: {text}"
    );
    let citations = answer["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 1, "{answer}");
    assert_eq!(citations[0]["doc_id"], "faq-storage");
    let number = citations[0]["number"].as_u64().unwrap() as usize;
    assert_eq!(answer["sources"][number - 1]["doc_id"], "faq-storage");
    assert_eq!(
        steps(&answer),
        vec!["retrieve", "answer", "check_citations"]
    );
    let check = &answer["trace"]["steps"][2]["output"];
    assert!(check.as_str().unwrap().contains("[7]"), "{check}");
    assert_eq!(answer["trace"]["steps"][1]["model"], "openai:scripted-1");
    assert_eq!(answer["usage"]["prompt_tokens"], 1000);
    assert_eq!(answer["usage"]["completion_tokens"], 100);
    // 1000 tokens at $2/M in + 100 at $10/M out.
    assert!(
        (answer["cost_usd"].as_f64().unwrap() - 0.003).abs() < 1e-9,
        "{answer}"
    );

    let config = std::fs::read_to_string(data.join("shiori.toml")).unwrap();
    assert!(!config.contains(KEY), "keys stay in the environment");

    let text = command(&data)
        .env(KEY_VARIABLE, KEY)
        .args(["ask", QUESTION, "--pipeline", "basic"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Trace (basic)") && text.contains("check_citations"),
        "{text}"
    );
    assert!(text.contains("cost $0.003000"), "{text}");
}

/// With the default refusal (the embedder's calibrated model at its balanced cut), the gate
/// refuses an unrelated question before any model call, says why, and lets an in-corpus
/// question through to the model.
#[test]
fn basic_refuses_an_unrelated_question_without_calling_the_model() {
    let llm = MockServer::start(|_| completion("Every workspace includes 100 GB [1]."));
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    index(&data, &sample_faq_dir().join("documents.jsonl"));
    append_config(&data, &llm_config(llm.url()));
    let answer = ask_about(
        &data,
        "What is the capital of Peru?",
        &["--pipeline", "basic"],
    );
    assert_eq!(answer["refused"], true, "{answer}");
    assert_eq!(steps(&answer), vec!["gate"], "{answer}");
    let gate = &answer["trace"]["steps"][0];
    let output = gate["output"].as_str().unwrap();
    assert!(
        output.contains("without calling the answer model"),
        "{output}"
    );
    let reason = gate["input"].as_str().unwrap();
    for part in [
        "calibrated model, balanced",
        "score",
        "< cut",
        "best cosine",
        "BM25 z",
    ] {
        assert!(reason.contains(part), "{part}: {reason}");
    }
    assert!(llm.requests().is_empty(), "the model was called");

    let answered = ask_about(
        &data,
        "How much storage does every workspace include?",
        &["--pipeline", "basic"],
    );
    assert_eq!(answered["refused"], false, "{answered}");
    assert!(answered["answer"].as_str().unwrap().contains("100 GB"));
    assert!(
        !steps(&answered).contains(&"gate".to_string()),
        "{answered}"
    );
    assert_eq!(llm.requests().len(), 1);
}

#[test]
fn crag_searches_the_web_when_a_document_is_irrelevant_and_cites_the_result() {
    let llm = scripted_llm();
    let web = tavily();
    let work = tempfile::tempdir().unwrap();
    let config = format!(
        "{}\n[web_search]\nprovider = \"tavily\"\nbase_url = \"{}\"\napi_key_env = \"{KEY_VARIABLE}\"\n",
        llm_config(llm.url()),
        web.url()
    );
    let data = data_dir(work.path(), &config);
    let answer = ask(&data, &["--pipeline", "crag", "--top-k", "3"]);
    let trace = steps(&answer);
    assert!(trace.contains(&"web_search".to_string()), "{trace:?}");
    let searches = web.requests();
    assert_eq!(searches.len(), 1);
    assert_eq!(searches[0].json()["query"], "workspace storage quota");
    assert_eq!(
        searches[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let cited: Vec<&str> = answer["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["source"].as_str().unwrap())
        .collect();
    assert!(cited.contains(&WEB_URL), "{answer}");
    assert!(answer["sources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["source"] == WEB_URL));
}

#[test]
fn a_permanent_error_falls_back_down_the_chain_to_extractive() {
    let llm = scripted_llm();
    let work = tempfile::tempdir().unwrap();
    let data = data_dir(work.path(), &llm_config(llm.url()));
    // Without the key the scripted server answers 401: a permanent error, never retried.
    let output = command(&data)
        .env_remove(KEY_VARIABLE)
        .args(["--json", "ask", QUESTION, "--pipeline", "fusion-crag"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["trace"]["pipeline"], "extractive");
    let trace = steps(&answer);
    assert_eq!(&trace[..2], &["fallback", "fallback"], "{answer}");
    assert!(answer["trace"]["steps"][0]["input"]
        .as_str()
        .unwrap()
        .contains("fusion-crag failed"));
    assert_eq!(
        answer["trace"]["steps"][1]["output"],
        "falling back to extractive"
    );
    assert!(
        answer["answer"].as_str().unwrap().contains("100 GB"),
        "{answer}"
    );
    assert_eq!(
        llm.requests().len(),
        2,
        "one call per LLM pipeline, no retries"
    );
}

#[test]
fn without_a_chat_model_pipelines_answer_extractively_and_say_so() {
    let work = tempfile::tempdir().unwrap();
    let data = data_dir(work.path(), "");
    let answer = ask(&data, &["--pipeline", "crag"]);
    assert_eq!(answer["trace"]["pipeline"], "extractive");
    assert_eq!(answer["trace"]["steps"][0]["step"], "degrade");
    assert!(
        answer["answer"].as_str().unwrap().contains("100 GB"),
        "{answer}"
    );

    let unknown = run(&data, &["ask", QUESTION, "--pipeline", "rag-fusion"]);
    assert!(!unknown.status.success());
    let error = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        error.contains("rag-fusion") && error.contains("fusion-crag"),
        "{error}"
    );
}

#[test]
fn rerank_reorders_search_hits_with_the_llm() {
    let llm = scripted_llm();
    let work = tempfile::tempdir().unwrap();
    let data = data_dir(work.path(), &llm_config(llm.url()));
    let ids = |args: &[&str]| -> Vec<String> {
        let output = command(&data)
            .env(KEY_VARIABLE, KEY)
            .args(["--json", "search", "storage quota", "--top-k", "3"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let result: Value = serde_json::from_slice(&output.stdout).unwrap();
        result["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["chunk_id"].as_str().unwrap().to_string())
            .collect()
    };
    let plain = ids(&[]);
    let reranked = ids(&["--rerank"]);
    assert_eq!(plain.len(), 3);
    let reversed: Vec<String> = plain.iter().rev().cloned().collect();
    assert_eq!(
        reranked, reversed,
        "the scripted ranker ranks the last passage first"
    );
}

#[test]
fn ask_reranks_in_the_retrieval_stage() {
    let llm = scripted_llm();
    let work = tempfile::tempdir().unwrap();
    let data = data_dir(work.path(), &llm_config(llm.url()));
    let source_ids = |answer: &Value| -> Vec<String> {
        answer["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["chunk_id"].as_str().unwrap().to_string())
            .collect()
    };
    let plain = ask(&data, &["--pipeline", "extractive", "--top-k", "3"]);
    let reranked = ask(
        &data,
        &["--pipeline", "extractive", "--top-k", "3", "--rerank"],
    );
    let mut reversed = source_ids(&plain);
    reversed.reverse();
    assert_eq!(source_ids(&reranked), reversed, "{reranked}");
    let names = steps(&reranked);
    let retrieve = names.iter().position(|s| s == "retrieve").unwrap();
    assert_eq!(names[retrieve + 1], "rerank", "{names:?}");
    let step = &reranked["trace"]["steps"][retrieve + 1];
    assert!(
        step["input"].as_str().unwrap().starts_with("llm:"),
        "{step}"
    );
    assert!(!steps(&plain).contains(&"rerank".to_string()));
}

#[test]
fn eval_judges_answers_with_usage_and_cost() {
    let judge = MockServer::start(|request| {
        let (system, _) = prompt(request);
        if system.starts_with("You judge") {
            completion(
                r#"{"faithfulness": 1.0, "answer_relevance": 0.5, "context_relevance": 0.5, "correctness": 1.0}"#,
            )
        } else {
            completion("The link expires after 24 hours [1].")
        }
    });
    let work = tempfile::tempdir().unwrap();
    let dataset = work.path().join("dataset");
    std::fs::create_dir_all(&dataset).unwrap();
    std::fs::write(
        dataset.join("documents.jsonl"),
        concat!(
            r#"{"doc_id": "signup", "title": "Sign-up", "text": "The verification link expires after 24 hours."}"#, "\n",
            r#"{"doc_id": "storage", "title": "Storage", "text": "Every workspace includes 100 GB of storage."}"#, "\n",
        ),
    )
    .unwrap();
    std::fs::write(
        dataset.join("qa.jsonl"),
        concat!(
            r#"{"id": "q1", "question": "How long is the verification link valid?", "gold_doc_id": "signup", "answers": ["24 hours"]}"#, "\n",
            r#"{"id": "q2", "question": "How much storage is included?", "gold_doc_id": "storage", "answers": ["100 GB"]}"#, "\n",
        ),
    )
    .unwrap();
    let data = work.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("shiori.toml"), llm_config(judge.url())).unwrap();
    let output = command(&data)
        .env(KEY_VARIABLE, KEY)
        .args([
            "--json",
            "eval",
            dataset.to_str().unwrap(),
            "--judge",
            "main",
            "--pipeline",
            "basic",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let judged = &report["judge"];
    assert_eq!(judged["judge"], "openai:scripted-1", "{report}");
    assert_eq!(judged["judged"], 2);
    assert_eq!(judged["faithfulness"], 1.0);
    assert_eq!(judged["answer_relevance"], 0.5);
    assert_eq!(judged["answer_correctness"], 1.0);
    assert_eq!(judged["answer_usage"]["prompt_tokens"], 2000);
    assert_eq!(judged["judge_usage"]["completion_tokens"], 200);
    // Four calls of 1000 tokens in ($2/M) and 100 out ($10/M).
    assert!(
        (judged["cost_usd"].as_f64().unwrap() - 0.012).abs() < 1e-9,
        "{report}"
    );
    assert!(report["ndcg@10"].is_number());
    assert_eq!(
        judge.requests().len(),
        4,
        "one answer and one judgement per query: the judge reads the answer pass's answers"
    );
    let answers = &report["answers"];
    assert_eq!(answers["pipeline"], "basic", "{report}");
    assert_eq!(answers["queries"], 2);
    // The scripted reply holds q1's 24 hours; for q2 its source states no 24, so the checker
    // stops it and the sentence quoted from the source answers instead, saying so.
    assert_eq!(answers["accuracy"], 1.0, "{report}");
    assert_eq!(answers["degraded"], 1, "{report}");
}
