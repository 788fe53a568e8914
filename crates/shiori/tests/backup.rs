//! Online backup and restore end to end (issue 51): a backup taken while a reindex writes and
//! queries are answered restores to an index that answers exactly as the original; a backup
//! killed at any moment leaves the live index intact and nothing restore accepts.

mod common;

use common::{command, http, index, run, run_json, start_serving};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FILES: usize = 200;
const QUESTIONS: usize = 50;
const FIRST: [&str; 20] = [
    "amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kestrel", "lagoon", "maple", "nimbus", "onyx", "pebble", "quartz", "raven", "sierra",
    "tundra",
];
const SECOND: [&str; 10] = [
    "falcon", "meadow", "canyon", "lantern", "orchid", "glacier", "compass", "thistle", "beacon",
    "willow",
];

/// The name of office `n`: two words no other office shares.
fn office(n: usize) -> String {
    format!("{} {}", FIRST[n % FIRST.len()], SECOND[n / FIRST.len()])
}

/// `FILES` Markdown pages, one office each, with facts a question can be answered from.
fn write_corpus(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for n in 0..FILES {
        let name = office(n);
        let text = format!(
            "# The {name} office\n\nThe badge code of the {name} office is {code}. Visitors to \
             the {name} office sign in at reception on floor {floor}. The {name} office's \
             parking opens at {hour}:00 and the kitchen is cleaned on day {day} of each month.\n",
            code = 10_000 + n * 37,
            floor = n % 9 + 1,
            hour = n % 5 + 6,
            day = n % 28 + 1,
        );
        std::fs::write(dir.join(format!("office-{n:03}.md")), text).unwrap();
    }
}

fn question(n: usize) -> String {
    format!("What is the badge code of the {} office?", office(n))
}

/// An answer as compared between two indexes: the text, the refusal, and each source with its
/// score.
fn answer(addr: &str, question: &str) -> Value {
    let body = json!({"question": question}).to_string();
    let (status, text) = http(
        addr,
        "POST",
        "/api/query",
        &["Content-Type: application/json"],
        &body,
    );
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    let sources: Vec<Value> = answer["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| json!([s["chunk_id"], s["score"]]))
        .collect();
    json!({"answer": answer["answer"], "refused": answer["refused"], "sources": sources})
}

fn answers(addr: &str) -> Vec<Value> {
    (0..QUESTIONS)
        .map(|n| answer(addr, &question(n * 4)))
        .collect()
}

/// `work/data` with the corpus in `work/corpus` indexed.
fn indexed(work: &Path) -> (PathBuf, PathBuf) {
    let data = work.join("data");
    let corpus = work.join("corpus");
    write_corpus(&corpus);
    run_json(&data, &["init", "--no-chat-model"]);
    let report = index(&data, &corpus);
    assert_eq!(report["files_indexed"], FILES, "{report}");
    (data, corpus)
}

#[test]
fn a_backup_taken_during_a_reindex_and_queries_restores_to_the_same_answers() {
    let work = tempfile::tempdir().unwrap();
    let (data, corpus) = indexed(work.path());
    let (_serving, addr, _) = start_serving(command(&data));
    let original = answers(&addr);
    assert!(
        original.iter().any(|a| a["refused"] == false),
        "{original:?}"
    );

    // Reindex passes back to back (every file's time moved, so each pass re-reads and re-hashes
    // all 200 files and rewrites their records), and a hundred queries, while backups are taken.
    let stop = Arc::new(AtomicBool::new(false));
    let in_pass = Arc::new(AtomicBool::new(false));
    let reindexing = {
        let (data, corpus) = (data.clone(), corpus.clone());
        let (stop, in_pass) = (stop.clone(), in_pass.clone());
        std::thread::spawn(move || reindex_until(&data, &corpus, &stop, &in_pass))
    };
    let querying = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            for n in 0..100 {
                answer(&addr, &question(n % FILES));
            }
        })
    };
    let mut taken = Vec::new();
    for attempt in 0..3 {
        std::thread::sleep(Duration::from_millis(400));
        let dest = work.path().join(format!("backup-{attempt}"));
        let during = in_pass.load(Ordering::SeqCst);
        let started = Instant::now();
        let report = run_json(&data, &["backup", dest.to_str().unwrap()]);
        let during = during && in_pass.load(Ordering::SeqCst);
        eprintln!(
            "backup {attempt} (mid-reindex: {during}): {report} in {:?}",
            started.elapsed()
        );
        taken.push((dest, during));
    }
    stop.store(true, Ordering::SeqCst);
    let passes = reindexing.join().unwrap();
    querying.join().unwrap();
    assert!(passes >= 2, "{passes} reindex pass(es)");
    assert!(
        taken.iter().any(|(_, during)| *during),
        "no backup started and ended while a reindex ran: nothing was tested"
    );
    for (n, (backup, _)) in taken.iter().enumerate() {
        let restored = work.path().join(format!("restored-{n}"));
        let restore = run_json(&restored, &["restore", backup.to_str().unwrap()]);
        eprintln!("restore {n}: {restore}");
        let (_restored_serving, restored_addr, _) = start_serving(command(&restored));
        assert_eq!(answers(&restored_addr), original, "backup {n}");
    }
}

