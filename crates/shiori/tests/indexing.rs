//! End to end: indexing a folder, re-indexing, deletions, bad files and crash recovery.

#[macro_use]
mod common;

use common::*;
use std::time::{Duration, Instant};

backend_tests!(
    indexes_a_folder_and_ranks_the_right_documents,
    reindexing_skips_unchanged_files_and_drops_deleted_ones,
    a_same_size_edit_that_keeps_the_modification_time_is_reindexed,
    bad_files_fail_alone_and_are_named,
    records_bring_their_own_vectors,
);

fn file_name(doc_id: &str) -> &str {
    doc_id.rsplit('/').next().unwrap_or(doc_id)
}

fn indexes_a_folder_and_ranks_the_right_documents(backend: Backend) {
    let store = test_store(backend);
    let work = &store.work;
    let corpus = work.path().join("corpus");
    copy_fixtures(&corpus);
    let data = work.path().join("data");
    let report = index(&data, &corpus);
    assert_eq!(report["files_indexed"], 5, "{report}");
    assert_eq!(report["failures"].as_array().unwrap().len(), 0, "{report}");
    assert_eq!(
        report["documents"], 6,
        "faq.jsonl holds two records: {report}"
    );

    let cases = [
        ("有給休暇は何日もらえますか", "vacation.md"),
        ("how do I connect to the VPN", "vpn.txt"),
        ("taxi receipt reimbursement", "expenses.html"),
        ("パスワードを忘れた", "faq-password"),
        ("how much storage does a workspace get", "faq-storage"),
        ("Osaka office address", "offices.csv"),
    ];
    for mode in ["bm25", "dense", "hybrid"] {
        for (query, expected) in cases {
            if mode == "dense" && !query.is_ascii() {
                // all-MiniLM-L6-v2 is English-only: its Japanese ranking is not a promise.
                continue;
            }
            let ids = search_ids(&data, query, mode);
            assert_eq!(file_name(&ids[0]), expected, "{mode} {query}: {ids:?}");
        }
    }
    let html = run_json(&data, &["search", "tracking script", "--mode", "bm25"]);
    for hit in html["hits"].as_array().unwrap() {
        assert!(
            !hit["text"].as_str().unwrap().contains("do not index"),
            "{hit}"
        );
    }
}

fn reindexing_skips_unchanged_files_and_drops_deleted_ones(backend: Backend) {
    let store = test_store(backend);
    let work = &store.work;
    let corpus = work.path().join("corpus");
    copy_fixtures(&corpus);
    let data = work.path().join("data");
    let first = index(&data, &corpus);
    let chunks_before = run_json(&data, &["stats"])["chunks"].as_u64().unwrap();

    let second = index(&data, &corpus);
    assert_eq!(second["chunks_embedded"], 0, "{second}");
    assert_eq!(second["files_indexed"], 0, "{second}");
    assert_eq!(
        second["files_unchanged"], first["files_indexed"],
        "{second}"
    );

    std::fs::remove_file(corpus.join("vpn.txt")).unwrap();
    let third = index(&data, &corpus);
    assert_eq!(third["files_removed"], 1, "{third}");
    assert!(third["chunks_removed"].as_u64().unwrap() >= 1, "{third}");
    let chunks_after = run_json(&data, &["stats"])["chunks"].as_u64().unwrap();
    assert_eq!(
        chunks_after,
        chunks_before - third["chunks_removed"].as_u64().unwrap()
    );
    for mode in ["bm25", "dense"] {
        let ids = search_ids(&data, "WireGuard VPN client", mode);
        assert!(ids.iter().all(|id| file_name(id) != "vpn.txt"), "{ids:?}");
    }

    std::fs::write(
        corpus.join("vacation.md"),
        "# 休暇制度\n\n## 夏季休暇\n\n夏季休暇は8月に3日間取得できます。",
    )
    .unwrap();
    let fourth = index(&data, &corpus);
    assert_eq!(fourth["files_indexed"], 1, "{fourth}");
    let ids = search_ids(&data, "夏季休暇", "bm25");
    assert_eq!(file_name(&ids[0]), "vacation.md");

    let reembed = run(&data, &["index", "--reembed", corpus.to_str().unwrap()]);
    assert!(
        reembed.status.success(),
        "{}",
        String::from_utf8_lossy(&reembed.stderr)
    );
    let chunks = run_json(&data, &["stats"])["chunks"].as_u64().unwrap();
    assert!(
        String::from_utf8_lossy(&reembed.stderr)
            .contains(&format!("re-embedded {chunks} chunk(s)")),
        "{}",
        String::from_utf8_lossy(&reembed.stderr)
    );
    // Off a terminal, re-embedding says how far it got in chunks (issue 47).
    let progress = String::from_utf8_lossy(&reembed.stderr);
    assert!(
        progress.contains(&format!(
            "re-embedding chunks: {chunks}/{chunks}, {chunks} chunks embedded"
        )),
        "{progress}"
    );
    let ids = search_ids(&data, "storage quota per workspace", "dense");
    assert_eq!(ids[0], "faq-storage");
}

