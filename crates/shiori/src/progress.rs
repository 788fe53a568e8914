//! Progress of long commands on stderr, counting what takes the time (chunks embedded, pages
//! read) and not only files: a bar on a terminal; elsewhere (a log, a CI job, a pipe) a line
//! every few seconds, or with `--json` a JSON line, and one more when a phase ends.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shiori_engine::{PhaseProgress, Progress, ProgressCounts};
use std::io::IsTerminal;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a report goes out off a terminal.
const EVERY: Duration = Duration::from_secs(5);

/// Where the reports go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    Terminal,
    Lines,
    Json,
}

/// Writes a report line (stderr; a buffer in tests).
type Sink = Arc<dyn Fn(String) + Send + Sync>;

/// `, ETA 4 min 10 s` while the ETA is known.
fn eta(progress: &PhaseProgress) -> String {
    match progress.eta_s.map(|s| s.round() as u64) {
        Some(s) if s >= 60 => format!(", ETA {} min {} s", s / 60, s % 60),
        Some(s) => format!(", ETA {s} s"),
        None => String::new(),
    }
}

/// What the phase counted besides files: `1210 chunks embedded (31.2/s)`, `12 pages read`.
fn counted(progress: &PhaseProgress) -> Vec<String> {
    let mut counted = Vec::new();
    if progress.chunks_embedded > 0 {
        counted.push(format!(
            "{} chunks embedded ({:.1}/s)",
            progress.chunks_embedded, progress.chunks_per_second
        ));
    }
    if progress.pages_read > 0 {
        counted.push(format!("{} pages read", progress.pages_read));
    }
    counted
}

/// `indexing files: 3/40, 1210 chunks embedded (31.2/s), 12 pages read, ETA 2 min 5 s, 39 s`.
fn line(progress: &PhaseProgress, finished: bool) -> String {
    let mut line = format!("{}: {}/{}", progress.phase, progress.done, progress.total);
    for count in counted(progress) {
        line.push_str(&format!(", {count}"));
    }
    if !finished {
        line.push_str(&eta(progress));
    }
    let state = if finished { "done in " } else { "" };
    line.push_str(&format!(", {state}{:.0} s", progress.elapsed_s));
    line
}

fn json(progress: &PhaseProgress, finished: bool) -> String {
    serde_json::json!({
        "progress": progress.phase,
        "done": progress.done,
        "total": progress.total,
        "chunks_embedded": progress.chunks_embedded,
        "pages_read": progress.pages_read,
        "elapsed_s": (progress.elapsed_s * 10.0).round() / 10.0,
        "eta_s": progress.eta_s.filter(|_| !finished).map(f64::round),
        "finished": finished,
    })
    .to_string()
}

fn report(counts: &ProgressCounts, output: Output, finished: bool) -> Option<String> {
    match output {
        Output::Terminal => None,
        Output::Lines => Some(line(&counts.snapshot(), finished)),
        Output::Json => Some(json(&counts.snapshot(), finished)),
    }
}

/// Sends a report every [`EVERY`] until dropped.
struct Ticker {
    stop: Sender<()>,
    thread: JoinHandle<()>,
}

impl Ticker {
    fn start(counts: Arc<ProgressCounts>, output: Output, sink: Sink, every: Duration) -> Ticker {
        let (stop, stopped) = channel::<()>();
        let thread = std::thread::spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                if let Some(report) = report(&counts, output, false) {
                    sink(report);
                }
            }
        });
        Ticker { stop, thread }
    }

    fn stop(self) {
        drop(self.stop);
        // A ticker that panicked has nothing left to report.
        let _ = self.thread.join();
    }
}

/// The progress of one command, reported as suits where stderr goes.
pub struct Bar {
    output: Output,
    sink: Sink,
    every: Duration,
    counts: Arc<ProgressCounts>,
    bar: Mutex<Option<ProgressBar>>,
    ticker: Mutex<Option<Ticker>>,
}

impl Default for Bar {
    /// A bar on a terminal, else a line every few seconds.
    fn default() -> Self {
        Bar::for_cli(false)
    }
}

impl Bar {
    /// A bar on a terminal; elsewhere a line every few seconds, JSON lines with `json`.
    pub fn for_cli(json: bool) -> Bar {
        let output = match (json, std::io::stderr().is_terminal()) {
            (true, _) => Output::Json,
            (false, true) => Output::Terminal,
            (false, false) => Output::Lines,
        };
        Bar::with(output, Arc::new(|line| eprintln!("{line}")), EVERY)
    }

    fn with(output: Output, sink: Sink, every: Duration) -> Bar {
        Bar {
            output,
            sink,
            every,
            counts: Arc::new(ProgressCounts::default()),
            bar: Mutex::new(None),
            ticker: Mutex::new(None),
        }
    }

