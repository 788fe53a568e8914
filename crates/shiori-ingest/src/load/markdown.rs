use super::{file_document, file_stem, normalize_title};
use crate::error::IngestError;
use crate::markdown::headers;
use crate::normalize::normalize;
use shiori_core::Document;
use std::path::Path;

/// A Markdown file, kept as Markdown so the Markdown chunker can still see its headers.
pub(super) fn load(path: &Path, text: &str, modified: i64) -> Result<Document, IngestError> {
    let body = normalize(text);
    if body.is_empty() {
        return Err(IngestError::Empty {
            path: path.to_path_buf(),
        });
    }
    let title = headers(&body)
        .iter()
        .find(|header| header.level == 1 && !header.title.is_empty())
        .map(|header| normalize_title(header.title))
        .unwrap_or_else(|| file_stem(path));
    Ok(file_document(path, title, body, "markdown", modified))
}

#[cfg(test)]
mod tests {
    use crate::load::{load_file, tests::fixture};

    #[test]
    fn title_is_the_first_level_one_header_and_text_keeps_markdown() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "intro\n\n```\n# not this\n```\n## Sub\n# Guide\n\nSome *text*.\n";
        let path = fixture(&dir, "guide.md", text.as_bytes());
        let doc = &load_file(&path, 7).expect("load").documents[0];
        assert_eq!(doc.title, "Guide");
        assert_eq!(
            doc.text,
            "intro\n\n```\n# not this\n```\n## Sub\n# Guide\n\nSome *text*."
        );
        assert_eq!(doc.metadata["doc_type"], "markdown");
    }

    #[test]
    fn title_falls_back_to_the_file_stem() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "notes.markdown", b"## Only a subsection\ntext");
        let doc = &load_file(&path, 0).expect("load").documents[0];
        assert_eq!(doc.title, "notes");
    }
}
