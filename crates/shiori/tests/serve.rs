//! End to end: `shiori serve` as a process, with the API key from `SHIORI_API_KEY`.

mod common;

use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

/// Kills the server when the test ends, however it ends.
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One HTTP/1.1 exchange over a fresh connection; returns the status and the body.
fn http(addr: &str, method: &str, path: &str, headers: &[&str], body: &str) -> (u16, String) {
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
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn serve_answers_over_http_behind_the_api_key() {
    let work = tempfile::tempdir().unwrap();
    copy_fixtures(&work.path().join("corpus"));
    let data = work.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("shiori.toml"),
        "[ingest]\nsources = [\"corpus\"]\n",
    )
    .unwrap();

    let mut child = command(&data)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("SHIORI_API_KEY", "k3y")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _serving = Serving(child);
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    assert!(line.contains("API key required"), "{line}");

    assert_eq!(http(&addr, "GET", "/healthz", &[], "").0, 200);
    let json = "Content-Type: application/json";
    assert_eq!(http(&addr, "POST", "/api/reindex", &[json], "").0, 401);
    let auth = "Authorization: Bearer k3y";
    let (status, body) = http(&addr, "POST", "/api/reindex", &[auth, json], "");
    assert_eq!(status, 200, "{body}");
    let question = r#"{"question": "How much storage does every workspace include?"}"#;
    let (status, body) = http(&addr, "POST", "/api/query", &[auth, json], question);
    assert_eq!(status, 200, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        answer["answer"].as_str().unwrap().contains("100 GB"),
        "{answer}"
    );
}

#[test]
fn serving_beyond_loopback_needs_a_key() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init"]);
    let output = command(&data)
        .args(["serve", "--addr", "0.0.0.0:0"])
        .env_remove("SHIORI_API_KEY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("without an API key") && stderr.contains("--insecure-no-auth"),
        "{stderr}"
    );
}
