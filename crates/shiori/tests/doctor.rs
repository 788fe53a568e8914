//! `shiori doctor` end to end: on a machine where nothing is installed it names each missing
//! piece with the command that fixes it and exits 1; once set up it passes.

mod common;

use common::{append_config, command, copy_fixtures, index, run_json};
use serde_json::Value;
use std::path::Path;

/// Runs `shiori doctor --json` with `SHIORI_HOME` at `home` (the models' only place) and
/// `extra` variables; returns the exit code and the checks by name.
fn doctor(data: &Path, home: Option<&Path>, extra: &[(&str, &str)]) -> (i32, Value, String) {
    let mut doctor = command(data);
    if let Some(home) = home {
        doctor.env("SHIORI_HOME", home);
    }
    let output = doctor
        .envs(extra.iter().copied())
        .args(["--json", "doctor"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&output.stdout)));
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.code().unwrap(), report, text)
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|check| check["name"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {report}"))
}

#[test]
fn a_fresh_machine_is_told_what_is_missing_and_how_to_fix_it() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("empty-home");
    let data = work.path().join("data");
    let (code, report, _) = doctor(&data, Some(&home), &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["ok"], false);
    for missing in ["model multilingual-e5-small", "model ipadic (vibrato)"] {
        let found = check(&report, missing);
        assert_eq!(found["status"], "fail", "{found}");
        assert_eq!(found["fix"], "shiori models fetch", "{found}");
    }
    assert_eq!(check(&report, "config")["fix"], "shiori init");
    assert_eq!(check(&report, "store")["fix"], "shiori index PATH");

    // The text a person reads says the same, with the fix under each missing piece.
    let output = command(&data)
        .env("SHIORI_HOME", &home)
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("FAIL model multilingual-e5-small"), "{text}");
    assert!(text.contains("fix: shiori models fetch"), "{text}");
    assert!(text.trim_end().ends_with("not ready"), "{text}");
}

/// A data directory set up as a new user's, with the test fixtures indexed into it.
fn indexed_fixtures() -> (tempfile::TempDir, std::path::PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    let docs = work.path().join("docs");
    copy_fixtures(&docs);
    index(&data, &docs);
    (work, data)
}

#[test]
fn a_set_up_machine_passes_and_keys_are_checked_without_being_shown() {
    let (_work, data) = indexed_fixtures();
    append_config(
        &data,
        "[[auth.keys]]\nname = \"ops\"\nenv = \"DOCTOR_TEST_KEY\"\nadmin = true\n",
    );
    // The models come from where `shiori models fetch` put them for every test.
    let (code, report, text) = doctor(&data, None, &[("DOCTOR_TEST_KEY", "s3cret-value-9f2")]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["ok"], true);
    let failed: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|check| check["status"] == "fail")
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    let store = check(&report, "store");
    assert_eq!(store["status"], "ok", "{store}");
    assert!(store["detail"]
        .as_str()
        .unwrap()
        .contains("derived indexes match"));
    assert_eq!(
        check(&report, "model multilingual-e5-small")["status"],
        "ok"
    );
    assert_eq!(check(&report, "key ops")["status"], "ok");
    assert!(
        !text.contains("s3cret-value-9f2"),
        "the key's value was shown"
    );

    // Without the key's value the server could not start: the doctor says so and fails.
    let (code, report, _) = doctor(&data, None, &[]);
    assert_eq!(code, 1);
    let key = check(&report, "key ops");
    assert_eq!(key["status"], "fail");
    assert!(
        key["fix"].as_str().unwrap().contains("DOCTOR_TEST_KEY"),
        "{key}"
    );
}

#[test]
fn a_damaged_index_file_is_reported_before_anything_opens_it() {
    let (_work, data) = indexed_fixtures();
    let vectors = data.join("vectors.usearch");
    let mut bytes = std::fs::read(&vectors).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(&vectors, bytes).unwrap();
    let (code, report, _) = doctor(&data, None, &[]);
    assert_eq!(
        code, 0,
        "a stale derived index is rebuilt, not fatal: {report}"
    );
    let store = check(&report, "store");
    assert_eq!(store["status"], "warn", "{store}");
    assert!(
        store["detail"]
            .as_str()
            .unwrap()
            .contains("vectors.usearch"),
        "{store}"
    );
}
