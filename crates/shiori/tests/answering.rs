//! End to end: extractive answers, refusals and the evaluator on the sample corpus.

#[macro_use]
mod common;

use common::*;

backend_tests!(
    answers_with_sources_and_refuses_what_the_corpus_cannot_answer,
    evaluates_the_sample_corpus
);

fn answers_with_sources_and_refuses_what_the_corpus_cannot_answer(backend: Backend) {
    let store = test_store(backend);
    let work = &store.work;
    let corpus = work.path().join("corpus");
    copy_fixtures(&corpus);
    let data = work.path().join("data");
    index(&data, &corpus);

    let answer = run_json(
        &data,
        &["ask", "How much storage does every workspace include?"],
    );
    assert_eq!(answer["refused"], false, "{answer}");
    assert!(
        answer["answer"].as_str().unwrap().contains("100 GB"),
        "{answer}"
    );
    let first = &answer["sources"][0];
    for key in ["doc_id", "chunk_id", "title", "source", "score", "text"] {
        assert!(!first[key].is_null(), "source lacks {key}: {first}");
    }
    assert!(answer["timings_ms"]["total_ms"].as_f64().unwrap() > 0.0);

    let refusal = run_json(&data, &["ask", "What is the melting point of tungsten?"]);
    assert_eq!(refusal["refused"], true, "{refusal}");

    let empty = run(&data, &["ask", "   "]);
    assert!(!empty.status.success());
    assert!(String::from_utf8_lossy(&empty.stderr).contains("empty"));
}

fn evaluates_the_sample_corpus(backend: Backend) {
    let store = test_store(backend);
    let work = &store.work;
    let data = work.path().join("data");
    let report = run_json(
        &data,
        &[
            "eval",
            sample_faq_dir().to_str().unwrap(),
            "--mode",
            "hybrid",
            "--sweep-threshold",
        ],
    );
    for key in [
        "ndcg@10",
        "recall@10",
        "precision@10",
        "mrr@10",
        "hit@1",
        "hit@5",
        "hit@10",
        "no_answer_accuracy",
        "answer_rate",
        "answer_in_top1",
        "latency_p50_ms",
        "latency_p95_ms",
    ] {
        assert!(report[key].is_number(), "{key} missing: {report}");
    }
    assert_eq!(report["queries"], 60, "{report}");
    assert!(report["ndcg@10"].as_f64().unwrap() > 0.7, "{report}");
    assert_eq!(
        report["threshold_sweep"].as_array().unwrap().len(),
        shiori_eval::sweep_grid().len()
    );
    let targets = report["refusal_sweep"].as_array().unwrap();
    assert_eq!(targets.len(), shiori_eval::target_grid().len());
    assert_eq!(targets[0]["refusal"], "balanced", "{report}");
    assert_eq!(
        targets[0]["answer_rate"], report["answer_rate"],
        "the default is balanced: its sweep row is the run itself"
    );
}

/// Short English questions a user would type over the sample FAQ ("What is the SLA uptime?")
/// are answered at the default refusal, and those the FAQ cannot answer are refused (issue 30:
/// the model fitted on Japanese and MS MARCO alone answered 23 of the 34). The refusal's
/// sentence coverage, read from the ranked chunks' text, stays within 0..=1, and the first chunk
/// of a question the FAQ answers holds more of its rare words in one sentence than that of a
/// question it cannot answer.
#[test]
fn answers_natural_english_questions_over_the_faq() {
    let store = test_store(Backend::Embedded);
    let data = store.work.path().join("data");
    let dataset =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/faq-natural-en");
    let per_query = store.work.path().join("per-query.jsonl");
    let report = run_json(
        &data,
        &[
            "eval",
            dataset.to_str().unwrap(),
            "--mode",
            "hybrid",
            "--per-query",
            per_query.to_str().unwrap(),
        ],
    );
    let answered = report["answer_rate"].as_f64().unwrap();
    let refused = report["no_answer_accuracy"].as_f64().unwrap();
    assert!(answered >= 0.9, "answer rate {answered}: {report}");
    assert!(refused >= 0.8, "no-answer accuracy {refused}: {report}");

    let (mut answerable, mut unanswerable) = (Vec::new(), Vec::new());
    for line in std::fs::read_to_string(&per_query).unwrap().lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        if row["query_id"] == "n-033" {
            // "When is payday?", answered only by a page written in Japanese: no word is
            // shared, the cosine sits lower across languages, and the gate must still answer.
            assert_eq!(row["signals"]["cross_language"], 1.0, "{row}");
            assert_eq!(row["refused"], false, "{row}");
            assert_eq!(row["mrr@10"], 1.0, "{row}");
        }
        let coverage = row["signals"]["sentence_coverage"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&coverage), "{row}");
        match row["answerable"].as_bool().unwrap() {
            true => answerable.push(coverage),
            false => unanswerable.push(coverage),
        }
    }
    assert!(
        mean(&answerable) > mean(&unanswerable) + 0.1,
        "answerable {answerable:?}, unanswerable {unanswerable:?}"
    );
}