fn a_same_size_edit_that_keeps_the_modification_time_is_reindexed(backend: Backend) {
    let store = test_store(backend);
    let work = &store.work;
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let note = corpus.join("quota.txt");
    // Every read happens within two seconds of this stamp (it lies ahead), however slow the
    // machine: what a filesystem with a coarse clock shows for two writes within one tick.
    let stamp = std::time::SystemTime::now() + Duration::from_secs(3600);
    let write = |text: &str| {
        std::fs::write(&note, text).unwrap();
        let file = std::fs::File::options().write(true).open(&note).unwrap();
        file.set_modified(stamp).unwrap();
    };
    write("Every workspace includes 100 GB of storage.");
    let data = work.path().join("data");
    index(&data, &corpus);

    write("Every workspace includes 250 GB of storage.");
    let second = index(&data, &corpus);
    assert_eq!(second["files_indexed"], 1, "{second}");
    let hits = run_json(&data, &["search", "storage", "--mode", "bm25"]);
    assert!(
        hits["hits"][0]["text"].as_str().unwrap().contains("250 GB"),
        "{hits}"
    );
    let third = index(&data, &corpus);
    assert_eq!(
        (
            third["files_indexed"].as_u64(),
            third["chunks_embedded"].as_u64()
        ),
        (Some(0), Some(0)),
        "{third}"
    );
}

/// A file indexed by an earlier version is read again by a newer reader even though it did
/// not change: its chunks are what the earlier reader made of it (a PDF's text before its
/// pages were laid out from their glyphs).
#[test]
fn a_file_an_earlier_reader_indexed_is_read_again() {
    let store = test_store(Backend::Embedded);
    let corpus = store.work.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("quota.txt"), "Every workspace includes 100 GB.").unwrap();
    index(&store.data, &corpus);
    // What the version before reader stamps stored: the content hash alone.
    let database = rusqlite::Connection::open(store.data.join("shiori.sqlite")).unwrap();
    let unstamped = database
        .execute(
            "UPDATE files SET content_hash = substr(content_hash, 1, instr(content_hash, '@') - 1)",
            [],
        )
        .unwrap();
    assert_eq!(unstamped, 1);
    drop(database);
    let again = index(&store.data, &corpus);
    assert_eq!(again["files_indexed"], 1, "{again}");
    let then = index(&store.data, &corpus);
    assert_eq!(
        (
            then["files_indexed"].as_u64(),
            then["files_unchanged"].as_u64()
        ),
        (Some(0), Some(1)),
        "{then}"
    );
}

