use std::time::Duration;
use thiserror::Error;

/// Why a page could not be read. Leptonica and Tesseract report failures as null pointers and
/// status codes, not errors with causes, so each variant says what was being done.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OcrError {
    #[error("not a readable image (unknown format, or its header is damaged)")]
    UnknownFormat,
    #[error("the image could not be decoded (damaged or truncated data)")]
    Undecodable,
    #[error("image page {page} does not exist (the file has {pages})")]
    NoSuchPage { page: usize, pages: usize },
    #[error(
        "image of {width} × {height} px is over the limit of {limit} pixels; scan it at a lower \
         resolution"
    )]
    TooLarge { width: u32, height: u32, limit: u64 },
    #[error("image processing failed while {0}")]
    Processing(&'static str),
    #[error(
        "Tesseract could not load the languages {languages} (install tesseract-ocr-jpn, \
         tesseract-ocr-jpn-vert and tesseract-ocr-osd, or set TESSDATA_PREFIX)"
    )]
    EngineUnavailable { languages: &'static str },
    #[error("reading the page took longer than the limit of {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error("the file's time for OCR ran out before this page was read")]
    FileDeadline,
    #[error("Tesseract failed to read the page")]
    RecognitionFailed,
}
