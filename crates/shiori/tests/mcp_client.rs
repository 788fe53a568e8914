//! `shiori mcp` (stdio) and `shiori serve`'s `/mcp` (streamable HTTP) driven by the official
//! `mcp` Python client (PyPI `mcp`, installed by scripts/test-deps.sh): a missing package fails
//! the test.

mod common;

use common::*;

fn run_client(args: &[&str]) {
    let stdout = run_python_client("mcp_client.py", args);
    assert!(stdout.contains("ok: documents and resources"), "{stdout}");
}

#[test]
fn the_official_mcp_client_over_stdio() {
    let work = tempfile::tempdir().unwrap();
    let data = indexed_faq(work.path());
    let data = data.to_str().unwrap();
    run_client(&["stdio", env!("CARGO_BIN_EXE_shiori"), data]);
}

#[test]
fn the_official_mcp_client_over_streamable_http_behind_the_key() {
    let work = tempfile::tempdir().unwrap();
    let data = indexed_faq(work.path());
    let mut serve = command(&data);
    serve.env("SHIORI_API_KEY", "mcp-test-key");
    let (_serving, addr, _) = start_serving(serve);
    run_client(&["http", &format!("http://{addr}/mcp"), "mcp-test-key"]);
}