/// A page's chunks carry the title of its folder's index page: "Acme" is said once, in the
/// README, and the leave page is found by it. Retitling the README reads its pages again.
#[test]
fn a_page_is_found_by_its_sections_title_and_a_retitled_section_reads_it_again() {
    let store = test_store(Backend::Embedded);
    let corpus = store.work.path().join("corpus");
    let write = |name: &str, text: &str| {
        let path = corpus.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("acme/README.md", "# Acme handbook\n\nHow we work.");
    write(
        "acme/leave.md",
        "# Leave\n\nEveryone gets twenty days of paid leave.",
    );
    write(
        "kumo/leave.md",
        "# Leave\n\nEveryone gets ten days of paid leave.",
    );
    index(&store.data, &corpus);
    let title_of_first = |query: &str| {
        let found = run_json(&store.data, &["search", query, "--mode", "bm25"]);
        let first = &found["hits"][0];
        (
            first["title"].as_str().unwrap().to_string(),
            first["source"].as_str().unwrap().to_string(),
        )
    };
    let (title, source) = title_of_first("acme leave days");
    assert_eq!(
        (title.as_str(), source.as_str()),
        ("Acme handbook › Leave", "corpus/acme/leave.md")
    );
    write("acme/README.md", "# Umi handbook\n\nHow we work.");
    let again = index(&store.data, &corpus);
    assert_eq!(
        again["files_indexed"], 2,
        "the README and the page under it: {again}"
    );
    let (title, _) = title_of_first("umi leave days");
    assert_eq!(title, "Umi handbook › Leave");
}

fn bad_files_fail_alone_and_are_named(backend: Backend) {
    let store = test_store(backend);
    let work = &store.work;
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("good.md"),
        "# Good\n\nThe cafeteria opens at 11:30.",
    )
    .unwrap();
    std::fs::write(corpus.join("empty.txt"), "").unwrap();
    std::fs::write(corpus.join("blank.md"), "\n\n").unwrap();
    std::fs::write(
        corpus.join("minutes.doc"),
        b"\xd0\xcf\x11\xe0 an old Word file",
    )
    .unwrap();
    std::fs::write(corpus.join("memo.rtf"), "{\\rtf1 a memo}").unwrap();
    std::fs::write(corpus.join("latin1.txt"), b"caf\xe9 au lait \xff\xfe").unwrap();
    std::fs::write(corpus.join("binary.txt"), b"ELF\x00\x01\x02\x00\x00binary").unwrap();
    let huge = "All work and no play makes a dull index.\n".repeat(50 * 1024 * 1024 / 41 + 1);
    std::fs::write(corpus.join("huge.txt"), huge).unwrap();
    std::fs::write(
        corpus.join("records.jsonl"),
        "{\"doc_id\":\"r1\",\"text\":\"Parking is free on weekends.\"}\n{broken\n",
    )
    .unwrap();

    let data = work.path().join("data");
    let report = index_with_failures(&data, &corpus);
    // Blank files are read (as holding nothing) and said to be; they fail nothing.
    assert_eq!(report["files_indexed"], 4, "{report}");
    let listed = |key: &str| -> Vec<(String, String)> {
        report[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_string(),
                    f["reason"].as_str().unwrap().to_lowercase(),
                )
            })
            .collect()
    };
    let (failures, warnings) = (listed("failures"), listed("warnings"));
    let reason_in = |list: &[(String, String)], name: &str| {
        list.iter()
            .find(|(path, _)| path.contains(name))
            .map(|(_, reason)| reason.clone())
            .unwrap_or_else(|| panic!("{name} not reported: {list:?}"))
    };
    let reason_for = |name: &str| reason_in(&failures, name);
    for blank in ["empty.txt", "blank.md"] {
        assert!(
            reason_in(&warnings, blank).contains("empty"),
            "{warnings:?}"
        );
    }
    assert!(reason_in(&warnings, "minutes.doc").contains(".docx"));
    assert!(reason_in(&warnings, "memo.rtf").contains(".docx"));
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(reason_for("latin1.txt").contains("utf-8"));
    assert!(reason_for("binary.txt").contains("binary"));
    assert!(reason_for("huge.txt").contains("too large"));
    assert!(reason_for("records.jsonl").contains("line 2"));
    assert_eq!(failures.len(), 4, "{failures:?}");
    assert_eq!(
        file_name(&search_ids(&data, "cafeteria", "bm25")[0]),
        "good.md"
    );
    assert_eq!(search_ids(&data, "parking weekends", "bm25")[0], "r1");
}

