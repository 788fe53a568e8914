//! End to end: a project whose path is an S3 prefix on moto's S3 server, indexed, searched,
//! changed at the source and indexed again; and a source that cannot be reached, which fails
//! alone.

mod common;

use common::*;
use serde_json::Value;
use shiori_connectors::test_servers::{free_port, Moto};
use std::path::Path;

fn configure(data_dir: &Path, paths: &[String]) {
    std::fs::create_dir_all(data_dir).unwrap();
    let listed: Vec<String> = paths.iter().map(|p| format!("{p:?}")).collect();
    append_config(
        data_dir,
        &format!("[projects.handbook]\npaths = [{}]\n", listed.join(", ")),
    );
}

fn sources_of(data_dir: &Path, query: &str) -> Vec<String> {
    let result = run_json(
        data_dir,
        &["search", query, "--mode", "bm25", "--top-k", "10"],
    );
    result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["source"].as_str().unwrap().to_string())
        .collect()
}

fn synced(report: &Value) -> (u64, u64, u64, u64) {
    let source = &report["sources"][0];
    let count = |field: &str| source[field].as_u64().unwrap();
    (
        count("fetched"),
        count("unchanged"),
        count("deleted"),
        count("failed"),
    )
}

#[test]
fn an_s3_project_is_indexed_kept_in_sync_and_shown_by_its_url() {
    let moto = Moto::shared();
    moto.bucket("e2e-handbook");
    moto.put(
        "e2e-handbook",
        "docs/leave.md",
        "Annual leave: employees get 20 days of paid leave.",
    );
    moto.put(
        "e2e-handbook",
        "docs/travel/出張.md",
        "出張の日当は3000円です。",
    );
    moto.put(
        "e2e-handbook",
        "docs/vpn.txt",
        "The VPN gateway is vpn.example.com on port 443.",
    );
    let work = tempfile::tempdir().unwrap();
    let data_dir = work.path().join(".shiori");
    configure(&data_dir, &["s3://e2e-handbook/docs/".to_string()]);

    let first = run_json(&data_dir, &["index"]);
    assert_eq!(synced(&first), (3, 0, 0, 0), "{first}");
    assert_eq!(first["files_indexed"], 3, "{first}");
    assert_eq!(moto.object_gets("e2e-handbook"), 3);
    assert_eq!(
        sources_of(&data_dir, "paid leave days")[0],
        "s3://e2e-handbook/docs/leave.md"
    );
    assert_eq!(
        sources_of(&data_dir, "出張の日当")[0],
        "s3://e2e-handbook/docs/travel/出張.md"
    );

    moto.put(
        "e2e-handbook",
        "docs/leave.md",
        "Annual leave: employees get 25 days of paid leave.",
    );
    moto.delete("e2e-handbook", "docs/vpn.txt");
    moto.put(
        "e2e-handbook",
        "docs/wifi.md",
        "The office wifi network is called kumo-guest.",
    );
    let second = run_json(&data_dir, &["index"]);
    assert_eq!(synced(&second), (2, 1, 1, 0), "{second}");
    assert_eq!(
        (
            second["files_indexed"].as_u64(),
            second["files_removed"].as_u64()
        ),
        (Some(2), Some(1)),
        "{second}"
    );
    assert_eq!(
        moto.object_gets("e2e-handbook"),
        5,
        "one download per changed or new object"
    );
    let after_delete = sources_of(&data_dir, "VPN gateway port");
    assert!(
        !after_delete
            .iter()
            .any(|source| source.ends_with("vpn.txt")),
        "{after_delete:?}"
    );
    assert_eq!(
        sources_of(&data_dir, "office wifi network")[0],
        "s3://e2e-handbook/docs/wifi.md"
    );
    let answer = run_json(&data_dir, &["search", "paid leave days", "--mode", "bm25"]);
    assert!(answer["hits"][0]["text"]
        .as_str()
        .unwrap()
        .contains("25 days"));

    let third = run_json(&data_dir, &["index"]);
    assert_eq!(synced(&third), (0, 3, 0, 0), "{third}");
    assert_eq!(third["files_indexed"], 0, "{third}");
    assert_eq!(moto.object_gets("e2e-handbook"), 5);
}

