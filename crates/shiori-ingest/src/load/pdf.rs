use super::guard::{guarded, Panicked};
use super::pdf_cmap::adopt_unicode_cmaps;
use super::pdf_layout::LaidOut;
use super::pdf_scan::{page_images, ScanError};
use super::pdf_streams;
use super::pdf_widths::spell_out_width_ranges;
use super::records::failure_at;
use super::{normalize_title, ocr, page_document, LoadedFile};
use crate::error::IngestError;
use crate::limits::{Budget, MAX_OCR_PAGES};
use crate::normalize::normalize;
use crate::structure::converted::{readable, without_front_matter_block};
use crate::structure::readable_name;
use crate::structure::reflow;
use lopdf::{Document as PdfDocument, ObjectId};
use pdf_extract::output_doc_page;
use rayon::prelude::*;
use shiori_ocr::{recognize, OcrError, PageImage, Recognized};
use std::path::Path;

/// A PDF's text layer, one document per page with text, so every chunk knows its page (`page`
/// in metadata, `p.N` in the source). A page that cannot be read fails alone. Encrypted PDFs
/// open only when the empty user password opens them.
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
    let parse_error = |message: String| IngestError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let opened = guarded(|| pdf_streams::load(&bytes))
        .map_err(|panic| parse_error(format!("not a readable PDF ({panic})")))?;
    let mut pdf = match opened {
        Ok(pdf) => pdf,
        Err(lopdf::Error::Decryption(_)) => return Err(encrypted(path)),
        Err(err) => return Err(parse_error(format!("not a readable PDF ({err})"))),
    };
    if pdf.is_encrypted() && pdf.decrypt("").is_err() {
        return Err(encrypted(path));
    }
    let over_budget = |budget: Budget| IngestError::OverBudget {
        path: path.to_path_buf(),
        budget,
    };
    let sizes = pdf_streams::check_unpacked(&pdf).map_err(over_budget)?;
    let pages = pdf.get_pages();
    pdf_streams::charge_pages(&pdf, pages.values().copied(), &sizes).map_err(over_budget)?;
    adopt_unicode_cmaps(&mut pdf);
    spell_out_width_ranges(&mut pdf);

    let total = pages.len().to_string();
    let title = info_title(&pdf).unwrap_or_else(|| readable_name(path));
    let mut read = Vec::with_capacity(pages.len());
    let mut scanned = Vec::new();
    let first_page = pages.keys().next().copied();
    for (&number, &id) in &pages {
        let layer = page_text(&pdf, number).map(|text| readable(&normalize(&text)));
        match layer {
            Ok(text) if ocr::visible_chars(&text) >= ocr::MIN_TEXT_LAYER_CHARS => {
                let text = match Some(number) == first_page {
                    true => without_printed_head(&text, &title),
                    false => text,
                };
                read.push((number, Ok(Some((text, None)))));
                pages_read(1);
            }
            layer => scanned.push((number, id, layer)),
        }
    }
    if scanned.len() > MAX_OCR_PAGES {
        return Err(over_budget(Budget::OcrPages));
    }
    let settings = ocr::settings();
    read.par_extend(scanned.into_par_iter().map(|(number, id, layer)| {
        let outcome = guarded(|| scanned_page(&pdf, id, layer, &settings))
            .unwrap_or_else(|panic| Err(panic.into()));
        pages_read(1);
        (number, outcome)
    }));
    let out_of_time = |(_, outcome): &(u32, Result<_, PageError>)| {
        matches!(outcome, Err(PageError::Ocr(OcrError::FileDeadline)))
    };
    if read.iter().any(out_of_time) {
        return Err(over_budget(Budget::OcrDeadline));
    }
    read.sort_by_key(|(number, _)| *number);
    // Text layers break lines where the column did; OCR'd text is laid out by Tesseract.
    let mut layers: Vec<&mut String> = read
        .iter_mut()
        .filter_map(|(_, outcome)| match outcome {
            Ok(Some((text, None))) => Some(text),
            _ => None,
        })
        .collect();
    reflow(&mut layers);

    let mut loaded = LoadedFile::default();
    for (number, outcome) in read {
        let (text, recognized) = match outcome {
            Ok(Some(page)) => page,
            Ok(None) => continue,
            Err(reason) => {
                let failure = failure_at(path, &format!("page {number}"), reason);
                loaded.record_failures.push(failure);
                continue;
            }
        };
        let mut document =
            page_document(path, (number, &total), title.clone(), text, "pdf", modified);
        if let Some(recognized) = &recognized {
            ocr::stamp(&mut document, recognized);
        }
        loaded.documents.push(document);
    }
    if loaded.documents.is_empty() {
        return Err(match loaded.record_failures.first() {
            Some(first) => parse_error(format!("no page could be read ({})", first.reason)),
            None => parse_error("no text layer, and no legible text in its images".to_owned()),
        });
    }
    Ok(loaded)
}

