//! End to end with no network: the basic pipeline answers from the sample corpus with
//! SmolLM2-135M-Instruct run locally on llama.cpp (fetched by `shiori models fetch`), citing real
//! sources; CRAG's graders reply with the JSON they are asked for, every time; the agent's tool
//! calls from Qwen2.5-Coder-0.5B (fetched by `shiori models fetch qwen2.5-coder-0.5b`) are parsed
//! and run; and `shiori serve` streams its tokens as they are generated.

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const QUESTION: &str = "How many API requests per minute does the Business plan allow?";

/// The tests here run one at a time: llama.cpp's OpenMP threads spin while they wait, so two
/// local models generating at once on a 2-core machine slowed each other to a token every 3 s.
fn one_local_model_at_a_time() -> MutexGuard<'static, ()> {
    static LOCAL_MODEL: Mutex<()> = Mutex::new(());
    LOCAL_MODEL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// samples/faq indexed, with the local model `model` answering.
fn local_model_data_dir(work: &Path, model: &str) -> PathBuf {
    let data = work.join("data");
    index(&data, &sample_faq_dir().join("documents.jsonl"));
    let config = data.join("shiori.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.push_str(&format!(
        r#"
[llm.models.local]
provider = "local"
model = "{model}"

[pipeline]
answer_model = "local"
max_tokens = 120
"#
    ));
    std::fs::write(&config, text).unwrap();
    data
}

#[test]
fn the_basic_pipeline_answers_with_a_local_model_and_cites_a_real_source() {
    let _alone = one_local_model_at_a_time();
    let work = tempfile::tempdir().unwrap();
    let data = local_model_data_dir(work.path(), "smollm2");

    let answer = run_json(
        &data,
        &["ask", QUESTION, "--pipeline", "basic", "--top-k", "3"],
    );
    let sources = answer["sources"].as_array().unwrap();
    let citations = answer["citations"].as_array().unwrap();
    assert!(!citations.is_empty(), "no citation in {answer:#}");
    for citation in citations {
        let number = citation["number"].as_u64().unwrap() as usize;
        assert!(
            (1..=sources.len()).contains(&number),
            "citation [{number}] with {} sources",
            sources.len()
        );
    }
    let steps = answer["trace"]["steps"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s["model"].as_str().is_some_and(|m| m.starts_with("local:"))),
        "no step ran the local model: {steps:#?}"
    );
    assert!(answer["usage"]["completion_tokens"].as_u64().unwrap() > 0);
}

/// llama.cpp warns on every load that Qwen's vocabulary needed repairs it then makes itself;
/// that is a debug line, so an answer comes with no warning, and the line is there at debug.
#[test]
fn asking_a_local_model_prints_no_warning() {
    let _alone = one_local_model_at_a_time();
    let work = tempfile::tempdir().unwrap();
    let data = local_model_data_dir(work.path(), "qwen2.5-coder-0.5b");
    let ask = ["ask", QUESTION, "--pipeline", "basic", "--top-k", "2"];
    for (log_filter, repairs_shown) in [(None, false), (Some("llama.cpp=debug"), true)] {
        let mut command = command(&data);
        command.args(ask).env_remove("SHIORI_LOG");
        if let Some(filter) = log_filter {
            command.env("SHIORI_LOG", filter);
        }
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert!(!stderr.contains("WARN"), "{log_filter:?}: {stderr}");
        assert_eq!(
            stderr.contains("control-looking token"),
            repairs_shown,
            "{log_filter:?}: {stderr}"
        );
    }
}

#[test]
fn the_agents_tool_calls_from_a_local_qwen_come_back_parsed_and_run() {
    let _alone = one_local_model_at_a_time();
    let work = tempfile::tempdir().unwrap();
    let data = local_model_data_dir(work.path(), "qwen2.5-coder-0.5b");

    let answer = run_json(&data, &["ask", QUESTION, "--pipeline", "agentic"]);
    let steps = answer["trace"]["steps"].as_array().unwrap();
    let outputs: Vec<(&str, &str)> = steps
        .iter()
        .map(|s| (s["step"].as_str().unwrap(), s["output"].as_str().unwrap()))
        .collect();
    let ran = outputs
        .windows(2)
        .filter(|pair| {
            let (agent, tool) = (pair[0], pair[1]);
            agent.0 == "agent"
                && agent.1.starts_with(&format!("tool calls: {}(", tool.0))
                && ["search", "calculate", "compare"].contains(&tool.0)
        })
        .count();
    assert!(ran > 0, "no tool call ran: {outputs:#?}");
    let text = answer["answer"].as_str().unwrap();
    assert!(
        !text.contains("<tool_call>") && !text.trim_start().starts_with("{\"name\""),
        "a tool call came back as the answer: {text}"
    );
}

