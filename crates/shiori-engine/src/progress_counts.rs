//! What a long write has done so far, and how long the rest should take: the one reckoning of
//! progress that every surface shows (the CLI's bar and lines, the page's reindex status).
//!
//! A run's phases follow each other (indexing files, then removing the vanished ones): files,
//! bytes and the clock count per phase, chunks and pages for the whole run since
//! [`ProgressCounts::begin`], and the rate from the chunks of the phase.

use crate::Progress;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Counts of the current phase, kept as the engine reports them.
#[derive(Debug, Default)]
pub struct ProgressCounts {
    phase: Mutex<String>,
    /// When the phase began and, once it has, ended: the clock stops with the phase.
    clock: Mutex<(Option<Instant>, Option<Instant>)>,
    done: AtomicU64,
    total: AtomicU64,
    chunks_embedded: AtomicU64,
    chunks_written: AtomicU64,
    pages: AtomicU64,
    /// `chunks_embedded` when the phase started: the rate counts only the phase's own.
    chunks_before_phase: AtomicU64,
    /// The bytes of the phase's files, of the files done, and how far into the file being
    /// read a part at a time: what the ETA is reckoned from.
    bytes_expected: AtomicU64,
    bytes_done: AtomicU64,
    bytes_into_file: AtomicU64,
}

/// A snapshot of [`ProgressCounts`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseProgress {
    pub phase: String,
    /// Files of the phase done, of `total`.
    pub done: u64,
    pub total: u64,
    /// Chunks embedded (or taken from the embedding cache) and written in the run so far.
    pub chunks_embedded: u64,
    pub chunks_written: u64,
    /// Chunks embedded a second, over the phase so far.
    pub chunks_per_second: f64,
    pub pages_read: u64,
    pub elapsed_s: f64,
    /// Seconds left at the pace so far, by bytes; none before the first bytes are done or
    /// once all are.
    pub eta_s: Option<f64>,
}

impl ProgressCounts {
    /// Starts a run with its first phase over `total` files: every count back to zero.
    pub fn begin(&self, phase: &str, total: u64) {
        for counter in [&self.chunks_embedded, &self.chunks_written, &self.pages] {
            counter.store(0, Ordering::Relaxed);
        }
        self.start(phase, total);
    }

    pub fn snapshot(&self) -> PhaseProgress {
        let elapsed_s = self.seconds();
        let chunks_embedded = self.chunks_embedded.load(Ordering::Relaxed);
        PhaseProgress {
            phase: self.phase.lock().map(|p| p.clone()).unwrap_or_default(),
            done: self.done.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
            chunks_embedded,
            chunks_written: self.chunks_written.load(Ordering::Relaxed),
            chunks_per_second: chunks_embedded
                .saturating_sub(self.chunks_before_phase.load(Ordering::Relaxed))
                as f64
                / elapsed_s.max(0.001),
            pages_read: self.pages.load(Ordering::Relaxed),
            elapsed_s,
            eta_s: self.eta_seconds(elapsed_s),
        }
    }

    fn seconds(&self) -> f64 {
        let Ok((Some(started), ended)) = self.clock.lock().map(|clock| *clock) else {
            return 0.0;
        };
        let until = ended.unwrap_or_else(Instant::now);
        until.duration_since(started).as_secs_f64()
    }

    /// The time so far scaled by the bytes left over the bytes done.
    fn eta_seconds(&self, elapsed_s: f64) -> Option<f64> {
        let expected = self.bytes_expected.load(Ordering::Relaxed);
        let done =
            self.bytes_done.load(Ordering::Relaxed) + self.bytes_into_file.load(Ordering::Relaxed);
        (done > 0 && done < expected).then(|| elapsed_s * (expected - done) as f64 / done as f64)
    }
}