/// Titles that name no document: what a program writes when it was given none (a page that
/// pandoc converted without a title is `document`).
const UNTITLED: [&str; 4] = ["untitled", "untitled document", "no title", "document"];

/// The first page's `text` without what a page printed from the browser shows above its
/// text: the page's title, then its heading, which repeats it (read as text, both ran into the
/// first sentence: `Code review Code review A friendly guide…`; every chunk carries the title
/// anyway), and the front matter of a static site's page.
fn without_printed_head(text: &str, title: &str) -> String {
    let text = without_front_matter_block(text);
    let lines: Vec<&str> = text.lines().collect();
    let head = lines
        .iter()
        .take_while(|line| line.trim().is_empty() || line.trim() == title)
        .count();
    match lines.get(head) {
        Some(_) if head > 0 => lines[head..].join("\n"),
        _ => text,
    }
}

/// The title a PDF's document information gives, as a word processor or a browser printing a
/// page writes it (`Paid parental leave (PPL)`); `None` when it gives none worth showing.
/// Word printing to PDF prefixes the application's name (`Microsoft Word - report.docx`).
fn info_title(pdf: &PdfDocument) -> Option<String> {
    let info = match pdf.trailer.get(b"Info").ok()? {
        lopdf::Object::Reference(id) => pdf.get_dictionary(*id).ok()?,
        direct => direct.as_dict().ok()?,
    };
    let title = lopdf::decode_text_string(info.get(b"Title").ok()?).ok()?;
    let title = normalize_title(title.trim_start_matches('\u{feff}'));
    let title = title
        .strip_prefix("Microsoft Word - ")
        .or_else(|| title.strip_prefix("Microsoft PowerPoint - "))
        .map_or(title.as_str(), |name| {
            name.rsplit_once('.')
                .filter(|(_, extension)| extension.len() <= 4 && !extension.contains(' '))
                .map_or(name, |(stem, _)| stem)
        })
        .trim();
    let named = !title.is_empty() && !UNTITLED.contains(&title.to_lowercase().as_str());
    named.then(|| title.to_owned())
}