/// What a new user gets: `init` with the models `shiori models fetch` installed (the local chat
/// model configured, the extractive answer the default), over samples/faq, the quickstart's
/// three questions: short quoted answers with the right content, cited, and a refusal, without
/// loading the chat model.
#[test]
fn the_quickstart_questions_with_init_defaults_are_answered_in_content() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let init = run_json(&data, &["init"]);
    assert!(
        !init["chat_model"].is_null(),
        "a local chat model is installed: {init}"
    );
    index(&data, &sample_faq_dir().join("documents.jsonl"));
    for (question, expected) in [
        ("有給休暇は何日もらえますか？", "10日"),
        (
            "How many API requests per minute does the Business plan allow?",
            "600 requests per minute",
        ),
        // An English question over a page written only in Japanese (faq-002).
        (
            "I forgot my password. How long is the reset link valid?",
            "有効期限は30分",
        ),
    ] {
        let answer = run_json(&data, &["ask", question, "--top-k", "3"]);
        let text = answer["answer"].as_str().unwrap();
        assert_eq!(answer["refused"], false, "{answer}");
        assert!(text.contains(expected) && text.ends_with("[1]"), "{text}");
        assert!(text.chars().count() <= 300, "{text}");
        assert_eq!(answer["trace"]["pipeline"], "extractive", "{answer}");
        assert_eq!(
            answer["usage"]["completion_tokens"], 0,
            "no model ran: {answer}"
        );
        let quotes = &answer["citations"][0]["quotes"];
        assert!(!quotes.as_array().unwrap().is_empty(), "{answer}");
    }
    let peru = run_json(
        &data,
        &["ask", "What is the capital of Peru?", "--top-k", "3"],
    );
    assert_eq!(peru["refused"], true, "{peru}");
}

/// The default embedder chooses the quoted sentence by what it means, not only by the words it
/// shares: "what days does a Tock week run?" shares "week" and "day" with the sentences about
/// submitting a timecard on Friday, and none but "week" with the one that answers it (a week
/// "beginning on Sunday and ending on Saturday"), which shared words alone left out.
#[test]
fn the_quoted_sentence_is_the_one_that_answers_not_the_one_that_shares_words() {
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("tock.md"),
        "# Tock time tracking\n\n\
         Tock is where every employee records the hours they worked on each project.\n\
         The weekly time reporting period lasts one week, beginning on Sunday and ending on Saturday.\n\
         You must review and submit your timecard each week by the end of the day on Friday.\n\
         When submitting your timecard, choose the correct week for your entries from the list on the home page.\n\
         If you forget a week, your supervisor will remind you on Monday and you can still submit the late week.\n\
         Each day of the week appears as a column, so you can spread your hours across the days you worked.\n",
    )
    .unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init"]);
    index(&data, &corpus);
    let answer = run_json(&data, &["ask", "what days does a Tock week run?"]);
    let text = answer["answer"].as_str().unwrap();
    assert_eq!(answer["refused"], false, "{answer}");
    assert!(
        text.contains("beginning on Sunday and ending on Saturday"),
        "{text}"
    );
}

/// trec_eval's view of a run: per query, the documents ordered by score (ties: larger id first),
/// the first ten kept.
fn trec_ranking(run: &str) -> std::collections::HashMap<String, Vec<String>> {
    let mut scored: std::collections::HashMap<String, Vec<(f64, String)>> = Default::default();
    for line in run.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 6, "not a TREC run line: {line:?}");
        assert_eq!(fields[1], "Q0");
        let score: f64 = fields[4].parse().unwrap();
        scored
            .entry(fields[0].to_string())
            .or_default()
            .push((score, fields[2].to_string()));
    }
    scored
        .into_iter()
        .map(|(query, mut docs)| {
            docs.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
            let ids = docs.into_iter().take(10).map(|(_, id)| id).collect();
            (query, ids)
        })
        .collect()
}

