//! The command line as a tool in a script: a mistyped data directory is an error, not a fresh
//! empty index; logs carry no colour codes when stderr is not a terminal.

mod common;

use common::*;

#[test]
fn commands_refuse_a_data_directory_that_does_not_exist() {
    let work = tempfile::tempdir().unwrap();
    let missing = work.path().join("misspelled");
    for args in [
        vec!["search", "VPN"],
        vec!["ask", "How do I set up the VPN?"],
        vec!["stats"],
        vec!["serve", "--addr", "127.0.0.1:0"],
    ] {
        let output = run(&missing, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("no data directory at"),
            "{args:?}: {stderr}"
        );
        assert!(!missing.exists(), "{args:?} created {}", missing.display());
    }
}

#[test]
fn index_creates_the_data_directory_and_says_so() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("fresh");
    let output = run(&data, &["index", fixture_dir().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("created the data directory"), "{stderr}");
    assert!(data.is_dir());
}

#[test]
fn logs_have_no_colour_codes_off_a_terminal() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    index(&data, &fixture_dir());
    let output = command(&data)
        .args(["search", "VPN"])
        .env("SHIORI_LOG", "debug")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("DEBUG"), "no log lines to check: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}
