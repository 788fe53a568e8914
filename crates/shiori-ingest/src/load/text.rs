use super::{file_document, file_stem};
use crate::error::IngestError;
use crate::normalize::normalize;
use shiori_core::Document;
use std::path::Path;

/// A plain-text file: one document titled after the file name.
pub(super) fn load(path: &Path, text: &str, modified: i64) -> Result<Document, IngestError> {
    let body = normalize(text);
    // Files of nothing but control characters pass the blank check on the raw bytes.
    if body.is_empty() {
        return Err(IngestError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(file_document(path, file_stem(path), body, "txt", modified))
}

#[cfg(test)]
mod tests {
    use crate::load::{load_file, tests::fixture};

    #[test]
    fn loads_one_normalised_document_named_after_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(
            &dir,
            "release notes.txt",
            "Ｖｅｒｓｉｏｎ  2\r\n\r\n\r\nFixed   bugs.\n".as_bytes(),
        );
        let loaded = load_file(&path, 42).expect("load");
        let name = path.to_string_lossy();
        let [doc] = loaded.documents.as_slice() else {
            panic!("expected one document, got {:?}", loaded.documents);
        };
        assert_eq!(doc.title, "release notes");
        assert_eq!(doc.text, "Version 2\n\nFixed bugs.");
        assert_eq!((doc.doc_id.as_str(), doc.source.as_str()), (&*name, &*name));
        assert_eq!(doc.modified, 42);
        assert_eq!(doc.metadata["doc_type"], "txt");
        assert!(loaded.record_failures.is_empty());
    }

    #[test]
    fn control_characters_alone_count_as_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "bell.txt", b"\x07\x07\x1b");
        let err = load_file(&path, 0).unwrap_err();
        assert!(err.to_string().ends_with("file is empty"), "{err}");
    }
}
