//! One loader per file format; each turns the file's text into normalised `Document`s.

mod csv;
mod date;
mod docx;
mod guard;
mod html;
mod image;
mod jsonl;
mod jsonl_stream;
mod markdown;
mod ocr;
mod office;
mod pdf;
mod pdf_cmap;
mod pdf_layout;
mod pdf_scan;
mod pdf_streams;
mod pdf_widths;
mod pptx;
mod records;
mod text;
mod xlsx;

use crate::error::{IngestError, IngestFailure};
use crate::limits::{Budget, MAX_TEXT_BYTES};
use crate::normalize::normalize;
use guard::guarded;
pub use jsonl_stream::JsonlStream;
use shiori_core::Document;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;

/// How far into a file to look for NUL bytes: enough to catch binary headers without reading
/// a large file twice.
pub(crate) const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// The formats `load_file` understands, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Markdown,
    Html,
    Jsonl,
    Csv,
    Pdf,
    Docx,
    Xlsx,
    Pptx,
    /// Photos and scans, read by OCR.
    Image,
}

impl Format {
    pub(crate) fn from_path(path: &Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "txt" => Some(Format::Text),
            "md" | "markdown" => Some(Format::Markdown),
            "html" | "htm" => Some(Format::Html),
            "jsonl" => Some(Format::Jsonl),
            "csv" => Some(Format::Csv),
            "pdf" => Some(Format::Pdf),
            "docx" => Some(Format::Docx),
            "xlsx" => Some(Format::Xlsx),
            "pptx" => Some(Format::Pptx),
            "png" | "jpg" | "jpeg" | "tif" | "tiff" | "webp" => Some(Format::Image),
            _ => None,
        }
    }

    /// Whether the file's text can be far larger than the file: packed (Office, PDF) or read
    /// from pictures. Other files' text is bounded by the walk's file size limit.
    fn unpacks(self) -> bool {
        matches!(
            self,
            Format::Pdf | Format::Docx | Format::Xlsx | Format::Pptx | Format::Image
        )
    }
}

/// Whether a file with this name's extension has a loader.
pub fn is_supported(path: &Path) -> bool {
    Format::from_path(path).is_some()
}

/// What one file yielded. Records of a JSONL or CSV file fail one by one, so a file can yield
/// documents and failures at once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedFile {
    pub documents: Vec<Document>,
    pub record_failures: Vec<IngestFailure>,
    /// Vectors that records brought with them (JSONL's `vector`), by document id.
    pub vectors: HashMap<String, Vec<f32>>,
}

/// Reads and parses one file. `modified` (Unix seconds) becomes every document's `modified`
/// unless a record carries its own `modified` or `created_at`.
pub fn load_file(path: &Path, modified: i64) -> Result<LoadedFile, IngestError> {
    let format = format_of(path)?;
    let bytes = fs::read(path).map_err(|source| IngestError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, format, bytes, modified, &|_| {})
}

/// Parses the contents of `path` that the caller already read (to hash them, say).
pub fn load_bytes(path: &Path, bytes: Vec<u8>, modified: i64) -> Result<LoadedFile, IngestError> {
    load_bytes_counting(path, bytes, modified, &|_| {})
}

/// [`load_bytes`], telling `pages_read` how many pages of a PDF or image it has read so far, as
/// it goes: a scanned PDF is read by OCR at a few pages a second, so progress shows pages, not
/// just files. It is called from the threads that read the pages.
pub fn load_bytes_counting(
    path: &Path,
    bytes: Vec<u8>,
    modified: i64,
    pages_read: &(dyn Fn(u64) + Sync),
) -> Result<LoadedFile, IngestError> {
    parse(path, format_of(path)?, bytes, modified, pages_read)
}

fn format_of(path: &Path) -> Result<Format, IngestError> {
    Format::from_path(path).ok_or_else(|| IngestError::Unsupported {
        path: path.to_path_buf(),
    })
}

/// Reads a file in `format`; a panic while reading it is its failure alone.
fn parse(
    path: &Path,
    format: Format,
    bytes: Vec<u8>,
    modified: i64,
    pages_read: &(dyn Fn(u64) + Sync),
) -> Result<LoadedFile, IngestError> {
    guarded(|| read(path, format, bytes, modified, pages_read)).unwrap_or_else(|panic| {
        Err(IngestError::Parse {
            path: path.to_path_buf(),
            message: panic.to_string(),
        })
    })
}

