//! Helpers shared by the end-to-end tests: they run the real `shiori` binary with the models
//! that `shiori models fetch` installed under `SHIORI_HOME`.

// Each test binary compiles this module and uses only some of it.
#![allow(dead_code, unused_macros)]

use serde_json::Value;
use shiori_store_postgres::test_server::TestServer;
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use tempfile::TempDir;

/// Which store a test's data directory uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Embedded,
    Postgres,
}

/// A test's working folder and data directory, with the PostgreSQL server its store lives in
/// (stopped on drop) for [`Backend::Postgres`].
pub struct TestStore {
    pub work: TempDir,
    pub data: PathBuf,
    pub url: Option<String>,
    _server: Option<TestServer>,
}

/// A fresh data directory on `backend`, initialised with `shiori init`. Panics, naming the
/// package to install, when the PostgreSQL binaries are missing.
pub fn test_store(backend: Backend) -> TestStore {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let (server, url) = match backend {
        Backend::Embedded => (None, None),
        Backend::Postgres => {
            let server = TestServer::start().unwrap_or_else(|e| panic!("{e}"));
            let url = server.create_database("shiori").unwrap();
            append_config(
                &data,
                &format!("[store]\nkind = \"postgres\"\nurl = \"{url}\"\n"),
            );
            (Some(server), Some(url))
        }
    };
    let init = run_json(&data, &["init", "--no-chat-model"]);
    if backend == Backend::Postgres {
        assert_eq!(
            init["store"]["migrations_applied"],
            serde_json::json!([1, 2, 3, 4, 5]),
            "{init}"
        );
    }
    TestStore {
        work,
        data,
        url,
        _server: server,
    }
}

/// Merges TOML into the data directory's shiori.toml, table by table (keeping its `[store]`).
pub fn append_config(data_dir: &Path, toml: &str) {
    fn merge(into: &mut toml::Table, from: toml::Table) {
        for (key, value) in from {
            match (into.get_mut(&key), value) {
                (Some(toml::Value::Table(existing)), toml::Value::Table(table)) => {
                    merge(existing, table)
                }
                (_, value) => {
                    into.insert(key, value);
                }
            }
        }
    }
    let path = data_dir.join("shiori.toml");
    let mut config: toml::Table = std::fs::read_to_string(&path)
        .map(|text| text.parse().unwrap())
        .unwrap_or_default();
    merge(&mut config, toml.parse().unwrap());
    std::fs::create_dir_all(data_dir).unwrap();
    std::fs::write(&path, toml::to_string(&config).unwrap()).unwrap();
}

/// Defines `embedded::NAME` and `postgres::NAME` tests that run the function `NAME(backend)`
/// against each store (the test file declares `#[macro_use] mod common;` and `use common::*;`).
macro_rules! backend_tests {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $(
                #[test]
                fn $name() {
                    super::$name(super::Backend::Embedded)
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    super::$name(super::Backend::Postgres)
                }
            )*
        }
    };
}

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

/// Runs a command with `--json`, asserts it succeeded and printed no path of this machine,
/// and parses its output.
pub fn run_json(data_dir: &Path, args: &[&str]) -> Value {
    let output = command(data_dir).arg("--json").args(args).output().unwrap();
    assert!(
        output.status.success(),
        "shiori {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // `init` reports the data directory it was given, which the tests give absolute.
    if args.first() != Some(&"init") {
        assert_no_machine_paths(&format!("shiori {args:?}"), &output.stdout);
    }
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

/// Indexes a folder where some files must fail: asserts `shiori index` exits with 2 (files
/// failed, the rest indexed) and returns its report.
pub fn index_with_failures(data_dir: &Path, path: &Path) -> Value {
    let output = command(data_dir)
        .args(["--json", "index"])
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("could not be indexed"), "{stderr}");
    serde_json::from_slice(&output.stdout).unwrap()
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

/// Kills the server when the test ends, however it ends.
pub struct Serving(pub Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `shiori serve` on a free port; returns the process, its address and the line it
/// announced itself with.
pub fn start_serving(mut command: Command) -> (Serving, String, String) {
    let mut child = command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let serving = Serving(child);
    let mut line = String::new();
    std::io::BufReader::new(stderr)
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (serving, addr, line)
}

/// Runs one of the Python client scripts in `tests/clients/` (the official `openai` and `mcp`
/// packages) and returns what it printed; fails with its output when any of its checks failed.
pub fn run_python_client(script: &str, args: &[&str]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(script);
    let output = Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// `work/data`, initialised, with samples/faq's documents indexed.
pub fn indexed_faq(work: &Path) -> PathBuf {
    let data = work.join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    index(&data, &sample_faq_dir().join("documents.jsonl"));
    data
}

/// Asserts that `output` names no folder of this machine: neither a test's temporary folder
/// (where its data directory and documents live) nor the checkout (fixtures, datasets).
/// Documents are shown relative to the source root or from their folder's name (issue 47).
#[track_caller]
pub fn assert_no_machine_paths(what: &str, output: &[u8]) {
    let output = String::from_utf8_lossy(output);
    let temporary = std::env::temp_dir().join(".tmp");
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let checkout = checkout.canonicalize().unwrap();
    for machine in [
        temporary.display().to_string(),
        checkout.display().to_string(),
    ] {
        if let Some(at) = output.find(&machine) {
            let shown: String = output[at..].chars().take(120).collect();
            panic!("{what} printed a path of the machine: …{shown}");
        }
    }
}

/// One HTTP/1.1 exchange over a fresh connection; returns the status and the body.
pub fn http(addr: &str, method: &str, path: &str, headers: &[&str], body: &str) -> (u16, String) {
    let (status, _, body) = http_with_head(addr, method, path, headers, body);
    (status, body)
}

/// [`http`], with the response's head (status line and headers) too.
pub fn http_with_head(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    assert_no_machine_paths(&format!("{method} {path}"), body.as_bytes());
    (status, head.to_string(), body.to_string())
}
