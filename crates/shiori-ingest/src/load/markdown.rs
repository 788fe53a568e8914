use super::date::parse_timestamp;
use super::{file_document, normalize_title};
use crate::error::IngestError;
use crate::markdown::headers;
use crate::normalize::normalize;
use crate::structure::{markdown_page, readable_name};
use shiori_core::Document;
use std::path::Path;

/// A Markdown page as a reader sees it (see [`crate::structure`]): the front matter gives the
/// title, the date and metadata, and never reaches the text; headings stay as `#` lines so the
/// chunker can split under them.
pub(super) fn load(path: &Path, text: &str, modified: i64) -> Result<Document, IngestError> {
    let page = markdown_page(text);
    let body = normalize(&page.text);
    if body.is_empty() {
        return Err(IngestError::Empty {
            path: path.to_path_buf(),
        });
    }
    let first_heading = || {
        let found = headers(&body);
        let top = found.iter().map(|header| header.level).min()?;
        found
            .iter()
            .find(|header| header.level == top && !header.title.is_empty())
            .map(|header| header.title.to_string())
    };
    let title = page
        .title
        .or_else(first_heading)
        .map(|title| normalize_title(&title))
        .filter(|title| !title.is_empty())
        .unwrap_or_else(|| readable_name(path));
    let modified = page
        .date
        .as_deref()
        .and_then(parse_timestamp)
        .unwrap_or(modified);
    let mut document = file_document(path, title, body, "markdown", modified);
    document.metadata.extend(page.fields);
    Ok(document)
}

#[cfg(test)]
mod tests {
    use crate::load::{load_file, tests::fixture};

    #[test]
    fn title_is_the_first_top_heading_and_text_has_no_markup() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "intro\n\n```\n# not this\n```\n## Sub\n# Guide\n\nSome *text*.\n";
        let path = fixture(&dir, "guide.md", text.as_bytes());
        let doc = &load_file(&path, 7).expect("load").documents[0];
        assert_eq!(doc.title, "Guide");
        assert_eq!(
            doc.text,
            "intro\n\n```\n# not this\n```\n\n## Sub\n\n# Guide\n\nSome text."
        );
        assert_eq!(doc.metadata["doc_type"], "markdown");
        assert_eq!(doc.modified, 7);
    }

    #[test]
    fn front_matter_gives_title_date_metadata_and_its_summary_as_the_first_paragraph() {
        let dir = tempfile::tempdir().expect("tempdir");
        let yaml = "---\ntitle: \"Travel policy\"\ndate: 2024-01-02\ndescription: Trips\n\
                    translator: x\n---\n## Booking\n\nBook early.\n";
        let toml = "+++\ntitle = \"出張規程\"\n+++\n出張は事前に申請する。\n";
        let yaml_doc = &load_file(&fixture(&dir, "travel.md", yaml.as_bytes()), 7)
            .expect("load")
            .documents[0];
        assert_eq!(yaml_doc.title, "Travel policy");
        assert_eq!(yaml_doc.modified, 1_704_153_600);
        assert_eq!(yaml_doc.metadata["description"], "Trips");
        assert_eq!(yaml_doc.text, "Trips\n\n## Booking\n\nBook early.");
        let toml_doc = &load_file(&fixture(&dir, "trip.md", toml.as_bytes()), 7)
            .expect("load")
            .documents[0];
        assert_eq!(toml_doc.title, "出張規程");
        assert_eq!(toml_doc.text, "出張は事前に申請する。");
    }

    #[test]
    fn title_falls_back_to_a_heading_then_a_readable_file_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "notes.markdown", b"## Only a subsection\ntext");
        let doc = &load_file(&path, 0).expect("load").documents[0];
        assert_eq!(doc.title, "Only a subsection");
        std::fs::create_dir(dir.path().join("paid-leave")).expect("mkdir");
        let path = fixture(&dir, "paid-leave/_index.md", b"Plain text.");
        let doc = &load_file(&path, 0).expect("load").documents[0];
        assert_eq!(doc.title, "Paid leave");
    }
}