fn read(
    path: &Path,
    format: Format,
    bytes: Vec<u8>,
    modified: i64,
    pages_read: &(dyn Fn(u64) + Sync),
) -> Result<LoadedFile, IngestError> {
    let loaded = match format {
        Format::Pdf => pdf::load(path, bytes, modified, pages_read)?,
        Format::Docx => single(docx::load(path, bytes, modified)?),
        Format::Xlsx => xlsx::load(path, bytes, modified)?,
        Format::Pptx => pptx::load(path, bytes, modified)?,
        Format::Image => image::load(path, bytes, modified, pages_read)?,
        Format::Text | Format::Markdown | Format::Html | Format::Jsonl | Format::Csv => {
            let text = decode_text(path, bytes)?;
            match format {
                Format::Markdown => single(markdown::load(path, &text, modified)?),
                Format::Html => single(html::load(path, &text, modified)?),
                Format::Jsonl => jsonl_stream::load(path, &text, modified)?,
                Format::Csv => csv::load(path, &text, modified)?,
                _ => single(text::load(path, &text, modified)?),
            }
        }
    };
    if loaded.documents.is_empty() && loaded.record_failures.is_empty() {
        return Err(IngestError::NoDocuments {
            path: path.to_path_buf(),
        });
    }
    let text: usize = loaded.documents.iter().map(|d| d.text.len()).sum();
    if format.unpacks() && text > MAX_TEXT_BYTES {
        return Err(IngestError::OverBudget {
            path: path.to_path_buf(),
            budget: Budget::Text,
        });
    }
    Ok(loaded)
}

fn single(document: Document) -> LoadedFile {
    LoadedFile {
        documents: vec![document],
        ..LoadedFile::default()
    }
}

