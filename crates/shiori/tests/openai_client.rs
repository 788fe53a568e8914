//! `shiori serve`'s `/v1` API driven by the official `openai` Python client (PyPI `openai`,
//! installed by scripts/test-deps.sh): a missing package fails the test.

mod common;

use common::*;

#[test]
fn the_official_openai_client_models_chats_completes_streams_and_embeds() {
    let work = tempfile::tempdir().unwrap();
    let data = indexed_faq(work.path());
    let mut serve = command(&data);
    serve.env("SHIORI_API_KEY", "openai-test-key");
    let (_serving, addr, _) = start_serving(serve);

    let base_url = format!("http://{addr}/v1");
    let data = data.to_str().unwrap();
    let stdout = run_python_client(
        "openai_client.py",
        &[
            &base_url,
            "openai-test-key",
            env!("CARGO_BIN_EXE_shiori"),
            data,
        ],
    );
    assert!(stdout.contains("ok: a wrong key is a 401"), "{stdout}");
}