/// Why a page has no text.
#[derive(Debug, thiserror::Error)]
enum PageError {
    #[error(transparent)]
    Panicked(#[from] Panicked),
    #[error(transparent)]
    Extract(#[from] pdf_extract::OutputError),
    #[error(transparent)]
    Image(#[from] ScanError),
    #[error(transparent)]
    Ocr(#[from] shiori_ocr::OcrError),
}

/// A page whose text layer is missing, stray marks or unreadable: its images are read by OCR,
/// and their text replaces the layer's when it holds more. `None` for a page with neither.
fn scanned_page(
    pdf: &PdfDocument,
    id: ObjectId,
    layer: Result<String, PageError>,
    settings: &shiori_ocr::OcrSettings,
) -> Result<Option<(String, Option<Recognized>)>, PageError> {
    let mut reads = Vec::new();
    let mut first_failure = None;
    for image in page_images(pdf, id) {
        let outcome = image.map_err(PageError::from).and_then(|scan| {
            let image = PageImage {
                bytes: &scan.encoded,
                page: 0,
                dpi: scan.dpi,
            };
            recognize(image, settings).map_err(PageError::from)
        });
        match outcome {
            Ok(read) => reads.push(read),
            Err(reason) => {
                first_failure.get_or_insert(reason);
            }
        }
    }
    let layer_chars = layer.as_ref().map_or(0, |text| ocr::visible_chars(text));
    if let Some(read) =
        ocr::merge(reads).filter(|read| ocr::visible_chars(&read.text) > layer_chars)
    {
        return Ok(Some((normalize(&read.text), Some(read))));
    }
    match layer {
        Ok(text) if !text.is_empty() => Ok(Some((text, None))),
        Ok(_) => first_failure.map_or(Ok(None), Err),
        Err(reason) => Err(first_failure.unwrap_or(reason)),
    }
}

fn encrypted(path: &Path) -> IngestError {
    IngestError::Encrypted {
        path: path.to_path_buf(),
    }
}

/// pdf-extract lays text out by position (line breaks, spaces between words); where it gives up,
/// lopdf's simpler extractor, which needs no page geometry and knows other font encodings, has a
/// second go. The first reason is kept when both fail.
fn page_text(pdf: &PdfDocument, number: u32) -> Result<String, PageError> {
    let laid_out = guarded(|| {
        let mut page = LaidOut::default();
        output_doc_page(pdf, &mut page, number).map(|()| page.text())
    })
    .map_err(PageError::from)
    .and_then(|extracted| extracted.map_err(PageError::from));
    laid_out.or_else(|reason| match guarded(|| pdf.extract_text(&[number])) {
        Ok(Ok(text)) if !text.trim().is_empty() => Ok(text),
        _ => Err(reason),
    })
}

#[cfg(test)]
mod tests {
    use crate::error::IngestError;
    use crate::load::{load_file, tests::fixture};
    use crate::samples;
    use lopdf::dictionary;

    #[test]
    fn each_page_with_text_is_a_document_that_knows_its_page() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = samples::pdf(&[
            "Quarterly report\nRevenue grew 12% in Q3.",
            "",
            "東京本社の売上は前年比で増加しました。\n大阪支社は横ばいです。",
        ])
        .expect("pdf");
        let path = fixture(&dir, "report.pdf", &bytes);
        let loaded = load_file(&path, 9).expect("load");
        assert!(
            loaded.record_failures.is_empty(),
            "{:?}",
            loaded.record_failures
        );
        let name = path.to_string_lossy();
        let [first, third] = loaded.documents.as_slice() else {
            panic!("expected pages 1 and 3, got {:?}", loaded.documents);
        };
        assert_eq!(first.text, "Quarterly report\nRevenue grew 12% in Q3.");
        assert_eq!(
            third.text,
            "東京本社の売上は前年比で増加しました。\n大阪支社は横ばいです。"
        );
        assert_eq!(third.doc_id, format!("{name}#p3"));
        assert_eq!(third.source, format!("{name} p.3"));
        assert_eq!(third.title, "Report");
        assert_eq!(third.modified, 9);
        assert_eq!(third.metadata["page"], "3");
        assert_eq!(third.metadata["pages"], "3");
        assert_eq!(third.metadata["doc_type"], "pdf");
        assert_eq!(first.metadata["page"], "1");
    }

    #[test]
    fn a_page_printed_from_a_static_site_reads_as_the_site_shows_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = samples::pdf(&[
            "::: tip Ask first\nBook through [the portal]({% page \"/travel/\" %}).\n:::",
        ])
        .expect("pdf");
        let path = fixture(&dir, "travel.pdf", &bytes);
        let loaded = load_file(&path, 9).expect("load");
        let text = &loaded.documents[0].text;
        assert!(text.contains("Ask first"), "{text}");
        assert!(text.contains("Book through the portal."), "{text}");
        assert!(!text.contains(":::") && !text.contains("{%"), "{text}");

        let bytes = samples::pdf(&[
            "Travel\nTravel\ntitle: Travel\nlayout: page\nsubnav:\n- text: Booking\n\
             Book early.\nTravel is booked through the portal.",
            "Travel\nReceipts are kept for a year.",
        ])
        .expect("pdf");
        let path = fixture(&dir, "travel.pdf", &bytes);
        let loaded = load_file(&path, 9).expect("load");
        let pages: Vec<&str> = loaded.documents.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(
            pages,
            [
                "Book early.\nTravel is booked through the portal.",
                "Travel\nReceipts are kept for a year."
            ],
            "the title above the heading, the heading and the front matter printed at the head \
             of the first page go; a later page's text is the page's"
        );
    }

    #[test]
    fn a_password_protected_pdf_is_refused_as_encrypted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = samples::encrypted_pdf(&["secret plans"], "hunter2").expect("pdf");
        let path = fixture(&dir, "locked.pdf", &bytes);
        let err = load_file(&path, 0).unwrap_err();
        assert!(matches!(err, IngestError::Encrypted { .. }), "{err}");
        assert!(
            err.to_string().contains("locked.pdf: encrypted PDF"),
            "{err}"
        );
    }

    #[test]
    fn a_pdf_encrypted_without_a_user_password_opens() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = samples::encrypted_pdf(&["owner-only protection"], "").expect("pdf");
        let path = fixture(&dir, "restricted.pdf", &bytes);
        let loaded = load_file(&path, 0).expect("load");
        assert_eq!(loaded.documents[0].text, "owner-only protection");
    }

