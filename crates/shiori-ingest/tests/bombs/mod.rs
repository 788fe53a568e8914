//! What the bomb tests share. Each bomb has its own test binary (`tests/bomb_*.rs`), so the
//! peak memory a test reads from `/proc/self/status` is that bomb's alone.

// Each bomb binary compiles this module and uses only some of it.
#![allow(dead_code)]

use shiori_ingest::{discover, load_file, IngestError, LoadedFile, WalkOptions};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// What the issue asks of a bomb: it fails within a minute, and the process never holds 1 GB.
pub const MAX_PEAK_RSS_MIB: u64 = 1024;
/// A bomb still being read after this has hung the test: it is failed rather than left to
/// run for hours. Generous, so a slow CI machine is not the reason; the time taken is printed.
const WATCHDOG: Duration = Duration::from_secs(300);

/// The file the folder holds besides the bomb, and a phrase of its text.
pub const GOOD_FILE: &str = "good.md";
pub const GOOD_TEXT: &str = "The quarterly report is due on Friday.";

/// The process's peak resident memory so far (`VmHWM`), in MiB.
pub fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/self/status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|value| value.parse().ok())
        .expect("VmHWM in kB");
    kib / 1024
}

/// What reading a folder gave: the files that loaded and the errors of those that did not.
pub struct Ingested {
    pub loaded: Vec<(PathBuf, LoadedFile)>,
    pub failed: Vec<IngestError>,
}

/// Reads every file of `dir` as the indexer does (walk, then one load per file), in another
/// thread, failing the test if that has not finished within the watchdog.
pub fn ingest_folder(dir: &Path) -> Ingested {
    let dir = dir.to_path_buf();
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let walked = discover(&[dir], &WalkOptions::default()).expect("walk");
        assert!(walked.failures.is_empty(), "{:?}", walked.failures);
        let mut ingested = Ingested {
            loaded: Vec::new(),
            failed: Vec::new(),
        };
        for file in walked.files {
            match load_file(&file.path, file.modified) {
                Ok(loaded) => ingested.loaded.push((file.path, loaded)),
                Err(error) => ingested.failed.push(error),
            }
        }
        // The receiver is gone only when the watchdog already failed the test.
        let _ = sender.send(ingested);
    });
    receiver
        .recv_timeout(WATCHDOG)
        .unwrap_or_else(|_| panic!("the folder was still being read after {WATCHDOG:?}"))
}

/// Writes `bomb` as `name` next to a good file, reads the folder and checks that the bomb
/// failed alone, naming its file and `budget` (a word of the budget it broke), that the good
/// file was read, and that the process stayed under [`MAX_PEAK_RSS_MIB`]. Returns the error.
pub fn assert_fails_alone(name: &str, bomb: &[u8], budget: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join(name), bomb).expect("write bomb");
    std::fs::write(
        dir.path().join(GOOD_FILE),
        format!("# Notes\n\n{GOOD_TEXT}\n"),
    )
    .expect("write good file");
    let before = peak_rss_mib();
    let started = Instant::now();
    let ingested = ingest_folder(dir.path());
    let elapsed = started.elapsed();
    let peak = peak_rss_mib();
    eprintln!(
        "{name} ({} bytes on disk): read in {elapsed:.1?}, peak RSS {peak} MiB ({before} MiB \
         before reading)",
        bomb.len()
    );
    let [error] = ingested.failed.as_slice() else {
        panic!(
            "expected the bomb alone to fail; failed: {:?}, loaded: {:?}",
            ingested.failed,
            ingested
                .loaded
                .iter()
                .map(|(path, _)| path)
                .collect::<Vec<_>>()
        );
    };
    let message = error.to_string();
    eprintln!("{message}");
    assert!(
        message.contains(name),
        "the error names the file: {message}"
    );
    assert!(
        message.contains(budget),
        "the error names the budget ({budget}): {message}"
    );
    let [(path, good)] = ingested.loaded.as_slice() else {
        panic!("expected the good file to load");
    };
    assert!(path.ends_with(GOOD_FILE), "{}", path.display());
    assert!(good.documents[0].text.contains(GOOD_TEXT));
    assert!(
        peak < MAX_PEAK_RSS_MIB,
        "peak RSS {peak} MiB is over {MAX_PEAK_RSS_MIB} MiB"
    );
    message
}