/// The file as text without a byte-order mark: UTF-8, else Shift_JIS when every byte of it
/// decodes so (a CSV Excel saved on a Japanese Windows), refusing binary, invalid and blank
/// files.
fn decode_text(path: &Path, bytes: Vec<u8>) -> Result<String, IngestError> {
    // Checked before UTF-8 because NUL is valid UTF-8: without this, binaries that happen to
    // decode would be indexed as garbage.
    if bytes.iter().take(BINARY_SNIFF_BYTES).any(|&b| b == 0) {
        return Err(IngestError::Binary {
            path: path.to_path_buf(),
        });
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => encoding_rs::SHIFT_JIS
            .decode_without_bom_handling_and_without_replacement(err.as_bytes())
            .map(|text| text.into_owned())
            .ok_or_else(|| IngestError::InvalidUtf8 {
                path: path.to_path_buf(),
                offset: err.utf8_error().valid_up_to(),
            })?,
    };
    if text.trim().is_empty() {
        return Err(IngestError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// A document standing for a whole file: its id and source are the path as given.
fn file_document(
    path: &Path,
    title: String,
    text: String,
    doc_type: &str,
    modified: i64,
) -> Document {
    let name = path.to_string_lossy().into_owned();
    Document {
        doc_id: name.clone(),
        title,
        source: name,
        text,
        modified,
        metadata: BTreeMap::from([("doc_type".to_owned(), doc_type.to_owned())]),
    }
}

/// A document standing for one part of a file (a page, a slide, a sheet): its id is the path
/// and `#{part_id}`, its source the path and a label a person reads, such as `report.pdf p.3`.
fn part_document(
    path: &Path,
    part_id: &str,
    label: &str,
    title: String,
    text: String,
    doc_type: &str,
    modified: i64,
) -> Document {
    let name = path.to_string_lossy();
    Document {
        doc_id: format!("{name}#{part_id}"),
        source: format!("{name} {label}"),
        ..file_document(path, title, text, doc_type, modified)
    }
}

/// Page `number` of a paged file (a PDF, a multi-page image) as a document: `FILE#p3`, shown as
/// `FILE p.3`, with its page and the file's page count in metadata.
fn page_document(
    path: &Path,
    (number, total): (impl std::fmt::Display, &str),
    title: String,
    text: String,
    doc_type: &str,
    modified: i64,
) -> Document {
    let mut document = part_document(
        path,
        &format!("p{number}"),
        &format!("p.{number}"),
        title,
        text,
        doc_type,
        modified,
    );
    document
        .metadata
        .insert("page".to_owned(), number.to_string());
    document
        .metadata
        .insert("pages".to_owned(), total.to_owned());
    document
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Titles are shown on one line, so line breaks inside them become spaces.
fn normalize_title(title: &str) -> String {
    normalize(title)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    pub(super) fn fixture(dir: &tempfile::TempDir, name: &str, contents: &[u8]) -> PathBuf {
        let path = dir.path().join(name);
        fs::write(&path, contents).expect("write fixture");
        path
    }

    #[test]
    fn formats_follow_the_extension_case_insensitively() {
        assert_eq!(
            Format::from_path(Path::new("a/B.MD")),
            Some(Format::Markdown)
        );
        assert_eq!(Format::from_path(Path::new("x.htm")), Some(Format::Html));
        assert_eq!(Format::from_path(Path::new("x.PDF")), Some(Format::Pdf));
        assert_eq!(Format::from_path(Path::new("x.JPEG")), Some(Format::Image));
        assert_eq!(Format::from_path(Path::new("x.tif")), Some(Format::Image));
        assert_eq!(Format::from_path(Path::new("x.doc")), None);
        assert_eq!(Format::from_path(Path::new("README")), None);
    }

    #[test]
    fn unsupported_files_are_refused_before_reading() {
        let err = load_file(Path::new("/no/such/file.doc"), 0).unwrap_err();
        assert!(matches!(err, IngestError::Unsupported { .. }), "{err}");
        assert!(err
            .to_string()
            .starts_with("/no/such/file.doc: unsupported file type"));
    }

    #[test]
    fn empty_and_blank_files_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, contents) in [("empty.txt", &b""[..]), ("blank.md", b" \n\t\r\n ")] {
            let path = fixture(&dir, name, contents);
            let err = load_file(&path, 0).unwrap_err();
            assert!(matches!(err, IngestError::Empty { .. }), "{err}");
            assert!(err.to_string().ends_with("file is empty"));
        }
    }

    #[test]
    fn invalid_utf8_reports_the_byte_offset() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "bad.txt", b"hello \xff world");
        let err = load_file(&path, 0).unwrap_err();
        assert!(
            matches!(err, IngestError::InvalidUtf8 { offset: 6, .. }),
            "{err}"
        );
        assert!(err.to_string().ends_with("not valid UTF-8 at byte 6"));
    }

    #[test]
    fn a_shift_jis_csv_is_read_as_japanese() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (bytes, _, unmappable) = encoding_rs::SHIFT_JIS.encode("費目,金額\n交通費,5000円\n");
        assert!(!unmappable);
        let path = fixture(&dir, "経費.csv", &bytes);
        let loaded = load_file(&path, 0).expect("a Shift_JIS CSV loads");
        let text: String = loaded.documents.iter().map(|d| d.text.as_str()).collect();
        assert!(
            text.contains("費目: 交通費") && text.contains("5000円"),
            "{text}"
        );
    }

    #[test]
    fn nul_bytes_mean_binary_even_when_valid_utf8() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "blob.txt", b"abc\0def");
        let err = load_file(&path, 0).unwrap_err();
        assert!(matches!(err, IngestError::Binary { .. }), "{err}");
        assert!(err.to_string().ends_with("looks binary (NUL bytes)"));
    }

    #[test]
    fn missing_files_are_io_errors_naming_the_path() {
        let err = load_file(Path::new("/no/such/notes.txt"), 0).unwrap_err();
        assert!(matches!(err, IngestError::Io { .. }), "{err}");
        assert!(err.to_string().starts_with("/no/such/notes.txt: "));
    }

    #[test]
    fn a_byte_order_mark_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "bom.txt", "\u{feff}hello".as_bytes());
        let loaded = load_file(&path, 0).expect("load");
        assert_eq!(loaded.documents[0].text, "hello");
    }

    #[test]
    fn an_html_file_without_text_has_no_documents() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(
            &dir,
            "empty.html",
            b"<html><head><title>T</title></head><body><script>x()</script></body></html>",
        );
        let err = load_file(&path, 0).unwrap_err();
        assert!(matches!(err, IngestError::NoDocuments { .. }), "{err}");
    }

    #[test]
    fn titles_are_single_lines() {
        assert_eq!(normalize_title(" A\n\n B \n C "), "A B C");
    }
}