    #[test]
    fn corrupt_truncated_and_empty_pdfs_fail_with_reasons() {
        let dir = tempfile::tempdir().expect("tempdir");
        let whole = samples::pdf(&["some text"]).expect("pdf");
        let cases: [(&str, &[u8]); 3] = [
            ("garbage.pdf", b"%PDF-1.7\nthis is not really a pdf\n"),
            ("truncated.pdf", &whole[..whole.len() / 3]),
            ("text.pdf", b"plain words, no PDF at all"),
        ];
        for (name, bytes) in cases {
            let path = fixture(&dir, name, bytes);
            let err = load_file(&path, 0).unwrap_err();
            assert!(matches!(err, IngestError::Parse { .. }), "{name}: {err}");
            assert!(err.to_string().contains(name), "{err}");
        }
        let empty = fixture(&dir, "empty.pdf", b"");
        let err = load_file(&empty, 0).unwrap_err();
        assert!(matches!(err, IngestError::Empty { .. }), "{err}");
    }

    /// The sample PDF after `edit`, saved and written to `name`.
    fn edited_pdf(
        dir: &tempfile::TempDir,
        name: &str,
        pages: &[&str],
        edit: impl FnOnce(&mut lopdf::Document),
    ) -> std::path::PathBuf {
        let bytes = samples::pdf(pages).expect("pdf");
        let mut pdf = lopdf::Document::load_mem(&bytes).expect("parse");
        edit(&mut pdf);
        let mut edited = Vec::new();
        pdf.save_to(&mut edited).expect("save");
        fixture(dir, name, &edited)
    }

    fn object_of_type(pdf: &lopdf::Document, kind: &[u8]) -> lopdf::ObjectId {
        pdf.objects
            .iter()
            .find(|(_, object)| {
                object.as_dict().is_ok_and(|d| {
                    d.get(b"Type").and_then(lopdf::Object::as_name).ok() == Some(kind)
                })
            })
            .map(|(id, _)| *id)
            .expect("object of that type")
    }

    /// The first object whose dictionary has `key`.
    fn object_with(pdf: &lopdf::Document, key: &[u8]) -> lopdf::ObjectId {
        pdf.objects
            .iter()
            .find(|(_, object)| object.as_dict().is_ok_and(|d| d.has(key)))
            .map(|(id, _)| *id)
            .expect("object with that key")
    }

    #[test]
    fn a_page_pdf_extract_panics_on_is_read_by_the_fallback() {
        let dir = tempfile::tempdir().expect("tempdir");
        // pdf-extract panics on a page without a MediaBox anywhere up its page tree.
        let path = edited_pdf(&dir, "no-box.pdf", &["first page", "second page"], |pdf| {
            let pages = object_of_type(pdf, b"Pages");
            pdf.get_dictionary_mut(pages)
                .expect("pages")
                .remove(b"MediaBox");
        });
        let loaded = load_file(&path, 0).expect("load");
        assert!(
            loaded.record_failures.is_empty(),
            "{:?}",
            loaded.record_failures
        );
        let texts: Vec<&str> = loaded.documents.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(texts, ["first page", "second page"]);
    }

