//! Helpers shared by the end-to-end tests: they run the real `shiori` binary with the models
//! that `shiori models fetch` installed under `SHIORI_HOME`.

// Each test binary compiles this module and uses only some of it.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

pub fn sample_faq_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/faq")
}

/// Copies the fixture corpus into `target` so a test may change it.
pub fn copy_fixtures(target: &Path) {
    std::fs::create_dir_all(target).unwrap();
    for entry in std::fs::read_dir(fixture_dir()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), target.join(entry.file_name())).unwrap();
    }
}

pub fn command(data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_shiori"));
    command.arg("--data-dir").arg(data_dir);
    command
}

pub fn run(data_dir: &Path, args: &[&str]) -> Output {
    command(data_dir).args(args).output().unwrap()
}

/// Runs a command with `--json`, asserts it succeeded and parses its output.
pub fn run_json(data_dir: &Path, args: &[&str]) -> Value {
    let output = command(data_dir).arg("--json").args(args).output().unwrap();
    assert!(
        output.status.success(),
        "shiori {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "shiori {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

pub fn index(data_dir: &Path, path: &Path) -> Value {
    run_json(data_dir, &["index", path.to_str().unwrap()])
}

/// Document ids of a search's hits, best first.
pub fn search_ids(data_dir: &Path, query: &str, mode: &str) -> Vec<String> {
    let result = run_json(data_dir, &["search", query, "--mode", mode]);
    result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["doc_id"].as_str().unwrap().to_string())
        .collect()
}