/// `shiori --json index` with S3 at `endpoint`: its exit code and report.
fn index_against(data_dir: &Path, endpoint: &str) -> (Option<i32>, Value) {
    let output = command(data_dir)
        .args(["--json", "index"])
        .env("AWS_ENDPOINT_URL", endpoint)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no report: {}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code(), report)
}

#[test]
fn a_source_that_cannot_be_reached_fails_alone_and_keeps_what_was_synced() {
    Moto::shared();
    let moto = Moto::start();
    moto.bucket("kept");
    moto.put("kept", "a.md", "Badge renewals happen every April.");
    let work = tempfile::tempdir().unwrap();
    let data_dir = work.path().join(".shiori");
    std::fs::create_dir_all(work.path().join("local")).unwrap();
    std::fs::write(
        work.path().join("local/notes.md"),
        "Parking is on level B2.",
    )
    .unwrap();
    let dead = format!("webdav+http://127.0.0.1:{}/Docs/", free_port());
    configure(
        &data_dir,
        &["s3://kept/".to_string(), dead.clone(), "local".to_string()],
    );

    let (code, report) = index_against(&data_dir, &moto.endpoint());
    assert_eq!(code, Some(2), "{report}");
    let failures = report["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{report}");
    assert_eq!(failures[0]["path"], dead.as_str());
    let reason = failures[0]["reason"].as_str().unwrap();
    assert!(reason.contains("refused"), "the cause is told: {reason}");
    assert_eq!(report["files_indexed"], 2, "{report}");
    assert_eq!(sources_of(&data_dir, "badge renewals")[0], "s3://kept/a.md");
    assert_eq!(sources_of(&data_dir, "parking level")[0], "local/notes.md");

    let endpoint = moto.endpoint();
    drop(moto);
    let (code, report) = index_against(&data_dir, &endpoint);
    assert_eq!(code, Some(2), "{report}");
    let failed: Vec<&str> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|failure| failure["path"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["s3://kept/", dead.as_str()], "{report}");
    assert_eq!(report["files_removed"], 0, "{report}");
    assert_eq!(
        sources_of(&data_dir, "badge renewals")[0],
        "s3://kept/a.md",
        "a source that cannot be listed keeps its documents as last synced"
    );
}

/// Kills the watcher however the test ends.
struct Watching(std::process::Child);

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn watching_lists_remote_sources_again_every_poll_interval() {
    use std::io::{BufRead, BufReader};
    let moto = Moto::shared();
    moto.bucket("e2e-watched");
    moto.put("e2e-watched", "a.md", "Lunch is served at noon.");
    let work = tempfile::tempdir().unwrap();
    let data_dir = work.path().join(".shiori");
    configure(&data_dir, &["s3://e2e-watched/".to_string()]);
    append_config(&data_dir, "[connectors]\npoll_seconds = 1\n");
    let mut child = command(&data_dir)
        .args(["--json", "index", "--watch"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let _watching = Watching(child);
    let mut next_pass = || -> Value {
        let line = lines.next().expect("the watcher stopped").unwrap();
        serde_json::from_str::<Value>(&line).unwrap()["report"].clone()
    };
    let initial = next_pass();
    assert_eq!(synced(&initial), (1, 0, 0, 0), "{initial}");

    moto.put(
        "e2e-watched",
        "b.md",
        "The zorblax review meets on Fridays.",
    );
    let polled = next_pass();
    assert_eq!(synced(&polled), (1, 1, 0, 0), "{polled}");
    assert_eq!(polled["files_indexed"], 1, "{polled}");
    assert_eq!(
        sources_of(&data_dir, "zorblax review")[0],
        "s3://e2e-watched/b.md"
    );
}