    /// Gives the Type0 font a predefined CMap and takes its ToUnicode map away.
    fn predefined_cmap_only(pdf: &mut lopdf::Document, cmap: &[u8]) {
        let type0 = object_with(pdf, b"DescendantFonts");
        let font = pdf.get_dictionary_mut(type0).expect("font");
        font.set("Encoding", lopdf::Object::Name(cmap.to_vec()));
        font.remove(b"ToUnicode");
    }

    #[test]
    fn a_font_with_a_predefined_unicode_cmap_and_no_to_unicode_map_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        // How a Japanese PDF with a non-embedded system font is written (reportlab, old Acrobat).
        let path = edited_pdf(&dir, "ucs2.pdf", &["東京本社 Tokyo"], |pdf| {
            predefined_cmap_only(pdf, b"UniJIS-UCS2-H")
        });
        let loaded = load_file(&path, 0).expect("load");
        assert_eq!(loaded.documents[0].text, "東京本社 Tokyo");
    }

    #[test]
    fn glyphs_placed_one_by_one_in_a_font_with_width_ranges_make_whole_words() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "Change the passcode";
        // As Chromium prints a page: every glyph placed on its own, the font's widths given as
        // a range (`c_first c_last w`) wider than its default width.
        let path = edited_pdf(&dir, "chromium.pdf", &[text], |pdf| {
            let advance = 722.0 / 1000.0 * 12.0;
            let glyphs: Vec<String> = text
                .encode_utf16()
                .map(|code| format!("<{code:04X}> Tj"))
                .collect();
            let shown = glyphs.join(&format!("\n{advance} 0 Td "));
            let content = format!("BT /F1 12 Tf 50 800 Td {shown}\nET\n");
            let page = object_of_type(pdf, b"Page");
            let contents = pdf
                .get_dictionary(page)
                .and_then(|page| page.get(b"Contents"))
                .and_then(lopdf::Object::as_reference)
                .expect("contents");
            pdf.get_object_mut(contents)
                .and_then(lopdf::Object::as_stream_mut)
                .expect("stream")
                .set_plain_content(content.into_bytes());
            let descendant = object_with(pdf, b"DW");
            let font = pdf.get_dictionary_mut(descendant).expect("font");
            font.set("DW", 500);
            font.set("W", vec![32.into(), 126.into(), 722.into()]);
        });
        let loaded = load_file(&path, 0).expect("load");
        assert_eq!(loaded.documents[0].text, text);
    }

    #[test]
    fn the_title_is_the_documents_own_else_a_readable_file_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let titled = |name: &str, title: Option<&str>| {
            let path = edited_pdf(&dir, name, &["本文"], |pdf| {
                if let Some(title) = title {
                    let info = pdf.add_object(dictionary! {
                        "Title" => lopdf::text_string(title),
                    });
                    pdf.trailer.set("Info", info);
                }
            });
            load_file(&path, 0).expect("load").documents[0]
                .title
                .clone()
        };
        assert_eq!(
            titled("ppl.pdf", Some("Paid parental leave (PPL)")),
            "Paid parental leave (PPL)"
        );
        assert_eq!(
            titled("kitei.pdf", Some("就業規則 第3章")),
            "就業規則 第3章"
        );
        assert_eq!(
            titled("a.pdf", Some("Microsoft Word - travel policy.docx")),
            "travel policy"
        );
        assert_eq!(
            titled("expense-policy.pdf", Some("Untitled")),
            "Expense policy"
        );
        assert_eq!(titled("travel_guide.pdf", None), "Travel guide");
        assert_eq!(titled("post_mortem.pdf", Some("document")), "Post mortem");
    }

    #[test]
    fn a_page_neither_extractor_reads_is_reported_with_the_reason() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A Shift-JIS CMap without a ToUnicode map: pdf-extract panics, lopdf refuses.
        let path = edited_pdf(&dir, "sjis.pdf", &["本文"], |pdf| {
            predefined_cmap_only(pdf, b"90ms-RKSJ-H")
        });
        let err = load_file(&path, 0).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "no page could be read (page 1: unsupported construct: unsupported encoding 90ms-RKSJ-H)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_pdf_without_a_text_layer_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = samples::pdf(&["", ""]).expect("pdf");
        let path = fixture(&dir, "scan.pdf", &bytes);
        let err = load_file(&path, 0).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("no text layer, and no legible text in its images"),
            "{err}"
        );
    }
}