/// Issue 47: a blank Markdown file in a folder no longer fails the run (exit 2); it is said
/// to be empty, and a page emptied since the last run loses its old chunks.
#[test]
fn a_blank_file_is_a_warning_and_empties_what_it_held() {
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("lounge.md"),
        "# Lounge\n\nThe lounge opens at 7 am.",
    )
    .unwrap();
    std::fs::write(corpus.join("todo.md"), "").unwrap();
    let data = work.path().join("data");
    let report = index(&data, &corpus);
    assert_eq!(report["failures"], serde_json::json!([]), "{report}");
    assert_eq!(
        report["warnings"][0]["reason"],
        "file is empty: nothing in it to index"
    );

    std::fs::write(corpus.join("lounge.md"), " \n").unwrap();
    let report = index(&data, &corpus);
    assert_eq!(report["files_indexed"], 1, "{report}");
    assert!(search_ids(&data, "lounge opens", "bm25").is_empty());
}

/// Issue 47: off a terminal, indexing reports on stderr what takes the time (chunks embedded,
/// not only files), as text or, with `--json`, as JSON lines a script can read; stdout keeps
/// the one report.
#[test]
fn indexing_reports_its_progress_in_chunks_off_a_terminal() {
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    copy_fixtures(&corpus);
    let data = work.path().join("data");
    let output = command(&data)
        .args(["--json", "index"])
        .arg(&corpus)
        .output()
        .unwrap();
    assert!(output.status.success());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .filter(|event: &serde_json::Value| event.get("progress").is_some())
        .collect();
    let last = events
        .last()
        .unwrap_or_else(|| panic!("no progress: {stderr}"));
    assert_eq!(last["progress"], "indexing files", "{stderr}");
    assert_eq!(last["finished"], true, "{stderr}");
    assert_eq!(last["done"], report["files_seen"], "{stderr}");
    let chunks =
        report["chunks_embedded"].as_u64().unwrap() + report["chunks_cached"].as_u64().unwrap();
    assert_eq!(last["chunks_embedded"], chunks, "{stderr}");

    std::fs::write(corpus.join("new.md"), "# New\n\nThe new wing opens in May.").unwrap();
    let output = command(&data).arg("index").arg(&corpus).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("indexing files: ")
            && stderr.contains(", 1 chunks embedded (")
            && stderr.contains("done in"),
        "{stderr}"
    );
}

#[test]
fn a_killed_index_run_leaves_a_store_that_opens_and_resumes() {
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let files = 1_500;
    // A run-specific word keeps the embedding cache from making the run too quick to interrupt.
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    for i in 0..files {
        std::fs::write(
            corpus.join(format!("note-{i:04}.txt")),
            format!(
                "Meeting note number {i} of run {run_id}. The topic was project {} and budget line {}.",
                i % 37,
                i * 7
            ),
        )
        .unwrap();
    }
    let data = work.path().join("data");
    let mut child = command(&data)
        .arg("index")
        .arg(&corpus)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill once the first batch has reached the database, well before the run can finish.
    let database = data.join("shiori.sqlite-wal");
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::metadata(&database).map_or(0, |m| m.len()) < 64 * 1024 {
        assert!(
            Instant::now() < deadline,
            "indexing never wrote to the store"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "indexing finished before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let partial = run_json(&data, &["stats"]);
    let stored = partial["files"].as_u64().unwrap();
    assert!(
        stored < files,
        "the kill came too late to test anything: {partial}"
    );

    let resumed = index(&data, &corpus);
    assert_eq!(
        resumed["files_unchanged"].as_u64().unwrap(),
        stored,
        "{resumed}"
    );
    let stats = run_json(&data, &["stats"]);
    assert_eq!(stats["files"], files, "{stats}");
    assert_eq!(stats["chunks"], files, "{stats}");
    let ids = search_ids(&data, "Meeting note number 1499", "bm25");
    assert!(ids[0].ends_with("note-1499.txt"), "{ids:?}");
}

#[test]
fn two_index_runs_at_once_store_every_chunk_exactly_once() {
    let store = test_store(Backend::Postgres);
    let corpus = store.work.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let files = 120;
    // A run-specific word keeps the embedding cache from making either run too quick to overlap.
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    for i in 0..files {
        std::fs::write(
            corpus.join(format!("memo-{i:03}.txt")),
            format!(
                "Memo {i} of run {run_id}: the committee met about topic {}.",
                i % 11
            ),
        )
        .unwrap();
    }
    let spawn = || {
        command(&store.data)
            .arg("--json")
            .arg("index")
            .arg(&corpus)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let runs = [spawn(), spawn()];
    let reports: Vec<serde_json::Value> = runs
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            serde_json::from_slice(&output.stdout).unwrap()
        })
        .collect();
    let added: u64 = reports
        .iter()
        .map(|r| r["chunks_added"].as_u64().unwrap())
        .sum();
    let removed: u64 = reports
        .iter()
        .map(|r| r["chunks_removed"].as_u64().unwrap())
        .sum();
    assert_eq!((added, removed), (files, 0), "{reports:?}");
    let stats = run_json(&store.data, &["stats"]);
    assert_eq!(
        (stats["files"].as_u64(), stats["chunks"].as_u64()),
        (Some(files), Some(files)),
        "{stats}"
    );
    let hits = run_json(
        &store.data,
        &["search", "Memo 77 committee", "--mode", "bm25"],
    );
    let sources: Vec<&str> = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["source"].as_str().unwrap())
        .collect();
    assert!(sources[0].ends_with("memo-077.txt"), "{sources:?}");
    let unique: std::collections::HashSet<&&str> = sources.iter().collect();
    assert_eq!(
        unique.len(),
        sources.len(),
        "a chunk came back twice: {sources:?}"
    );
}

