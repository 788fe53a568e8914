//! What reading one file may cost, whatever its format. A hostile file (a zip or Flate bomb, a
//! page nested a hundred thousand elements deep, a scan of thousands of pages) fails alone,
//! naming the budget it broke, instead of taking the machine's memory or the indexer's time.
//! The values are far above any real document's and low enough that the bombs of issue 48
//! stay under 1 GB of memory and a minute of time; they are kept here so they are seen together.

use std::fmt;
use std::io::{self, Read, Write};
use std::time::Duration;

/// Bytes unpacked from one file's compressed parts and streams, all together: the XML parts of
/// a DOCX, XLSX or PPTX, and a PDF's streams other than images (checked per image instead).
/// Holds 2 million spreadsheet cells (the sheet limit) or a few thousand pages of text.
pub const MAX_UNPACKED_BYTES: u64 = 128 * 1024 * 1024;

/// Bytes of text one file's documents may hold (UTF-8): some ten thousand pages of Japanese,
/// and well below what the documents, their chunks and the index take in memory as it grows.
pub const MAX_TEXT_BYTES: usize = 32 * 1024 * 1024;

/// Chunks one file (or one batch of a streamed JSONL file) may become: each is embedded and
/// written under the write lock, so this bounds how long one file holds it. 32 MiB of text in
/// chunks of 800 characters is about 40,000.
pub const MAX_CHUNKS_PER_FILE: usize = 50_000;

/// Pages of one file read by OCR: at several CPU seconds a page, more is hours of work, and a
/// multi-page TIFF can list thousands of pages that share one image.
pub const MAX_OCR_PAGES: usize = 1_000;

/// How deep an HTML page's elements may nest. The parser checks each new element against every
/// open one, so a deep page costs time quadratic in its depth; real pages stay under a few
/// hundred (Chromium stops nesting at 512 too).
pub const MAX_HTML_DEPTH: usize = 512;

/// Wall-clock time the OCR of one file may take, all its pages together (each page also has
/// its own limit); pages not started by then are not read, and the file fails.
pub const OCR_FILE_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// A per-file budget a file went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Unpacked,
    Text,
    Chunks,
    HtmlDepth,
    OcrPages,
    OcrDeadline,
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MIB: u64 = 1024 * 1024;
        match self {
            Budget::Unpacked => write!(
                f,
                "unpacks to more than {} MiB (compressed parts and streams together)",
                MAX_UNPACKED_BYTES / MIB
            ),
            Budget::Text => write!(
                f,
                "holds more than {} MiB of text",
                MAX_TEXT_BYTES as u64 / MIB
            ),
            Budget::Chunks => write!(f, "makes more than {MAX_CHUNKS_PER_FILE} chunks"),
            Budget::HtmlDepth => write!(f, "nests elements deeper than {MAX_HTML_DEPTH}"),
            Budget::OcrPages => write!(f, "has more than {MAX_OCR_PAGES} pages to read by OCR"),
            Budget::OcrDeadline => write!(
                f,
                "took longer than {} min to read by OCR",
                OCR_FILE_DEADLINE.as_secs() / 60
            ),
        }
    }
}

/// What is left of a file's [`MAX_UNPACKED_BYTES`] as its parts and streams are unpacked.
#[derive(Debug)]
pub(crate) struct Unpacked {
    left: u64,
}

impl Unpacked {
    pub(crate) fn new() -> Self {
        Unpacked::with_limit(MAX_UNPACKED_BYTES)
    }

    /// A budget of its own, for data bounded otherwise (an image by its pixels).
    pub(crate) fn with_limit(limit: u64) -> Self {
        Unpacked { left: limit }
    }

    pub(crate) fn left(&self) -> u64 {
        self.left
    }

    /// Charges `bytes` already unpacked.
    pub(crate) fn charge(&mut self, bytes: u64) -> Result<(), Budget> {
        self.left = self.left.checked_sub(bytes).ok_or(Budget::Unpacked)?;
        Ok(())
    }

    /// Reads `source` to its end, charging what it yields, and stops as soon as that is over
    /// the budget: a declared size (a zip entry's, a stream's) is never trusted.
    pub(crate) fn read_all(&mut self, source: impl Read) -> Result<Vec<u8>, Overread> {
        let mut bytes = Vec::new();
        source.take(self.left + 1).read_to_end(&mut bytes)?;
        self.charge(bytes.len() as u64)?;
        Ok(bytes)
    }

    /// [`Unpacked::read_all`] without keeping the bytes, and up to the first error (damaged data
    /// is left for the reader that keeps them to report): how much `source` unpacks to.
    pub(crate) fn measure(&mut self, source: impl Read) -> Result<u64, Budget> {
        let mut sink = self.sink(false);
        let copied = io::copy(&mut source.take(sink.unpacked.left + 1), &mut sink);
        let length = sink.written();
        match copied {
            Err(_) if sink.over => Err(Budget::Unpacked),
            _ => Ok(length),
        }
    }

    /// Where a decoder that writes (flate2's, weezl's) puts its output: charged as it comes,
    /// kept when `keep`, refused with an error once over the budget.
    pub(crate) fn sink(&mut self, keep: bool) -> Sink<'_> {
        Sink {
            unpacked: self,
            kept: keep.then(Vec::new),
            written: 0,
            over: false,
        }
    }
}

/// See [`Unpacked::sink`].
pub(crate) struct Sink<'a> {
    unpacked: &'a mut Unpacked,
    kept: Option<Vec<u8>>,
    written: u64,
    over: bool,
}

impl Sink<'_> {
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// What was written (empty unless kept), or the budget when it ran out.
    pub(crate) fn finish(self) -> Result<Vec<u8>, Budget> {
        match self.over {
            true => Err(Budget::Unpacked),
            false => Ok(self.kept.unwrap_or_default()),
        }
    }
}

impl Write for Sink<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Err(budget) = self.unpacked.charge(bytes.len() as u64) {
            self.over = true;
            return Err(io::Error::other(budget.to_string()));
        }
        self.written += bytes.len() as u64;
        if let Some(kept) = &mut self.kept {
            kept.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Why unpacking stopped: the budget, or the data itself.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Overread {
    #[error("over the per-file budget: {0}")]
    Budget(Budget),
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<Budget> for Overread {
    fn from(budget: Budget) -> Self {
        Overread::Budget(budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacking_stops_at_the_budget_whatever_the_source_claims() {
        let mut unpacked = Unpacked::new();
        unpacked.charge(MAX_UNPACKED_BYTES - 10).expect("under");
        let read = unpacked
            .read_all(&[7u8; 10][..])
            .expect("exactly the budget");
        assert_eq!(read.len(), 10);
        assert_eq!(unpacked.measure(io::repeat(0)), Err(Budget::Unpacked));
    }

    #[test]
    fn budgets_say_their_values() {
        assert_eq!(
            Budget::Unpacked.to_string(),
            "unpacks to more than 128 MiB (compressed parts and streams together)"
        );
        assert_eq!(
            Budget::HtmlDepth.to_string(),
            "nests elements deeper than 512"
        );
    }
}
