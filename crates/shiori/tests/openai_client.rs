//! `shiori serve`'s `/v1` API driven by the official `openai` Python client (PyPI `openai`,
//! installed by scripts/test-deps.sh): a missing package fails the test.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn the_official_openai_client_models_chats_streams_and_embeds() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init"]);
    index(&data, &sample_faq_dir().join("documents.jsonl"));
    let mut serve = command(&data);
    serve.env("SHIORI_API_KEY", "openai-test-key");
    let (_serving, addr, _) = start_serving(serve);

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/openai_client.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(format!("http://{addr}/v1"))
        .arg("openai-test-key")
        .arg(env!("CARGO_BIN_EXE_shiori"))
        .arg(&data)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the openai client failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("ok: a wrong key is a 401"), "{stdout}");
}