#[test]
fn migrate_copies_an_embedded_store_into_postgres_without_reembedding() {
    let target = test_store(Backend::Postgres);
    let source = test_store(Backend::Embedded);
    let corpus = source.work.path().join("corpus");
    copy_fixtures(&corpus);
    index(&source.data, &corpus);
    let id = start_conversation(&source.data, "How do I connect to the VPN?");
    let url = target.url.as_deref().unwrap();
    let migrated = run_json(
        &target.data,
        &[
            "migrate",
            "--from",
            source.data.to_str().unwrap(),
            "--to",
            url,
        ],
    );
    let before = run_json(&source.data, &["stats"]);
    assert_eq!(migrated["files"], before["files"], "{migrated}");
    assert_eq!(migrated["chunks_added"], before["chunks"], "{migrated}");
    assert_eq!(migrated["conversations"], 1, "{migrated}");
    let follow_up = run_json(
        &target.data,
        &["ask", "--conversation", &id, "And from home?"],
    );
    let condensed = &follow_up["trace"]["steps"][0];
    assert_eq!(condensed["step"], "condense", "{follow_up}");
    assert!(
        condensed["output"]
            .as_str()
            .unwrap()
            .ends_with("How do I connect to the VPN?"),
        "the copied turn is the history: {condensed}"
    );
    let after = run_json(&target.data, &["stats"]);
    for key in ["files", "documents", "chunks", "embedder"] {
        assert_eq!(after[key], before[key], "{key}: {after} vs {before}");
    }
    // The copied vectors and terms rank as the originals did, and nothing needed embedding.
    for (query, mode) in [
        ("how do I connect to the VPN", "dense"),
        ("パスワードを忘れた", "bm25"),
        ("taxi receipt reimbursement", "hybrid"),
    ] {
        let expected = run_json(&source.data, &["search", query, "--mode", mode]);
        let got = run_json(&target.data, &["search", query, "--mode", mode]);
        assert_eq!(
            got["hits"][0]["chunk_id"], expected["hits"][0]["chunk_id"],
            "{mode} {query}"
        );
        if mode == "dense" {
            let (a, b) = (
                got["hits"][0]["score"].as_f64().unwrap(),
                expected["hits"][0]["score"].as_f64().unwrap(),
            );
            assert!((a - b).abs() < 1e-4, "{query}: {a} vs {b}");
        }
    }
    let reindex = index(&target.data, &corpus);
    assert_eq!(
        (
            reindex["files_indexed"].as_u64(),
            reindex["chunks_embedded"].as_u64()
        ),
        (Some(0), Some(0)),
        "{reindex}"
    );
    // Running it again changes nothing.
    let again = run_json(
        &target.data,
        &[
            "migrate",
            "--from",
            source.data.to_str().unwrap(),
            "--to",
            url,
        ],
    );
    assert_eq!(again["chunks_added"], 0, "{again}");
    assert_eq!(again["conversations"], 0, "{again}");
}

