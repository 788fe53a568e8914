//! End to end: `shiori index --watch` follows a folder as files are created, edited and
//! deleted, while separate `shiori search` processes keep reading the index.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// Generous: the machine may be busy with other builds, and every poll loads the embedder.
const FOLLOW_TIMEOUT: Duration = Duration::from_secs(180);

/// Kills the watcher however the test ends.
struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_watcher(data: &Path, folder: &Path) -> (Watcher, Receiver<String>) {
    let mut child = command(data)
        .args(["--json", "index", "--watch", "--debounce-ms", "300"])
        .arg(folder)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    (Watcher(child), lines)
}

/// Sources of the hits whose text or title (a heading is the title of the chunks under it)
/// holds `word` (a made-up word; BM25's character bigrams also rank chunks that merely share
/// letters with it). Every search must succeed, even while the
/// watcher writes.
fn sources_for(data: &Path, word: &str) -> Vec<String> {
    let output = command(data)
        .args(["--json", "search", word, "--mode", "bm25"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "search failed while the watcher runs: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|hit| {
            let text = hit["text"].as_str().unwrap().to_lowercase();
            let title = hit["title"].as_str().unwrap_or_default().to_lowercase();
            text.contains(word) || title.contains(word)
        })
        .map(|hit| hit["source"].as_str().unwrap().to_string())
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < FOLLOW_TIMEOUT,
            "the index did not follow within {FOLLOW_TIMEOUT:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn the_index_follows_created_edited_and_deleted_files() {
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("notes");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("first.txt"),
        "The zorblatt procedure restarts the ingest queue.",
    )
    .unwrap();
    let data = work.path().join("data");
    let (_watcher, lines) = start_watcher(&data, &folder);

    let initial = lines.recv_timeout(FOLLOW_TIMEOUT).unwrap();
    let initial: serde_json::Value = serde_json::from_str(&initial).unwrap();
    assert_eq!(initial["report"]["files_indexed"], 1, "{initial}");
    assert_eq!(sources_for(&data, "zorblatt").len(), 1);

    let second = folder.join("second.txt");
    std::fs::write(&second, "Quixotrel badges open the north door.").unwrap();
    wait_until("a created file is indexed", || {
        sources_for(&data, "quixotrel").len() == 1
    });

    std::fs::write(&second, "Vintrapod badges open the south door.").unwrap();
    wait_until("an edited file is re-indexed", || {
        sources_for(&data, "vintrapod").len() == 1 && sources_for(&data, "quixotrel").is_empty()
    });

    std::fs::create_dir_all(folder.join("deep/er")).unwrap();
    std::fs::write(
        folder.join("deep/er/third.md"),
        "# Glimmerfax\n\nA new folder's files are watched too.",
    )
    .unwrap();
    wait_until("a file in a new folder is indexed", || {
        sources_for(&data, "glimmerfax").len() == 1
    });

    std::fs::remove_file(&second).unwrap();
    wait_until("a deleted file is dropped", || {
        sources_for(&data, "vintrapod").is_empty()
    });
    assert_eq!(
        sources_for(&data, "zorblatt").len(),
        1,
        "untouched file kept"
    );
    assert_eq!(run_json(&data, &["stats"])["files"], 2);
}
