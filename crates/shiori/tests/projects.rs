//! End to end: projects in shiori.toml, `index --project`, search scoped to a project, and the
//! two-stage search over related projects.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

const CONFIG: &str = r#"
[projects.kumo]
paths = ["docs"]
exclude = ["sora/**"]
doc_type = "manual"
metadata = { team = "infra" }
related = ["sora"]

[projects.sora]
paths = ["docs/sora"]

[projects.umi]
paths = ["umi"]
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Three projects, sora's folder nested in kumo's; each has a page about backups.
fn workspace(root: &Path) -> std::path::PathBuf {
    write(
        &root.join("docs/backup.md"),
        "# Kumo backups\n\nKumo cluster backups run nightly at 02:00 and are kept for 30 days.",
    );
    write(
        &root.join("docs/login.txt"),
        "Kumo login uses single sign-on through the company identity provider.",
    );
    write(
        &root.join("docs/sora/backup.txt"),
        "Sora database backups are snapshots taken every hour and kept for a week.",
    );
    write(
        &root.join("docs/sora/alerts.txt"),
        "Sora alerts page the on-call engineer when replication lag exceeds a minute.",
    );
    write(
        &root.join("umi/backup.txt"),
        "Umi file server backups are copied to tape every Sunday.",
    );
    let data = root.join(".shiori");
    write(&data.join("shiori.toml"), CONFIG);
    data
}

fn sources(result: &Value) -> Vec<String> {
    result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["source"].as_str().unwrap().to_string())
        .collect()
}

/// The project a source belongs to, from its path as shown: relative to the workspace, which
/// holds the data directory.
fn project_of(source: &str) -> &'static str {
    if source.starts_with("docs/sora/") {
        "sora"
    } else if source.starts_with("docs/") {
        "kumo"
    } else if source.starts_with("umi/") {
        "umi"
    } else {
        panic!("{source} is in no project")
    }
}

fn projects_of(result: &Value) -> Vec<&'static str> {
    sources(result).iter().map(|s| project_of(s)).collect()
}

#[test]
fn projects_index_apart_and_searches_stay_in_their_project() {
    let work = tempfile::tempdir().unwrap();
    let data = workspace(work.path());

    let report = run_json(&data, &["index"]);
    assert_eq!(report["files_indexed"], 5, "{report}");
    assert_eq!(report["failures"].as_array().unwrap().len(), 0, "{report}");

    for (project, expected) in [("kumo", "kumo"), ("sora", "sora"), ("umi", "umi")] {
        let result = run_json(&data, &["search", "backups", "--project", project]);
        let found = projects_of(&result);
        assert!(!found.is_empty(), "{project}: {result}");
        assert!(found.iter().all(|p| *p == expected), "{project}: {found:?}");
    }
    let infra = run_json(&data, &["search", "backups", "--filter", "team=infra"]);
    assert!(projects_of(&infra).iter().all(|p| *p == "kumo"), "{infra}");
    let manual = run_json(&data, &["search", "backups", "--filter", "doc_type=manual"]);
    assert!(!projects_of(&manual).is_empty());
    assert!(
        projects_of(&manual).iter().all(|p| *p == "kumo"),
        "{manual}"
    );
    let markdown = run_json(&data, &["search", "backups", "--filter", "format=markdown"]);
    assert_eq!(
        sources(&markdown).len(),
        1,
        "the loader's doc_type: {markdown}"
    );

    let answer = run_json(
        &data,
        &["ask", "How often are backups taken?", "--project", "sora"],
    );
    let answer_sources = answer["sources"].as_array().unwrap();
    assert!(!answer_sources.is_empty(), "{answer}");
    for source in answer_sources {
        assert_eq!(
            project_of(source["source"].as_str().unwrap()),
            "sora",
            "{answer}"
        );
    }

    let unknown = run(&data, &["search", "backups", "--project", "kaze"]);
    assert!(!unknown.status.success());
    let message = String::from_utf8_lossy(&unknown.stderr);
    assert!(message.contains("kumo, sora, umi"), "{message}");
}