impl Progress for ProgressCounts {
    /// The next phase of the run: its files, bytes and clock from zero.
    fn start(&self, phase: &str, total: u64) {
        if let Ok(mut name) = self.phase.lock() {
            phase.clone_into(&mut name);
        }
        if let Ok(mut clock) = self.clock.lock() {
            *clock = (Some(Instant::now()), None);
        }
        self.total.store(total, Ordering::Relaxed);
        for counter in [
            &self.done,
            &self.bytes_expected,
            &self.bytes_done,
            &self.bytes_into_file,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
        self.chunks_before_phase.store(
            self.chunks_embedded.load(Ordering::Relaxed),
            Ordering::Relaxed,
        );
    }

    fn advance(&self, done: u64) {
        self.done.fetch_add(done, Ordering::Relaxed);
    }

    fn finish(&self) {
        self.done
            .store(self.total.load(Ordering::Relaxed), Ordering::Relaxed);
        if let Ok(mut clock) = self.clock.lock() {
            clock.1.get_or_insert_with(Instant::now);
        }
    }

    fn chunks_embedded(&self, chunks: u64) {
        self.chunks_embedded.fetch_add(chunks, Ordering::Relaxed);
    }

    fn chunks_written(&self, chunks: u64) {
        self.chunks_written.fetch_add(chunks, Ordering::Relaxed);
    }

    fn pages_read(&self, pages: u64) {
        self.pages.fetch_add(pages, Ordering::Relaxed);
    }

    fn bytes_expected(&self, bytes: u64) {
        self.bytes_expected.store(bytes, Ordering::Relaxed);
    }

    fn bytes_done(&self, bytes: u64) {
        self.bytes_done.fetch_add(bytes, Ordering::Relaxed);
        self.bytes_into_file.store(0, Ordering::Relaxed);
    }

    fn bytes_into_file(&self, offset: u64) {
        self.bytes_into_file.store(offset, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_eta_is_the_time_so_far_scaled_by_the_bytes_left() {
        let counts = ProgressCounts::default();
        counts.start("indexing files", 3);
        counts.bytes_expected(4_000);
        assert_eq!(counts.snapshot().eta_s, None, "nothing done yet");
        counts.bytes_done(1_000);
        counts.bytes_into_file(1_000);
        std::thread::sleep(Duration::from_millis(100));
        let snapshot = counts.snapshot();
        let eta = snapshot.eta_s.unwrap();
        assert!(
            (eta - snapshot.elapsed_s).abs() < 0.01,
            "half done: {eta} vs {}",
            snapshot.elapsed_s
        );
        counts.bytes_done(3_000);
        assert_eq!(counts.snapshot().eta_s, None, "all done");
    }

    #[test]
    fn a_new_run_starts_every_count_at_zero() {
        let counts = ProgressCounts::default();
        counts.start("indexing files", 10);
        counts.advance(3);
        counts.advance(4);
        counts.chunks_embedded(64);
        counts.chunks_embedded(36);
        counts.chunks_written(100);
        counts.pages_read(2);
        let snapshot = counts.snapshot();
        assert_eq!((snapshot.done, snapshot.total), (7, 10));
        assert_eq!(
            (snapshot.chunks_embedded, snapshot.chunks_written),
            (100, 100)
        );
        assert_eq!(
            (snapshot.phase.as_str(), snapshot.pages_read),
            ("indexing files", 2)
        );
        assert!(snapshot.chunks_per_second > 0.0);
        counts.finish();
        let finished = counts.snapshot();
        assert_eq!(finished.done, 10);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            counts.snapshot().elapsed_s,
            finished.elapsed_s,
            "the clock stops"
        );
        counts.begin("removing files", 1);
        let snapshot = counts.snapshot();
        assert_eq!((snapshot.done, snapshot.chunks_embedded), (0, 0));
        assert_eq!(snapshot.phase, "removing files");
    }

    #[test]
    fn a_later_phase_keeps_the_runs_chunks_and_rates_only_its_own() {
        let counts = ProgressCounts::default();
        counts.begin("indexing files", 2);
        counts.chunks_embedded(500);
        counts.start("indexing files", 3);
        let snapshot = counts.snapshot();
        assert_eq!(
            (snapshot.chunks_embedded, snapshot.done, snapshot.total),
            (500, 0, 3)
        );
        assert_eq!(
            snapshot.chunks_per_second, 0.0,
            "no chunk of this phase yet"
        );
    }
}
