use super::records::failure_at;
use super::{file_document, file_stem, ocr, page_document, LoadedFile};
use crate::error::IngestError;
use crate::limits::{Budget, MAX_OCR_PAGES};
use crate::normalize::normalize;
use rayon::prelude::*;
use shiori_ocr::{recognize, OcrError, PageImage, Recognized};
use std::path::Path;

/// A photo or scan read by OCR: one document for the image, or one per page of a multi-page
/// TIFF (`scan.tif p.2`), pages read in parallel. A page that cannot be read fails alone.
pub(super) fn load(
    path: &Path,
    bytes: Vec<u8>,
    modified: i64,
    pages_read: &(dyn Fn(u64) + Sync),
) -> Result<LoadedFile, IngestError> {
    if bytes.is_empty() {
        return Err(IngestError::Empty {
            path: path.to_path_buf(),
        });
    }
    let parse_error = |error: OcrError| IngestError::Parse {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    let over_budget = |budget| IngestError::OverBudget {
        path: path.to_path_buf(),
        budget,
    };
    let pages = shiori_ocr::page_count(&bytes).map_err(parse_error)?;
    if pages > MAX_OCR_PAGES {
        return Err(over_budget(Budget::OcrPages));
    }
    let settings = ocr::settings();
    let read: Vec<Result<Recognized, OcrError>> = (0..pages)
        .into_par_iter()
        .map(|page| {
            let image = PageImage {
                bytes: &bytes,
                page,
                dpi: None,
            };
            let read = recognize(image, &settings);
            pages_read(1);
            read
        })
        .collect();
    if ocr::out_of_time(&read) {
        return Err(over_budget(Budget::OcrDeadline));
    }
    if pages == 1 {
        return single_image(path, read, modified);
    }
    let mut loaded = LoadedFile::default();
    let total = pages.to_string();
    let stem = file_stem(path);
    for (index, outcome) in read.into_iter().enumerate() {
        let number = index + 1;
        let recognized = match outcome {
            Ok(recognized) => recognized,
            Err(error) => {
                let failure = failure_at(path, &format!("page {number}"), error);
                loaded.record_failures.push(failure);
                continue;
            }
        };
        let text = normalize(&recognized.text);
        if text.is_empty() {
            continue;
        }
        let mut document = page_document(
            path,
            (number, &total),
            stem.clone(),
            text,
            "image",
            modified,
        );
        ocr::stamp(&mut document, &recognized);
        loaded.documents.push(document);
    }
    Ok(loaded)
}

fn single_image(
    path: &Path,
    mut read: Vec<Result<Recognized, OcrError>>,
    modified: i64,
) -> Result<LoadedFile, IngestError> {
    let parse_error = |message: String| IngestError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let recognized = read
        .pop()
        .ok_or_else(|| parse_error("no image".to_owned()))?
        .map_err(|error| parse_error(error.to_string()))?;
    let text = normalize(&recognized.text);
    if text.is_empty() {
        return Err(parse_error("no legible text found by OCR".to_owned()));
    }
    let mut document = file_document(path, file_stem(path), text, "image", modified);
    ocr::stamp(&mut document, &recognized);
    Ok(LoadedFile {
        documents: vec![document],
        ..LoadedFile::default()
    })
}
