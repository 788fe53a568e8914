//! `shiori mcp` (stdio) and `shiori serve`'s `/mcp` (streamable HTTP) driven by the official
//! `mcp` Python client (PyPI `mcp`, installed by scripts/test-deps.sh): a missing package fails
//! the test.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn indexed_sample(work: &Path) -> PathBuf {
    let data = work.join("data");
    run_json(&data, &["init"]);
    index(&data, &sample_faq_dir().join("documents.jsonl"));
    data
}

fn run_client(args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/mcp_client.py");
    let output = Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the mcp client failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("ok: documents and resources"), "{stdout}");
}

#[test]
fn the_official_mcp_client_over_stdio() {
    let work = tempfile::tempdir().unwrap();
    let data = indexed_sample(work.path());
    let data = data.to_str().unwrap();
    run_client(&["stdio", env!("CARGO_BIN_EXE_shiori"), data]);
}

#[test]
fn the_official_mcp_client_over_streamable_http_behind_the_key() {
    let work = tempfile::tempdir().unwrap();
    let data = indexed_sample(work.path());
    let mut serve = command(&data);
    serve.env("SHIORI_API_KEY", "mcp-test-key");
    let (_serving, addr, _) = start_serving(serve);
    run_client(&["http", &format!("http://{addr}/mcp"), "mcp-test-key"]);
}
