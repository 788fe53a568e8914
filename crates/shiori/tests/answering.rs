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
}
