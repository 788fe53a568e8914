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

use std::time::Duration;

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
}

impl Default for OcrSettings {
    fn default() -> Self {
        OcrSettings {
            min_word_confidence: 15.0,
            // An A3 page at 600 dpi (7016 × 9921 px) fits.
            max_pixels: 70_000_000,
            page_time_limit: Duration::from_secs(120),
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
/// limit for each reading.
pub fn recognize(image: PageImage<'_>, settings: &OcrSettings) -> Result<Recognized, OcrError> {
    let decoded = image::decode(image.bytes, image.page, settings.max_pixels)?;
    let prepared = image::prepare(decoded, image.dpi)?;
    let limit = settings.page_time_limit;
    let first = engine::with_engine(Languages::Horizontal, |e| e.read(&prepared, limit))??;
    let first_confidence = text::assemble(&first.words, 0.0).mean_confidence;
    let read = if first.vertical || first_confidence < SURE_CONFIDENCE {
        engine::with_engine(Languages::All, |e| e.read(&prepared, limit))??
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
