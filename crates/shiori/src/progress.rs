use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A progress bar on stderr; indicatif hides it when stderr is not a terminal.
#[derive(Default)]
pub struct Bar {
    current: Mutex<Option<ProgressBar>>,
    phase: Mutex<String>,
    /// Pages of PDFs and images read in this phase; shown beside the phase, since one scanned
    /// PDF can take minutes of OCR while the file count stands still.
    pages: AtomicU64,
}

impl shiori_engine::Progress for Bar {
    fn start(&self, phase: &str, total: u64) {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{msg:>20} [{bar:30}] {pos}/{len} ({per_sec}, eta {eta})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(phase.to_string());
        self.pages.store(0, Ordering::Relaxed);
        if let Ok(mut name) = self.phase.lock() {
            *name = phase.to_string();
        }
        if let Ok(mut current) = self.current.lock() {
            *current = Some(bar);
        }
    }

    fn advance(&self, done: u64) {
        if let Ok(current) = self.current.lock() {
            if let Some(bar) = current.as_ref() {
                bar.inc(done);
            }
        }
    }

    fn pages_read(&self, pages: u64) {
        let total = self.pages.fetch_add(pages, Ordering::Relaxed) + pages;
        if let (Ok(current), Ok(phase)) = (self.current.lock(), self.phase.lock()) {
            if let Some(bar) = current.as_ref() {
                bar.set_message(format!("{phase} ({total} pages)"));
            }
        }
    }

    fn finish(&self) {
        if let Ok(mut current) = self.current.lock() {
            if let Some(bar) = current.take() {
                bar.finish_and_clear();
            }
        }
    }
}