#[test]
fn run_file_reproduces_the_reported_metrics() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    let run_path = work.path().join("hybrid.run");
    let per_query_path = work.path().join("per-query.jsonl");
    let report = run_json(
        &data,
        &[
            "eval",
            sample_faq_dir().to_str().unwrap(),
            "--run-out",
            run_path.to_str().unwrap(),
            "--per-query",
            per_query_path.to_str().unwrap(),
        ],
    );
    let rankings = trec_ranking(&std::fs::read_to_string(&run_path).unwrap());
    let gold: Vec<(String, Option<String>)> =
        std::fs::read_to_string(sample_faq_dir().join("qa.jsonl"))
            .unwrap()
            .lines()
            .map(|line| {
                let qa: serde_json::Value = serde_json::from_str(line).unwrap();
                let gold = qa["gold_doc_id"].as_str().map(str::to_string);
                (qa["id"].as_str().unwrap().to_string(), gold)
            })
            .collect();
    // One relevant document of grade 1: nDCG@10 = 1 / log2(rank + 1), RR@10 = 1 / rank.
    let (mut ndcg, mut rr, mut recall, mut scored) = (0.0, 0.0, 0.0, 0);
    let mut expected = std::collections::HashMap::new();
    for (query, gold) in &gold {
        let Some(gold) = gold else { continue };
        scored += 1;
        let ranked = rankings.get(query).cloned().unwrap_or_default();
        let (n, r) = match ranked.iter().position(|id| id == gold) {
            Some(index) => (1.0 / ((index + 2) as f64).log2(), 1.0 / (index + 1) as f64),
            None => (0.0, 0.0),
        };
        ndcg += n;
        rr += r;
        recall += f64::from(u8::from(r > 0.0));
        expected.insert(query.clone(), (n, r));
    }
    assert!(scored > 40, "{scored} scored queries");
    let close = |key: &str, value: f64| {
        let reported = report[key].as_f64().unwrap();
        assert!(
            (reported - value).abs() < 1e-6,
            "{key}: reported {reported}, run file {value}"
        );
    };
    close("ndcg@10", ndcg / scored as f64);
    close("mrr@10", rr / scored as f64);
    close("recall@10", recall / scored as f64);

    let lines = std::fs::read_to_string(&per_query_path).unwrap();
    assert_eq!(lines.lines().count(), gold.len());
    for line in lines.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let query = row["query_id"].as_str().unwrap();
        match expected.get(query) {
            Some((n, r)) => {
                assert!((row["ndcg@10"].as_f64().unwrap() - n).abs() < 1e-9, "{row}");
                assert!((row["mrr@10"].as_f64().unwrap() - r).abs() < 1e-9, "{row}");
            }
            None => assert!(row.get("ndcg@10").is_none(), "{row}"),
        }
    }
}

/// The value at rank round(fraction · (n − 1)) of `sorted`, as the evaluator reports
/// percentiles.
fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    sorted[(fraction * (sorted.len() - 1) as f64).round() as usize]
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn sorted(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
}

/// The `--per-query` lines of an evaluation that answered.
fn answered_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Checks that the report's `answers` summarises the per-query `answer` objects of `lines`.
fn assert_answers_match_lines(answers: &serde_json::Value, lines: &[serde_json::Value]) {
    let asked: Vec<(&serde_json::Value, &serde_json::Value)> = lines
        .iter()
        .filter_map(|line| Some((line, line.get("answer")?)))
        .collect();
    assert_eq!(answers["queries"], asked.len(), "{answers}");
    let rate = |answerable: bool, counted: bool| {
        let flags: Vec<f64> = asked
            .iter()
            .filter(|(line, _)| line["answerable"] == answerable)
            .map(|(_, answer)| f64::from(u8::from(answer["refused"] == counted)))
            .collect();
        mean(&flags)
    };
    let field = |key: &str| -> Vec<f64> {
        asked
            .iter()
            .filter_map(|(_, answer)| match &answer[key] {
                serde_json::Value::Bool(flag) => Some(f64::from(u8::from(*flag))),
                value => value.as_f64(),
            })
            .collect()
    };
    let close = |key: &str, expected: f64| {
        let reported = answers[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key}: {answers}"));
        assert!(
            (reported - expected).abs() < 1e-9,
            "{key}: reported {reported}, lines {expected}"
        );
    };
    close("accuracy", mean(&field("correct")));
    close("f1", mean(&field("f1")));
    close("answer_rate", rate(true, false));
    close("no_answer_refusal", rate(false, true));
    let citations = field("citation_precision");
    match citations.is_empty() {
        true => assert!(answers.get("citation_precision").is_none(), "{answers}"),
        false => close("citation_precision", mean(&citations)),
    }
    let lengths = sorted(
        asked
            .iter()
            .filter(|(_, answer)| answer["refused"] == false)
            .map(|(_, answer)| answer["length_chars"].as_f64().unwrap())
            .collect(),
    );
    close("length_chars_median", percentile(&lengths, 0.5));
    close("length_chars_p95", percentile(&lengths, 0.95));
    let latencies = sorted(field("latency_ms"));
    close("latency_p50_ms", percentile(&latencies, 0.5));
    close("latency_p95_ms", percentile(&latencies, 0.95));
    let first_tokens = sorted(field("first_token_ms"));
    match first_tokens.is_empty() {
        true => assert!(answers.get("first_token_p50_ms").is_none(), "{answers}"),
        false => close("first_token_p50_ms", percentile(&first_tokens, 0.5)),
    }
}

