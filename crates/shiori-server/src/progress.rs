use serde::Serialize;
use shiori_engine::{PhaseProgress, ProgressCounts};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Progress of the running write, polled by the page's reindex button through `GET /api/reindex`:
/// the engine's own counts and ETA ([`ProgressCounts`], as the CLI shows them) and which write
/// runs.
#[derive(Debug, Default)]
pub struct ReindexProgress {
    running: AtomicBool,
    operation: Mutex<String>,
    counts: ProgressCounts,
}

/// A snapshot of [`ReindexProgress`].
#[derive(Debug, Clone, Serialize)]
pub struct ProgressSnapshot {
    pub running: bool,
    pub operation: String,
    #[serde(flatten)]
    pub progress: PhaseProgress,
}

impl ReindexProgress {
    pub fn begin(&self, operation: &str) {
        if let Ok(mut slot) = self.operation.lock() {
            operation.clone_into(&mut slot);
        }
        self.counts.begin("opening the index", 0);
        self.running.store(true, Ordering::Release);
    }

    pub fn end(&self) {
        self.running.store(false, Ordering::Release);
    }

    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// What the write reports its progress to.
    pub fn counts(&self) -> &ProgressCounts {
        &self.counts
    }

    pub fn snapshot(&self) -> ProgressSnapshot {
        ProgressSnapshot {
            running: self.is_running(),
            operation: self.operation.lock().map(|o| o.clone()).unwrap_or_default(),
            progress: self.counts.snapshot(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiori_engine::Progress;

    #[test]
    fn tracks_phases_and_counts_across_a_write() {
        let progress = ReindexProgress::default();
        progress.begin("reindex");
        progress.counts().start("indexing files", 10);
        progress.counts().bytes_expected(1_000);
        progress.counts().advance(7);
        progress.counts().chunks_embedded(100);
        progress.counts().chunks_written(100);
        progress.counts().bytes_done(500);
        let snapshot = progress.snapshot();
        assert!(snapshot.running);
        assert_eq!((snapshot.progress.done, snapshot.progress.total), (7, 10));
        assert_eq!(snapshot.progress.phase, "indexing files");
        assert!(snapshot.progress.eta_s.is_some(), "half the bytes are done");
        progress.counts().finish();
        progress.counts().start("removing files", 2);
        let snapshot = progress.snapshot();
        assert_eq!(
            (snapshot.progress.chunks_embedded, snapshot.progress.done),
            (100, 0),
            "the write's chunks carry over; files count per phase"
        );
        progress.end();
        assert!(!progress.snapshot().running);
        progress.begin("upload");
        assert_eq!(
            progress.snapshot().progress.chunks_embedded,
            0,
            "a new write starts at zero"
        );
        let json = serde_json::to_value(progress.snapshot()).unwrap();
        for field in [
            "running",
            "operation",
            "phase",
            "done",
            "total",
            "chunks_embedded",
            "eta_s",
        ] {
            assert!(json.get(field).is_some(), "{field} in {json}");
        }
    }
}