/// The first `count` questions of the sample set (English and Japanese).
fn sample_questions(count: usize) -> Vec<String> {
    let text = std::fs::read_to_string(sample_faq_dir().join("qa.jsonl")).unwrap();
    text.lines()
        .take(count)
        .map(|line| {
            let record: Value = serde_json::from_str(line).unwrap();
            record["question"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn crag_grades_are_valid_json_on_every_run() {
    let _alone = one_local_model_at_a_time();
    let work = tempfile::tempdir().unwrap();
    let data = local_model_data_dir(work.path(), "smollm2");
    let mut grades = 0;
    let mut refined = 0;
    for question in sample_questions(20) {
        let answer = run_json(
            &data,
            &["ask", &question, "--pipeline", "crag", "--top-k", "2"],
        );
        let steps = answer["trace"]["steps"].as_array().unwrap();
        for step in steps {
            let output = step["output"].as_str().unwrap_or_default();
            match step["step"].as_str() {
                Some("grade") => {
                    let reply: Value = serde_json::from_str(output)
                        .unwrap_or_else(|e| panic!("{question}: grade {output:?}: {e}"));
                    let grade = reply["grade"].as_str().unwrap_or_default();
                    assert!(
                        ["relevant", "ambiguous", "irrelevant"].contains(&grade),
                        "{question}: {reply}"
                    );
                    grades += 1;
                }
                Some("refine") => {
                    let reply: Value = serde_json::from_str(output)
                        .unwrap_or_else(|e| panic!("{question}: refine {output:?}: {e}"));
                    assert!(reply["relevant"].is_array(), "{question}: {reply}");
                    refined += 1;
                }
                _ => {}
            }
        }
    }
    // Questions the gate refuses grade nothing; most of the sample set is answerable.
    assert!(grades >= 20, "only {grades} grades over 20 questions");
    eprintln!("crag: {grades} grades and {refined} refinements, all valid JSON");
}

/// Each server-sent event's name and data, with when it arrived.
fn read_events(reader: impl BufRead, started: Instant) -> Vec<(String, Value, Duration)> {
    let mut events = Vec::new();
    let mut name = String::new();
    for line in reader.lines() {
        let line = line.unwrap();
        if let Some(event) = line.strip_prefix("event: ") {
            name = event.to_string();
        } else if let Some(data) = line.strip_prefix("data: ") {
            let value = serde_json::from_str(data).unwrap_or(Value::Null);
            events.push((name.clone(), value, started.elapsed()));
            if name == "done" || name == "error" {
                break;
            }
        }
    }
    events
}

#[test]
fn the_local_models_tokens_stream_over_http_as_they_are_generated() {
    let _alone = one_local_model_at_a_time();
    let work = tempfile::tempdir().unwrap();
    let data = local_model_data_dir(work.path(), "smollm2");
    let (_serving, addr, _) = start_serving(command(&data));
    // One source: SmolLM2-135M then writes several sentences the checker keeps. Given three,
    // its first sentence may state another source's number; the checker stops it there and
    // the answer is quoted whole, in one token event.
    let body =
        serde_json::json!({"question": QUESTION, "pipeline": "basic", "top_k": 1}).to_string();
    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "POST /api/query HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let events = read_events(BufReader::new(stream), Instant::now());

    let (last_name, answer, done_at) = events.last().unwrap();
    assert_eq!(last_name, "done", "{events:?}");
    let tokens: Vec<&Duration> = events
        .iter()
        .filter(|(name, _, _)| name == "token")
        .map(|(_, _, at)| at)
        .collect();
    assert!(
        tokens.len() >= 2,
        "{} token events: {events:?}",
        tokens.len()
    );
    let first = *tokens[0];
    // Checked sentences stream as the model finishes each: the first arrives while the model
    // still writes, well before the answer is done.
    assert!(
        *done_at - first >= Duration::from_millis(100),
        "first sentence at {first:?}, done at {done_at:?}"
    );
    let streamed: String = events
        .iter()
        .filter(|(name, _, _)| name == "token")
        .map(|(_, data, _)| data["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        streamed, answer["answer"],
        "the stream carries exactly the answer: {events:?}"
    );
    assert!(
        answer["timings_ms"]["first_token_ms"].as_f64().is_some(),
        "{answer}"
    );
    eprintln!(
        "local basic: first token {:.0} ms, total {:.0} ms (server timings {})",
        first.as_secs_f64() * 1000.0,
        done_at.as_secs_f64() * 1000.0,
        answer["timings_ms"]
    );
}

#[test]
fn bench_generate_times_a_local_model_and_names_the_kernels_it_ran() {
    let _alone = one_local_model_at_a_time();
    let work = tempfile::tempdir().unwrap();
    let corpus = sample_faq_dir().join("documents.jsonl");
    let result = run_json(
        &work.path().join("data"),
        &[
            "bench",
            "generate",
            corpus.to_str().unwrap(),
            "--prompt-tokens",
            "128",
            "--max-tokens",
            "4",
            "--runs",
            "1",
        ],
    );
    assert!(result["prompt_tokens"].as_u64().unwrap() >= 64, "{result}");
    assert!(result["prompt_tokens_per_second"].as_f64().unwrap() > 0.0);
    assert!(result["peak_rss_mb"].as_f64().unwrap() > 0.0);
    assert!(result["load_seconds"].as_f64().is_some());
    let kernels = result["kernels"].as_str().unwrap();
    #[cfg(target_arch = "x86_64")]
    assert!(kernels.split(' ').any(|name| name == "AVX2"), "{result}");
    assert!(!kernels.is_empty());
}
