use serde::Serialize;
use shiori_engine::Progress;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Progress of the running write, polled by the page's reindex button through `GET /api/reindex`.
#[derive(Debug, Default)]
pub struct ReindexProgress {
    running: AtomicBool,
    operation: Mutex<String>,
    phase: Mutex<String>,
    done: AtomicU64,
    total: AtomicU64,
    chunks_embedded: AtomicU64,
    chunks_written: AtomicU64,
}

/// A snapshot of [`ReindexProgress`].
#[derive(Debug, Clone, Serialize)]
pub struct ProgressSnapshot {
    pub running: bool,
    pub operation: String,
    pub phase: String,
    /// Files of the current phase done, of `total`.
    pub done: u64,
    pub total: u64,
    /// Chunks embedded (or taken from the embedding cache) and written in this write so far.
    pub chunks_embedded: u64,
    pub chunks_written: u64,
}

impl ReindexProgress {
    pub fn begin(&self, operation: &str) {
        set(&self.operation, operation);
        set(&self.phase, "opening the index");
        for counter in [
            &self.done,
            &self.total,
            &self.chunks_embedded,
            &self.chunks_written,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
        self.running.store(true, Ordering::Release);
    }

    pub fn end(&self) {
        self.running.store(false, Ordering::Release);
    }

    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    pub fn snapshot(&self) -> ProgressSnapshot {
        ProgressSnapshot {
            running: self.is_running(),
            operation: get(&self.operation),
            phase: get(&self.phase),
            done: self.done.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
            chunks_embedded: self.chunks_embedded.load(Ordering::Relaxed),
            chunks_written: self.chunks_written.load(Ordering::Relaxed),
        }
    }
}

impl Progress for ReindexProgress {
    fn start(&self, phase: &str, total: u64) {
        set(&self.phase, phase);
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    fn advance(&self, done: u64) {
        self.done.fetch_add(done, Ordering::Relaxed);
    }

    fn finish(&self) {
        self.done
            .store(self.total.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    fn chunks_embedded(&self, chunks: u64) {
        self.chunks_embedded.fetch_add(chunks, Ordering::Relaxed);
    }

    fn chunks_written(&self, chunks: u64) {
        self.chunks_written.fetch_add(chunks, Ordering::Relaxed);
    }
}

fn set(slot: &Mutex<String>, value: &str) {
    if let Ok(mut slot) = slot.lock() {
        value.clone_into(&mut slot);
    }
}

fn get(slot: &Mutex<String>) -> String {
    slot.lock().map(|s| s.clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_phases_and_counts() {
        let progress = ReindexProgress::default();
        progress.begin("reindex");
        progress.start("indexing files", 10);
        progress.advance(3);
        progress.advance(4);
        progress.chunks_embedded(64);
        progress.chunks_embedded(36);
        progress.chunks_written(100);
        let snapshot = progress.snapshot();
        assert!(snapshot.running);
        assert_eq!((snapshot.done, snapshot.total), (7, 10));
        assert_eq!(
            (snapshot.chunks_embedded, snapshot.chunks_written),
            (100, 100)
        );
        assert_eq!(snapshot.phase, "indexing files");
        progress.finish();
        progress.end();
        let snapshot = progress.snapshot();
        assert!(!snapshot.running);
        assert_eq!(snapshot.done, 10);
        progress.begin("upload");
        assert_eq!(
            progress.snapshot().chunks_embedded,
            0,
            "a new write starts at zero"
        );
    }
}
