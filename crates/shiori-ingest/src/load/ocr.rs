//! What every OCR'd document shares: the settings pages are read with and the metadata that
//! says how well they were read.

use crate::limits::OCR_FILE_DEADLINE;
use shiori_core::Document;
use shiori_ocr::{OcrError, OcrSettings, Recognized};
use std::time::Instant;

/// Characters (letters and digits) a page's text layer needs to count as the page's text: below
/// this it is stray marks (a page number, a scanner's stamp) over a scanned image.
pub(super) const MIN_TEXT_LAYER_CHARS: usize = 16;

/// The settings one file's pages are read with: they share its deadline, which starts now.
pub(super) fn settings() -> OcrSettings {
    OcrSettings {
        deadline: Some(Instant::now() + OCR_FILE_DEADLINE),
        ..OcrSettings::default()
    }
}

/// Whether any page was cut off by the file's deadline: the file then fails whole, since what
/// was read of it is an arbitrary part.
pub(super) fn out_of_time<'a, T: 'a>(
    outcomes: impl IntoIterator<Item = &'a Result<T, OcrError>>,
) -> bool {
    outcomes
        .into_iter()
        .any(|outcome| matches!(outcome, Err(OcrError::FileDeadline)))
}

/// Letters and digits in `text`.
pub(super) fn visible_chars(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphanumeric()).count()
}

/// Records that the text was read by OCR and how confidently: `ocr_confidence` is Tesseract's
/// mean word confidence (0–100) on the page, before low-confidence words were dropped.
pub(super) fn stamp(document: &mut Document, read: &Recognized) {
    let metadata = &mut document.metadata;
    metadata.insert("ocr".to_owned(), "tesseract".to_owned());
    metadata.insert(
        "ocr_confidence".to_owned(),
        format!("{:.1}", read.mean_confidence),
    );
    if read.rotation_degrees != 0 {
        metadata.insert("ocr_rotation".to_owned(), read.rotation_degrees.to_string());
    }
    if read.vertical {
        metadata.insert("ocr_vertical".to_owned(), "true".to_owned());
    }
}

/// The text of a page's images read one by one, as one reading of the page: texts in order,
/// confidence averaged over all their words, the layout of the image with the most words.
pub(super) fn merge(reads: Vec<Recognized>) -> Option<Recognized> {
    let words = |read: &Recognized| (read.words_kept + read.words_dropped) as f32;
    let total_words: f32 = reads.iter().map(words).sum();
    let layout = reads
        .iter()
        .max_by_key(|read| read.words_kept + read.words_dropped)?;
    let (rotation_degrees, vertical) = (layout.rotation_degrees, layout.vertical);
    let mean_confidence = if total_words > 0.0 {
        reads
            .iter()
            .map(|r| r.mean_confidence * words(r))
            .sum::<f32>()
            / total_words
    } else {
        0.0
    };
    Some(Recognized {
        text: reads
            .iter()
            .map(|read| read.text.as_str())
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        mean_confidence,
        words_kept: reads.iter().map(|read| read.words_kept).sum(),
        words_dropped: reads.iter().map(|read| read.words_dropped).sum(),
        rotation_degrees,
        vertical,
    })
}
