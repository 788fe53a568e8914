//! `shiori bench ingest`: how fast the loaders turn files into documents (PDF pages, slides,
//! sheets, pages read by OCR), timed over several runs of the same file.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use shiori_ingest::{load_bytes, samples};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cli::Cli;
use crate::output;

/// Lines per generated page: a page of body text in a 12 pt font.
const SAMPLE_LINES_PER_PAGE: usize = 40;

#[derive(Debug, Serialize)]
struct IngestBench {
    file: String,
    bytes: u64,
    /// Pages of a PDF (blank ones included), otherwise the documents the file yields.
    pages: usize,
    documents: usize,
    /// Documents read by OCR (scanned PDF pages, images, TIFF pages).
    ocr_pages: usize,
    chars: usize,
    runs: usize,
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
    pages_per_second: f64,
    ocr_pages_per_second: f64,
}

pub fn ingest(
    cli: &Cli,
    files: &[PathBuf],
    sample_pdf_pages: Option<usize>,
    runs: usize,
) -> Result<()> {
    if runs == 0 {
        bail!("--runs must be at least 1");
    }
    let sample_dir = tempfile::tempdir()?;
    let mut targets = files.to_vec();
    if let Some(pages) = sample_pdf_pages {
        let path = sample_dir.path().join(format!("sample-{pages}-pages.pdf"));
        let texts: Vec<String> = (1..=pages).map(sample_page).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        std::fs::write(&path, samples::pdf(&texts)?)?;
        targets.push(path);
    }
    if targets.is_empty() {
        bail!("name files to load, or --sample-pdf-pages N");
    }
    let results = targets
        .iter()
        .map(|path| measure(path, runs))
        .collect::<Result<Vec<_>>>()?;
    output::print(cli.json, &results, || {
        results
            .iter()
            .map(|r| {
                let ocr = if r.ocr_pages > 0 {
                    format!(
                        "; {} pages by OCR = {:.2} OCR pages/s",
                        r.ocr_pages, r.ocr_pages_per_second
                    )
                } else {
                    String::new()
                };
                format!(
                    "{}: {} pages ({} documents, {} chars) in median {:.1} ms over {} runs \
                     (min {:.1}, max {:.1}) = {:.1} pages/s{ocr}",
                    r.file,
                    r.pages,
                    r.documents,
                    r.chars,
                    r.median_ms,
                    r.runs,
                    r.min_ms,
                    r.max_ms,
                    r.pages_per_second
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn measure(path: &Path, runs: usize) -> Result<IngestBench> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut times_ms = Vec::with_capacity(runs);
    let mut loaded = None;
    for _ in 0..runs {
        let input = bytes.clone();
        let started = Instant::now();
        let file = load_bytes(path, input, 0)?;
        times_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        loaded = Some(file);
    }
    let documents = loaded.map(|file| file.documents).unwrap_or_default();
    let pages = documents
        .first()
        .and_then(|d| d.metadata.get("pages"))
        .and_then(|pages| pages.parse().ok())
        .unwrap_or(documents.len());
    let ocr_pages = documents
        .iter()
        .filter(|d| d.metadata.contains_key("ocr"))
        .count();
    times_ms.sort_by(f64::total_cmp);
    let median_ms = median(&times_ms);
    Ok(IngestBench {
        file: path.display().to_string(),
        bytes: bytes.len() as u64,
        pages,
        documents: documents.len(),
        ocr_pages,
        chars: documents.iter().map(|d| d.text.chars().count()).sum(),
        runs,
        median_ms,
        min_ms: times_ms.first().copied().unwrap_or_default(),
        max_ms: times_ms.last().copied().unwrap_or_default(),
        pages_per_second: pages as f64 / (median_ms / 1000.0),
        ocr_pages_per_second: ocr_pages as f64 / (median_ms / 1000.0),
    })
}

fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// A page of mixed English and Japanese body text, different on every page.
fn sample_page(page: usize) -> String {
    (0..SAMPLE_LINES_PER_PAGE)
        .map(|line| match line % 3 {
            0 => format!("Page {page}, line {line}: quarterly revenue rose in every region."),
            1 => format!("第{page}頁 {line}行目: 東京本社と大阪支社の売上は前年を上回りました。"),
            _ => format!(
                "Item {}-{line} ships within {} business days.",
                page,
                line % 7 + 1
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
