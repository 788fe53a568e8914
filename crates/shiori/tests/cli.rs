//! The command line as a tool in a script: a mistyped data directory is an error, not a fresh
//! empty index; logs carry no colour codes when stderr is not a terminal; a reader that closes
//! the pipe early ends a command quietly.

mod common;

use common::*;
use std::process::Stdio;

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

#[test]
fn a_reader_that_closes_early_ends_the_command_quietly() {
    let work = tempfile::tempdir().unwrap();
    let data = indexed_faq(work.path());
    let faq = sample_faq_dir();
    for args in [
        vec!["search", "VPN"],
        vec!["--json", "search", "VPN"],
        vec!["ask", "How do I set up the VPN?"],
        vec!["stats"],
        vec!["eval", faq.to_str().unwrap()],
    ] {
        let mut child = command(&data)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // `| head -0`: the read end is closed before the command writes anything.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

/// The `[llm.models]` names in the data directory's shiori.toml.
fn configured_chat_models(data: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(data.join("shiori.toml")).unwrap();
    let config: toml::Table = text.parse().unwrap();
    config
        .get("llm")
        .and_then(|llm| llm.get("models"))
        .and_then(toml::Value::as_table)
        .map(|models| models.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn init_writes_a_commented_file_and_run_again_keeps_the_users_own() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    let config = data.join("shiori.toml");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.starts_with("# Shiori's settings"), "{written}");
    assert!(
        written.contains("\n# What `shiori index` (no paths)"),
        "{written}"
    );

    let users =
        "# Our handbook, indexed nightly.\n[ingest]\nsources = [\"handbook\"] # the wiki export\n";
    std::fs::write(&config, users).unwrap();
    run_json(&data, &["init", "--no-chat-model"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), users);
    // With the local model installed (the tests fetch it), init adopts it and adds its table.
    run_json(&data, &["init"]);
    let adopted = std::fs::read_to_string(&config).unwrap();
    assert!(adopted.starts_with(users), "{adopted}");
    assert!(adopted.contains("[llm.models.local]"), "{adopted}");
    run_json(&data, &["init", "--no-chat-model"]);
    assert_eq!(
        std::fs::read_to_string(&config).unwrap().trim_end(),
        users.trim_end()
    );
}

#[test]
fn init_without_a_chat_model_removes_the_one_init_adopted_and_keeps_configured_ones() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    // What `init` writes when qwen is installed.
    append_config(
        &data,
        "[llm.models.local]\nprovider = \"local\"\nmodel = \"qwen2.5-coder-0.5b\"\n",
    );
    let output = run(&data, &["init", "--no-chat-model"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("removed the local chat model qwen2.5-coder-0.5b init had adopted"),
        "{stdout}"
    );
    assert!(stdout.contains("answers are extractive"), "{stdout}");
    assert!(configured_chat_models(&data).is_empty());

    append_config(
        &data,
        "[llm.models.cheap]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\n",
    );
    let report = run_json(&data, &["init", "--no-chat-model"]);
    assert_eq!(
        report["removed_chat_model"],
        serde_json::Value::Null,
        "{report}"
    );
    assert_eq!(
        report["kept_chat_models"],
        serde_json::json!(["cheap"]),
        "{report}"
    );
    let output = run(&data, &["init", "--no-chat-model"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("kept the chat model(s) configured by hand ([llm.models.cheap])"),
        "{stdout}"
    );
    assert_eq!(configured_chat_models(&data), ["cheap"]);
}