#[test]
fn answer_metrics_agree_with_the_per_query_lines() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    let per_query = work.path().join("per-query.jsonl");
    let faq = sample_faq_dir();
    let eval = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            faq.to_str().unwrap(),
            "--answers",
            "--pipeline",
            "extractive",
            "--per-query",
            per_query.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run_json(&data, &args)
    };

    let report = eval(&[]);
    let answers = &report["answers"];
    assert_eq!(answers["pipeline"], "extractive", "{report}");
    assert_eq!(answers["queries"], 60, "every query is answered or refused");
    assert_eq!(answers["degraded"], 0, "{answers}");
    for key in [
        "accuracy",
        "f1",
        "answer_rate",
        "no_answer_refusal",
        "length_chars_median",
        "length_chars_p95",
        "latency_p50_ms",
        "latency_p95_ms",
    ] {
        assert!(answers[key].is_number(), "{key} missing: {answers}");
    }
    let accuracy = answers["accuracy"].as_f64().unwrap();
    assert!(
        accuracy > 0.5,
        "the best chunk mostly holds the answer: {answers}"
    );
    let lines = answered_lines(&per_query);
    assert_eq!(lines.len(), 60);
    assert_answers_match_lines(answers, &lines);
    for line in &lines {
        assert_eq!(
            line["answer"]["refused"], line["refused"],
            "an extractive answer refuses exactly when retrieval does: {line}"
        );
    }

    let sampled = eval(&["--sample", "7"]);
    let lines = answered_lines(&per_query);
    assert_eq!(sampled["answers"]["queries"], 7, "{sampled}");
    assert_eq!(sampled["queries"], 60, "retrieval still runs every query");
    assert_answers_match_lines(&sampled["answers"], &lines);
    let unanswerable = lines
        .iter()
        .filter(|line| line.get("answer").is_some() && line["answerable"] == false)
        .count();
    assert!(unanswerable >= 1, "the sample keeps unanswerable queries");

    let text = run(
        &data,
        &[
            "eval",
            faq.to_str().unwrap(),
            "--answers",
            "--pipeline",
            "extractive",
            "--sample",
            "3",
        ],
    );
    let printed = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    assert!(
        printed.contains("answers (extractive): 3 queries") && printed.contains("accuracy"),
        "{printed}"
    );
}

/// Issue 47: `shiori eval samples/faq` indexes the sample set into an index of its own, so
/// the working index keeps its documents and answers nothing from the sample company; a second
/// run evaluates the same index again.
#[test]
fn an_evaluation_leaves_the_working_index_alone() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    index(&data, &fixture_dir());
    let stats = || run_json(&data, &["stats"]);
    let before = stats();
    let faq = sample_faq_dir();
    let first = run_json(&data, &["eval", faq.to_str().unwrap()]);
    assert!(first["ndcg@10"].as_f64().unwrap() > 0.7, "{first}");
    let after = stats();
    for count in ["files", "documents", "chunks"] {
        assert_eq!(
            after[count], before[count],
            "{count}: {before} then {after}"
        );
    }
    let hits = search_ids(&data, "verification link valid", "hybrid");
    assert!(
        hits.iter().all(|id| !id.starts_with("faq-0")),
        "the sample set's documents are searched: {hits:?}"
    );
    let again = run_json(&data, &["eval", faq.to_str().unwrap()]);
    assert_eq!(again["ndcg@10"], first["ndcg@10"], "{again}");
    let evaluations: Vec<_> = std::fs::read_dir(data.join("evaluations"))
        .unwrap()
        .collect();
    assert_eq!(evaluations.len(), 1, "one index per evaluation set");
}

#[test]
fn a_bad_answer_pass_fails_before_indexing_the_eval_set() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    index(&data, &fixture_dir());
    let documents = || run_json(&data, &["stats"])["documents"].clone();
    let before = documents();
    let faq = sample_faq_dir();
    let faq = faq.to_str().unwrap();
    for (args, expected) in [
        (
            vec!["eval", faq, "--judge", "cheap"],
            "no chat model named \"cheap\" in [llm.models]",
        ),
        (
            vec!["eval", faq, "--answers", "--rerank"],
            "--rerank needs a chat model",
        ),
        (vec!["eval", faq, "--sample", "3"], "--answers"),
        (vec!["eval", faq, "--answers", "--sample", "0"], "--sample"),
    ] {
        let output = run(&data, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(
            documents(),
            before,
            "{args:?} indexed the eval set before failing"
        );
    }
}