#[test]
fn reindexing_one_project_keeps_the_files_of_a_nested_one() {
    let work = tempfile::tempdir().unwrap();
    let data = workspace(work.path());
    run_json(&data, &["index"]);

    // sora's files lie under kumo's folder, excluded from kumo: kumo must leave them alone.
    let again = run_json(&data, &["index", "--project", "kumo"]);
    assert_eq!(again["files_removed"], 0, "{again}");
    assert_eq!(run_json(&data, &["stats"])["files"], 5);

    std::fs::remove_file(work.path().join("docs/login.txt")).unwrap();
    let after_delete = run_json(&data, &["index", "--project", "kumo"]);
    assert_eq!(after_delete["files_removed"], 1, "{after_delete}");
    assert_eq!(run_json(&data, &["stats"])["files"], 4);
    let sora = run_json(
        &data,
        &["search", "replication lag alerts", "--project", "sora"],
    );
    assert!(
        sources(&sora)[0].ends_with("docs/sora/alerts.txt"),
        "{sora}"
    );
}

#[test]
fn two_stage_search_ranks_the_current_project_first_then_related_ones() {
    let work = tempfile::tempdir().unwrap();
    let data = workspace(work.path());
    run_json(&data, &["index"]);

    let args = ["search", "how are backups kept", "--top-k", "4"];
    let scoped = run_json(&data, &[&args[..], &["--project", "kumo"]].concat());
    assert!(
        projects_of(&scoped).iter().all(|p| *p == "kumo"),
        "{scoped}"
    );

    let two_stage = run_json(
        &data,
        &[&args[..], &["--project", "kumo", "--two-stage"]].concat(),
    );
    let found = projects_of(&two_stage);
    assert_eq!(found[0], "kumo", "{two_stage}");
    assert!(
        found.contains(&"sora"),
        "related project missing: {found:?}"
    );
    assert!(
        !found.contains(&"umi"),
        "umi is not related to kumo: {found:?}"
    );
    let first_sora = found.iter().position(|p| *p == "sora").unwrap();
    assert!(
        found[..first_sora].iter().all(|p| *p == "kumo"),
        "kumo's hits come first: {found:?}"
    );
    assert!(
        sources(&two_stage)
            .iter()
            .any(|s| s.ends_with("docs/backup.md")),
        "{two_stage}"
    );

    // sora lists no related projects: every other project is searched second.
    let from_sora = run_json(
        &data,
        &[&args[..], &["--project", "sora", "--two-stage"]].concat(),
    );
    let found = projects_of(&from_sora);
    assert_eq!(found[0], "sora", "{from_sora}");
    assert!(
        found.contains(&"umi") || found.contains(&"kumo"),
        "{found:?}"
    );
}

#[test]
fn a_file_both_a_project_and_the_plain_sources_reach_keeps_its_project() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    write(
        &root.join("docs/a.txt"),
        "Kumo tickets are answered within a day.",
    );
    let data = root.join(".shiori");
    write(
        &data.join("shiori.toml"),
        "[ingest]\nsources = [\"docs\"]\n\n[projects.kumo]\npaths = [\"docs\"]\n",
    );
    let first = run_json(&data, &["index"]);
    assert_eq!(first["files_indexed"], 1, "{first}");

    write(
        &root.join("docs/a.txt"),
        "Kumo tickets are answered within an hour.",
    );
    let second = run_json(&data, &["index"]);
    assert_eq!(second["files_indexed"], 1, "{second}");
    let scoped = run_json(&data, &["search", "tickets answered", "--project", "kumo"]);
    let hits = scoped["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{scoped}");
    assert!(
        hits[0]["text"].as_str().unwrap().contains("an hour"),
        "{scoped}"
    );
}

/// Issue 48: a project's files outside its folders (its `paths` shrank, or a link once led out
/// of them) are dropped by its next run, not kept and served under its readers.
#[test]
fn a_project_drops_its_files_outside_its_folders() {
    let work = tempfile::tempdir().unwrap();
    write(
        &work.path().join("team/notes.md"),
        "# Notes\n\nStand-up is at ten.",
    );
    write(
        &work.path().join("archive/old.md"),
        "# Old plan\n\nThe retired plan called for weekly audits.",
    );
    let data = work.path().join("data");
    run_json(&data, &["init", "--no-chat-model"]);
    append_config(&data, "[projects.team]\npaths = [\"team\", \"archive\"]\n");
    run_json(&data, &["index"]);
    let found = |query: &str| sources(&run_json(&data, &["search", query, "--mode", "bm25"]));
    assert_eq!(found("retired plan weekly audits")[0], "archive/old.md");

    append_config(&data, "[projects.team]\npaths = [\"team\"]\n");
    let report = run_json(&data, &["index"]);
    assert_eq!(report["files_removed"], 1, "{report}");
    assert!(
        found("retired plan weekly audits")
            .iter()
            .all(|source| source != "archive/old.md"),
        "the archive left the project"
    );
}