/// Runs `shiori index CORPUS` again and again, each time after moving every file's time,
/// until `stop`; `in_pass` is set while one runs. Returns the passes run.
fn reindex_until(data: &Path, corpus: &Path, stop: &AtomicBool, in_pass: &AtomicBool) -> usize {
    let mut passes = 0;
    while !stop.load(Ordering::SeqCst) {
        let status = Command::new("touch")
            .arg("-d")
            .arg(format!("@{}", 1_700_000_000 + passes))
            .args(
                std::fs::read_dir(corpus)
                    .unwrap()
                    .map(|e| e.unwrap().path()),
            )
            .status()
            .unwrap();
        assert!(status.success());
        in_pass.store(true, Ordering::SeqCst);
        let output = command(data)
            .args(["--json", "index"])
            .arg(corpus)
            .output()
            .unwrap();
        in_pass.store(false, Ordering::SeqCst);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["files_seen"], FILES, "{report}");
        passes += 1;
    }
    passes
}

fn original_chunks(data: &Path) -> Value {
    run_json(data, &["stats"])["chunks"].clone()
}

#[test]
fn a_killed_backup_leaves_the_index_intact_and_nothing_restore_accepts() {
    let work = tempfile::tempdir().unwrap();
    let (data, _) = indexed(work.path());
    let search = |data: &Path| {
        let mut result = run_json(data, &["search", &question(7)]);
        result.as_object_mut().unwrap().remove("timings_ms");
        result
    };
    let before = search(&data);
    let chunks = original_chunks(&data);
    let backups = work.path().join("backups");
    std::fs::create_dir_all(&backups).unwrap();
    for (attempt, delay_ms) in [0u64, 5, 10, 20, 40, 80, 160].into_iter().enumerate() {
        let dest = backups.join(format!("attempt-{attempt}"));
        let mut child = command(&data)
            .arg("backup")
            .arg(&dest)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Whatever the kill left (a finished backup, a hidden staging folder, nothing), restore
        // accepts only a whole one: one that restores every chunk.
        for entry in std::fs::read_dir(&backups).unwrap() {
            let left = entry.unwrap().path();
            let target = work.path().join(format!("restore-{attempt}"));
            let restored = run(&target, &["restore", left.to_str().unwrap()]);
            let stderr = String::from_utf8_lossy(&restored.stderr);
            match restored.status.success() {
                true => assert_eq!(original_chunks(&target), chunks, "{left:?}"),
                false => assert!(
                    stderr.contains("not a finished backup"),
                    "{left:?}: {stderr}"
                ),
            }
            let _ = std::fs::remove_dir_all(&target);
        }
        for entry in std::fs::read_dir(&backups).unwrap() {
            std::fs::remove_dir_all(entry.unwrap().path()).unwrap();
        }
    }
    assert_eq!(search(&data), before);
    // The doctor shows this machine's paths (the models', the disk's), which run_json refuses.
    let doctor = command(&data).args(["--json", "doctor"]).output().unwrap();
    assert!(doctor.status.success());
    let doctor: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let store = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "store")
        .unwrap();
    assert_eq!(store["status"], "ok", "{store}");
}

#[test]
fn restore_refuses_a_damaged_backup_and_a_data_directory_in_use() {
    let work = tempfile::tempdir().unwrap();
    let (data, _) = indexed(work.path());
    let dest = work.path().join("backup");
    let report = run_json(&data, &["backup", dest.to_str().unwrap()]);
    assert_eq!(
        report["derived_indexes"], true,
        "an idle store's indexes are copied: {report}"
    );
    let again = run(&data, &["backup", dest.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));

    let refused = run(&data, &["restore", dest.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("is not empty"),
        "{stderr}"
    );

    let damaged = work.path().join("damaged");
    copy_dir(&dest, &damaged);
    let mut bytes = std::fs::read(damaged.join("shiori.sqlite")).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(damaged.join("shiori.sqlite"), bytes).unwrap();
    let target = work.path().join("target");
    let refused = run(&target, &["restore", damaged.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("shiori.sqlite in the backup does not match"),
        "{stderr}"
    );
    assert!(!target.exists(), "a refused restore wrote into the target");

    // A backup without its derived indexes is restored with them rebuilt, answering alike.
    let bare = work.path().join("bare");
    copy_dir(&dest, &bare);
    strip_derived(&bare);
    let restored = work.path().join("restored");
    let report = run_json(&restored, &["restore", bare.to_str().unwrap()]);
    assert!(report["rebuilt"].is_string(), "{report}");
    let ids = |dir: &Path| {
        let hits = run_json(dir, &["search", &question(3), "--mode", "bm25"])["hits"].clone();
        hits.as_array()
            .unwrap()
            .iter()
            .map(|h| h["chunk_id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&restored), ids(&data));
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Takes the BM25 and vector files out of a backup and out of its manifest, as a backup taken
/// in the middle of a write is.
fn strip_derived(backup: &Path) {
    std::fs::remove_dir_all(backup.join("bm25")).unwrap();
    std::fs::remove_file(backup.join("vectors.usearch")).unwrap();
    let path = backup.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    manifest["derived_indexes"] = json!(false);
    let files = manifest["files"].as_array_mut().unwrap();
    files.retain(|f| {
        let name = f["path"].as_str().unwrap();
        !name.starts_with("bm25/") && name != "vectors.usearch"
    });
    std::fs::write(&path, serde_json::to_vec(&manifest).unwrap()).unwrap();
}
