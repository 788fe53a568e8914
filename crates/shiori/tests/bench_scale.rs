//! `shiori bench scale` end to end on a small BEIR-layout set: it builds a store of distinct
//! generated chunks from their imported vectors, measures it, and a second run on the kept store
//! measures it again without rebuilding.

mod common;

use common::{command, run_json};
use serde_json::{json, Value};
use std::path::Path;

const TOPICS: [&str; 6] = [
    "Oatmeal is a porridge of rolled oats, eaten hot for breakfast with milk.",
    "Goldfish live in ponds and need cool water rich in oxygen.",
    "The verification link in the sign-up email stays valid for 24 hours.",
    "Tokyo's rainy season, tsuyu, usually starts in early June.",
    "A heat pump moves heat from outside air into the house in winter.",
    "Sourdough bread rises with wild yeast kept in a starter.",
];

/// A BEIR-layout set (corpus and queries) of six passages and three queries.
fn write_set(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let corpus: Vec<String> = TOPICS
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"_id": format!("d{i}"), "title": "", "text": text}).to_string())
        .collect();
    std::fs::write(dir.join("corpus.jsonl"), corpus.join("\n")).unwrap();
    let queries = [
        "how long is the verification link valid",
        "what do goldfish need",
        "when does the rainy season start in Tokyo",
    ];
    let queries: Vec<String> = queries
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"_id": format!("q{i}"), "text": text}).to_string())
        .collect();
    std::fs::write(dir.join("queries.jsonl"), queries.join("\n")).unwrap();
}

fn scale(data_dir: &Path, set: &Path, kept: &Path) -> Value {
    run_json(
        data_dir,
        &[
            "bench",
            "scale",
            set.to_str().unwrap(),
            "--chunks",
            "3000",
            "--keep",
            kept.to_str().unwrap(),
        ],
    )
}

#[test]
fn builds_a_store_from_imported_vectors_and_measures_it_again_when_kept() {
    let work = tempfile::tempdir().unwrap();
    let set = work.path().join("set");
    write_set(&set);
    let kept = work.path().join("kept");
    let data_dir = work.path().join("unused");

    let built = scale(&data_dir, &set, &kept);
    assert_eq!(built["chunks"], 3000);
    assert_eq!(built["chunks_imported"], 3000, "{built}");
    assert_eq!(built["queries"], 3);
    assert_eq!(built["modes"].as_array().map(Vec::len), Some(3));
    // Below 20k vectors the dense search is exact; only half-precision rounding among
    // near-identical generated vectors may swap a tenth place.
    let recall = built["hnsw_recall_at_10"].as_f64().unwrap();
    assert!(recall >= 0.9, "recall@10 {recall}");
    assert!(built["index_seconds"].as_f64().unwrap() > 0.0);

    let again = scale(&data_dir, &set, &kept);
    assert_eq!(again["chunks"], 3000);
    assert_eq!(again["hnsw_recall_at_10"], built["hnsw_recall_at_10"]);
    assert!(again.get("index_seconds").is_none(), "{again}");
    for mode in again["modes"].as_array().unwrap() {
        assert!(mode["p50_ms"].as_f64().unwrap() > 0.0, "{mode}");
    }
}

#[test]
fn a_directory_that_is_not_a_kept_store_is_refused_and_left_alone() {
    let work = tempfile::tempdir().unwrap();
    let set = work.path().join("set");
    write_set(&set);
    let occupied = work.path().join("occupied");
    std::fs::create_dir_all(&occupied).unwrap();
    std::fs::write(occupied.join("notes.txt"), "mine").unwrap();
    let output = command(&work.path().join("unused"))
        .args(["bench", "scale", set.to_str().unwrap(), "--chunks", "100"])
        .arg("--keep")
        .arg(&occupied)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bench-scale-exact.json"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(&occupied).unwrap().collect();
    assert_eq!(left.len(), 1, "the directory was changed");
}