    fn terminal_bar(&self, phase: &str, total: u64) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{msg:>20} [{bar:30}] {pos}/{len} ({elapsed})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(phase.to_string());
        bar
    }

    /// The bar's message: the phase and what it counted besides files.
    fn refresh_message(&self) {
        if let Ok(bar) = self.bar.lock() {
            if let Some(bar) = bar.as_ref() {
                let progress = self.counts.snapshot();
                let mut message = progress.phase.clone();
                for count in counted(&progress) {
                    message.push_str(&format!(" · {count}"));
                }
                message.push_str(&eta(&progress).replace(", ", " · "));
                bar.set_message(message);
            }
        }
    }

    fn end_phase(&self) {
        if let Some(ticker) = self.ticker.lock().ok().and_then(|mut t| t.take()) {
            ticker.stop();
        }
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn start(&self, phase: &str, total: u64) {
        self.end_phase();
        // Each phase's line counts its own chunks and pages.
        self.counts.begin(phase, total);
        if self.output == Output::Terminal {
            if let Ok(mut bar) = self.bar.lock() {
                *bar = Some(self.terminal_bar(phase, total));
            }
            return;
        }
        let ticker = Ticker::start(
            Arc::clone(&self.counts),
            self.output,
            Arc::clone(&self.sink),
            self.every,
        );
        if let Ok(mut slot) = self.ticker.lock() {
            *slot = Some(ticker);
        }
    }

    fn advance(&self, done: u64) {
        self.counts.advance(done);
        if let Ok(bar) = self.bar.lock() {
            if let Some(bar) = bar.as_ref() {
                bar.inc(done);
            }
        }
    }

    fn chunks_embedded(&self, chunks: u64) {
        self.counts.chunks_embedded(chunks);
        self.refresh_message();
    }

    fn pages_read(&self, pages: u64) {
        self.counts.pages_read(pages);
        self.refresh_message();
    }

    fn bytes_expected(&self, bytes: u64) {
        self.counts.bytes_expected(bytes);
    }

    fn bytes_done(&self, bytes: u64) {
        self.counts.bytes_done(bytes);
        self.refresh_message();
    }

    fn bytes_into_file(&self, offset: u64) {
        self.counts.bytes_into_file(offset);
        self.refresh_message();
    }

    fn finish(&self) {
        let was_running = self.ticker.lock().is_ok_and(|ticker| ticker.is_some());
        self.end_phase();
        if was_running {
            if let Some(report) = report(&self.counts, self.output, true) {
                (self.sink)(report);
            }
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.end_phase();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(output: Output) -> (Bar, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let bar = Bar::with(
            output,
            Arc::new(move |line| sink.lock().unwrap().push(line)),
            Duration::from_millis(20),
        );
        (bar, lines)
    }

    #[test]
    fn off_a_terminal_a_line_goes_out_every_interval_and_when_the_phase_ends() {
        let (bar, lines) = recorded(Output::Lines);
        bar.start("indexing files", 4);
        bar.chunks_embedded(120);
        bar.pages_read(3);
        std::thread::sleep(Duration::from_millis(150));
        bar.advance(4);
        bar.finish();
        let lines = lines.lock().unwrap().clone();
        assert!(lines.len() >= 3, "{lines:?}");
        assert!(lines[0].starts_with("indexing files: 0/4, 120 chunks embedded ("));
        assert!(lines[0].contains(", 3 pages read, "), "{lines:?}");
        let last = lines.last().unwrap();
        assert!(
            last.starts_with("indexing files: 4/4, 120 chunks") && last.contains("done in"),
            "{last}"
        );
    }

    #[test]
    fn a_json_line_carries_the_eta_until_the_phase_ends() {
        let (bar, lines) = recorded(Output::Json);
        bar.start("indexing files", 3);
        bar.bytes_expected(4_000);
        bar.bytes_done(1_000);
        std::thread::sleep(Duration::from_millis(150));
        let running: serde_json::Value =
            serde_json::from_str(lines.lock().unwrap().first().unwrap()).unwrap();
        assert!(running["eta_s"].is_number(), "{running}");
        bar.finish();
        let last: serde_json::Value =
            serde_json::from_str(lines.lock().unwrap().last().unwrap()).unwrap();
        assert!(last["eta_s"].is_null(), "{last}");
    }

    #[test]
    fn with_json_each_report_is_a_json_line_and_a_finished_phase_says_so() {
        let (bar, lines) = recorded(Output::Json);
        bar.start("indexing files", 2);
        bar.chunks_embedded(7);
        std::thread::sleep(Duration::from_millis(80));
        bar.finish();
        bar.finish();
        let lines = lines.lock().unwrap().clone();
        let reports: Vec<serde_json::Value> = lines
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert!(reports.len() >= 2, "{lines:?}");
        assert_eq!(reports[0]["progress"], "indexing files");
        assert_eq!(reports[0]["chunks_embedded"], 7);
        assert_eq!(reports[0]["finished"], false);
        let finished: Vec<_> = reports.iter().filter(|r| r["finished"] == true).collect();
        assert_eq!(finished.len(), 1, "one last report per phase: {lines:?}");
    }
}
