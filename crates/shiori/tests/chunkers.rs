//! End to end: the token and semantic chunkers, run by the indexer with the real embedder.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn setup(root: &Path, chunker: &str, file: &str, text: &str) -> std::path::PathBuf {
    let corpus = root.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join(file), text).unwrap();
    let data = root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("shiori.toml"), chunker).unwrap();
    corpus
}

fn hit_texts(result: &Value) -> Vec<String> {
    result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_token_chunker_keeps_chunks_within_the_token_budget() {
    let work = tempfile::tempdir().unwrap();
    let sentences: Vec<String> = (0..40)
        .map(|i| format!("Step {i} of the runbook checks the replica number {i} and its disk."))
        .collect();
    let corpus = setup(
        work.path(),
        "[chunker]\nkind = \"token\"\nmax_tokens = 48\n",
        "runbook.txt",
        &sentences.join(" "),
    );
    let data = work.path().join("data");
    let report = index(&data, &corpus);
    let chunks = report["chunks_added"].as_u64().unwrap();
    // About 17 e5 tokens a sentence, 48 per chunk with the title and prefix: two a chunk.
    assert!((12..=40).contains(&chunks), "{report}");

    let result = run_json(
        &data,
        &[
            "search",
            "replica number 23",
            "--mode",
            "bm25",
            "--top-k",
            "50",
        ],
    );
    let texts = hit_texts(&result);
    assert_eq!(texts.len() as u64, chunks, "every chunk mentions a replica");
    for text in &texts {
        assert!(
            text.starts_with("Step ") && text.ends_with("disk."),
            "{text}"
        );
        assert!(text.matches("Step ").count() <= 3, "{text}");
    }
    assert!(texts.iter().any(|t| t.contains("replica number 23 ")));
}

#[test]
fn the_semantic_chunker_splits_where_the_topic_changes() {
    let work = tempfile::tempdir().unwrap();
    let text =
        "Boil the pasta in salted water for nine minutes. Drain the pasta and keep a cup of \
                the cooking water. Toss the pasta with garlic, olive oil and the reserved water. \
                The annual tax return is due on the fifteenth of March. Attach the withholding \
                slips from every employer to the tax return. Late tax returns pay a penalty of \
                five percent a month.";
    let corpus = setup(
        work.path(),
        "[chunker]\nkind = \"semantic\"\nmax_chars = 2000\n",
        "notes.txt",
        text,
    );
    let data = work.path().join("data");
    let report = index(&data, &corpus);
    let chunks = report["chunks_added"].as_u64().unwrap();
    assert!((2..=4).contains(&chunks), "{report}");

    let result = run_json(&data, &["search", "tax return deadline", "--top-k", "1"]);
    let best = &hit_texts(&result)[0];
    assert!(best.contains("tax return"), "{best}");
    assert!(!best.contains("pasta"), "the topics share a chunk: {best}");
    let result = run_json(&data, &["search", "how long to cook pasta", "--top-k", "1"]);
    let best = &hit_texts(&result)[0];
    assert!(best.contains("Boil the pasta"), "{best}");
    assert!(!best.contains("tax"), "{best}");
}
