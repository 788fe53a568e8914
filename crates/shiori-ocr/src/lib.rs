//! Text from images: scanned pages and photos, read by Tesseract 5 in Japanese (horizontal and
//! vertical) and English.
//!
//! A page is decoded by Leptonica (PNG, JPEG, TIFF, WebP, JPEG 2000, PNM, BMP, GIF) only after
//! its header shows it fits [`OcrSettings::max_pixels`]; it is made grey, de-skewed, turned
//! upright by Tesseract's orientation detection and read within [`OcrSettings::page_time_limit`].
//! Words Tesseract is unsure of are dropped, and the spaces it puts between Japanese characters
//! are taken out.
//!
//! Each thread that reads keeps its Tesseract instances (one per [`Languages`] set it has used;
//! the models take ~0.5 s and ~150 MB to load), so pages are read in parallel by whatever thread
//! pool calls [`recognize`].

mod engine;
mod error;
mod image;
mod openmp;
mod text;

pub use error::OcrError;
pub use image::page_count;

use std::time::{Duration, Instant};

/// The language sets a page is read with. Japanese comes first (its layout analysis handles mixed
/// Japanese and Latin text). Tesseract tries every model of the set on each line, and the
/// vertical model is the costly one: on a dense A4 page of Japanese, `jpn+eng` took 3.8 CPU
/// seconds and `jpn+jpn_vert+eng` 8.7. So a page is read with `jpn+eng` and read again with all
/// three only when its layout is vertical or the first reading is unsure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Languages {
    Horizontal,
    All,
}

impl Languages {
    pub fn tesseract(self) -> &'static str {
        match self {
            Languages::Horizontal => "jpn+eng",
            Languages::All => "jpn+jpn_vert+eng",
        }
    }
}

/// Below this mean word confidence the first reading may be vertical text that the horizontal
/// models misread (a column read as rows scores in the 30s–50s; clean horizontal text in the 90s).
const SURE_CONFIDENCE: f32 = 75.0;

/// Bounds and filters for reading one page.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrSettings {
    /// Words Tesseract is less confident of (0–100) are dropped. On the test scans the words
    /// under 15 were misreadings but for one (a kanji at 0); between 15 and 30 were correct
    /// kana and kanji, which a higher threshold would lose.
    pub min_word_confidence: f32,
    /// Pages larger than this are refused before they are decoded: a decoded page takes four
    /// bytes a pixel while it is turned grey.
    pub max_pixels: u64,
    /// A page still being read after this is given up.
    pub page_time_limit: Duration,
    /// When the whole file's reading ends (its pages share it): a page not started by then is
    /// not read, and one being read is stopped then, both with [`OcrError::FileDeadline`].
    pub deadline: Option<Instant>,
}

impl OcrSettings {
    /// How long the next reading may take: the page's limit, or what is left of the file's.
    fn reading_limit(&self) -> Result<Duration, OcrError> {
        let Some(deadline) = self.deadline else {
            return Ok(self.page_time_limit);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(OcrError::FileDeadline);
        }
        Ok(left.min(self.page_time_limit))
    }

    /// A reading that timed out because the file's time ran out says so.
    fn blame_deadline(&self, error: OcrError) -> OcrError {
        let passed = self
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline);
        match error {
            OcrError::TimedOut(_) if passed => OcrError::FileDeadline,
            error => error,
        }
    }
}

impl Default for OcrSettings {
    fn default() -> Self {
        OcrSettings {
            min_word_confidence: 15.0,
            // An A3 page at 600 dpi (7016 × 9921 px) fits.
            max_pixels: 70_000_000,
            page_time_limit: Duration::from_secs(120),
            deadline: None,
        }
    }
}

/// An encoded image (any format Leptonica reads) and which of its pages to read.
#[derive(Debug, Clone, Copy)]
pub struct PageImage<'a> {
    pub bytes: &'a [u8],
    /// Zero-based; only multi-page TIFFs have more than one.
    pub page: usize,
    /// The scan's resolution when the caller knows it better than the file does (an image
    /// placed on a PDF page, say).
    pub dpi: Option<u32>,
}

/// What was read on one page.
#[derive(Debug, Clone, PartialEq)]
pub struct Recognized {
    /// Paragraphs separated by line breaks; an empty string when nothing legible was found.
    pub text: String,
    /// Tesseract's mean word confidence (0–100) over every word it found, kept or not.
    pub mean_confidence: f32,
    pub words_kept: usize,
    pub words_dropped: usize,
    /// How far the scan was turned from upright, clockwise: 0, 90, 180 or 270.
    pub rotation_degrees: u16,
    /// Whether the text was written in vertical columns.
    pub vertical: bool,
}

/// Reads the text on one page of an image; a page read twice (see [`Languages`]) gets the time
/// limit for each reading, within the file's deadline.
pub fn recognize(image: PageImage<'_>, settings: &OcrSettings) -> Result<Recognized, OcrError> {
    // Checked before decoding: once the file's time is up, its other pages cost nothing.
    settings.reading_limit()?;
    let decoded = image::decode(image.bytes, image.page, settings.max_pixels)?;
    let prepared = image::prepare(decoded, image.dpi)?;
    let read_with = |languages| -> Result<_, OcrError> {
        let limit = settings.reading_limit()?;
        engine::with_engine(languages, |e| e.read(&prepared, limit))?
            .map_err(|error| settings.blame_deadline(error))
    };
    let first = read_with(Languages::Horizontal)?;
    let first_confidence = text::assemble(&first.words, 0.0).mean_confidence;
    let read = if first.vertical || first_confidence < SURE_CONFIDENCE {
        read_with(Languages::All)?
    } else {
        first
    };
    let assembled = text::assemble(&read.words, settings.min_word_confidence);
    Ok(Recognized {
        text: assembled.text,
        mean_confidence: assembled.mean_confidence,
        words_kept: assembled.words_kept,
        words_dropped: assembled.words_dropped,
        rotation_degrees: read.rotation_degrees,
        vertical: read.vertical,
    })
}

/// Starts this thread's Tesseract, so a missing language pack is reported before any page is
/// read (and so `shiori` can say at start-up that OCR is ready).
pub fn check_engine() -> Result<(), OcrError> {
    engine::with_engine(Languages::Horizontal, |_| ())?;
    engine::with_engine(Languages::All, |_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_whose_time_is_up_reads_no_more_pages() {
        let settings = OcrSettings {
            deadline: Some(Instant::now()),
            ..OcrSettings::default()
        };
        let page = PageImage {
            bytes: b"not even an image",
            page: 0,
            dpi: None,
        };
        assert_eq!(recognize(page, &settings), Err(OcrError::FileDeadline));
    }

    #[test]
    fn a_reading_ends_at_the_file_deadline_or_the_page_limit_whichever_is_first() {
        let far = OcrSettings {
            deadline: Some(Instant::now() + Duration::from_secs(3600)),
            ..OcrSettings::default()
        };
        assert_eq!(far.reading_limit(), Ok(Duration::from_secs(120)));
        let near = OcrSettings {
            deadline: Some(Instant::now() + Duration::from_secs(5)),
            ..OcrSettings::default()
        };
        assert!(near
            .reading_limit()
            .is_ok_and(|limit| limit <= Duration::from_secs(5)));
        assert_eq!(
            near.blame_deadline(OcrError::TimedOut(Duration::from_secs(5))),
            OcrError::TimedOut(Duration::from_secs(5)),
            "the file's time is not up yet"
        );
    }
}
