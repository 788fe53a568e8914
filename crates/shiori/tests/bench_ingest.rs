//! `shiori bench ingest --index` end to end: a first index of a folder in each precision asked
//! for, with a cold embedding cache of its own, reported with the stages the index command
//! reports.

mod common;

use common::run_json;

#[test]
fn a_first_index_is_timed_per_precision_with_its_stages() {
    let work = tempfile::tempdir().unwrap();
    let docs = work.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for (name, text) in [
        (
            "leave.md",
            "# Leave\n\nEmployees get 20 days of paid leave a year.",
        ),
        (
            "expenses.md",
            "# Expenses\n\nReceipts are due within 30 days of purchase.",
        ),
        ("休暇.md", "# 休暇\n\n有給休暇は年に20日付与されます。"),
    ] {
        std::fs::write(docs.join(name), text).unwrap();
    }
    let data_dir = work.path().join("data");
    let report = run_json(
        &data_dir,
        &[
            "bench",
            "ingest",
            "--index",
            docs.to_str().unwrap(),
            "--precision",
            "f32",
            "--precision",
            "int8",
        ],
    );
    let results = report["results"].as_array().unwrap();
    let precisions: Vec<&str> = results
        .iter()
        .map(|r| r["precision"].as_str().unwrap())
        .collect();
    assert_eq!(precisions, ["f32", "int8"], "{report}");
    for result in results {
        assert_eq!(result["files"], 3, "{result}");
        assert!(result["chunks"].as_u64().unwrap() >= 3, "{result}");
        assert!(
            result["stages"]["embed_ms"].as_f64().unwrap() > 0.0,
            "{result}"
        );
        assert!(
            result["chunks_per_second"].as_f64().unwrap() > 0.0,
            "{result}"
        );
    }
    assert_eq!(
        results[0]["speedup"], 1.0,
        "the first precision is the yardstick"
    );
    assert!(
        !data_dir.join("shiori.sqlite").exists(),
        "the benchmark indexes into a data directory of its own"
    );
}