/// Asks `question` in a new `shiori chat` conversation; returns its id.
fn start_conversation(data: &std::path::Path, question: &str) -> String {
    use std::io::Write;
    let mut child = command(data)
        .args(["--json", "chat"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(question.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    answer["conversation_id"].as_str().unwrap().to_string()
}

/// An OpenAI-style embeddings API that puts every text mentioning "north" near the first axis
/// and everything else on the fourth.
fn compass_embedder() -> shiori_mock::MockServer {
    shiori_mock::MockServer::start(|request| {
        let inputs = request.json()["input"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let data: Vec<serde_json::Value> = inputs
            .iter()
            .enumerate()
            .map(|(index, text)| {
                let north = text.as_str().unwrap_or_default().contains("north");
                let embedding = if north {
                    [0.9, 0.1, 0.0, 0.0]
                } else {
                    [0.0, 0.0, 0.0, 1.0]
                };
                serde_json::json!({"object": "embedding", "index": index, "embedding": embedding})
            })
            .collect();
        shiori_mock::Reply::json(serde_json::json!({
            "object": "list",
            "data": data,
            "model": "compass",
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }))
    })
}

fn embedded_texts(api: &shiori_mock::MockServer) -> Vec<String> {
    api.requests_to("/embeddings")
        .iter()
        .flat_map(|request| {
            request.json()["input"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|text| text.as_str().unwrap_or_default().to_string())
        .collect()
}

/// JSONL records may carry their vectors (a migration from another system, or vectors made
/// elsewhere): those are stored as they are, one chunk per record, and never sent to the
/// embedder; a vector of the wrong size fails its record alone.
fn records_bring_their_own_vectors(backend: Backend) {
    let store = test_store(backend);
    let api = compass_embedder();
    append_config(
        &store.data,
        &format!(
            "[embedder]\nkind = \"openai\"\nmodel = \"compass\"\nbase_url = \"{}\"\ndimension = 4\n",
            api.url()
        ),
    );
    let corpus = store.work.path().join("records.jsonl");
    std::fs::write(
        &corpus,
        concat!(
            r#"{"_id": "harbour", "text": "Due north of the harbour", "vector": [2, 0, 0, 0]}"#,
            "\n",
            r#"{"_id": "gate", "text": "The east gate, north side", "vector": [0, 1, 0, 0]}"#,
            "\n",
            r#"{"_id": "short", "text": "A vector too short", "vector": [1, 0, 0]}"#,
            "\n",
            r#"{"_id": "plain", "text": "A record without a vector"}"#,
            "\n",
        ),
    )
    .unwrap();
    let report = index_with_failures(&store.data, &corpus);
    assert_eq!(report["chunks_imported"], 2, "{report}");
    // Other tests on this machine may have put the plain record in the embedding cache.
    let from_embedder = report["chunks_embedded"].as_u64().unwrap();
    assert_eq!(
        from_embedder + report["chunks_cached"].as_u64().unwrap(),
        1,
        "{report}"
    );
    assert_eq!(report["chunks_added"], 3, "{report}");
    let failures = report["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{report}");
    assert_eq!(
        failures[0]["reason"], "line 3: vector has 3 dimensions; the embedder makes 4",
        "{report}"
    );
    let sent = embedded_texts(&api);
    assert_eq!(sent.len() as u64, from_embedder, "{sent:?}");
    assert!(
        sent.iter().all(|text| text == "A record without a vector"),
        "{sent:?}"
    );

    // The query is embedded by the API and lands nearest the imported vector on its axis,
    // though the gate's text mentions "north" too: its own vector says otherwise.
    let ids = search_ids(&store.data, "which way is north", "dense");
    assert_eq!(ids.first().map(String::as_str), Some("harbour"), "{ids:?}");
    let again = index(&store.data, &corpus);
    assert_eq!(again["files_unchanged"], 1, "{again}");
    let since = embedded_texts(&api).split_off(sent.len());
    assert_eq!(
        since,
        ["which way is north"],
        "only the query was embedded since"
    );
}
