use super::office::{attribute, walk_xml, Package, XmlEvent};
use super::{file_document, normalize_title};
use crate::error::IngestError;
use crate::markdown::headers;
use crate::normalize::normalize;
use crate::structure::converted::{readable, without_front_matter_block};
use crate::structure::readable_name;
use crate::structure::rows::table_lines;
use shiori_core::Document;
use std::collections::HashMap;
use std::path::Path;

const DOCUMENT_PART: &str = "word/document.xml";
const STYLES_PART: &str = "word/styles.xml";
/// Markdown has six header levels; deeper Word headings share the last.
const MAX_HEADER_LEVEL: usize = 6;
/// `w:outlineLvl` 9 means body text; 0..=8 are heading levels 1..=9.
const BODY_OUTLINE_LEVEL: usize = 9;

/// A Word document as structured text (see [`crate::structure`]): paragraphs and list items in
/// order, heading styles as `#` headers (so the Markdown chunker keeps the header path), each
/// table row as one line that carries its header. The title is the first top-level heading,
/// else a readable file name.
pub(super) fn load(path: &Path, bytes: Vec<u8>, modified: i64) -> Result<Document, IngestError> {
    let mut package = Package::open(path, bytes)?;
    let body = package.main_part(DOCUMENT_PART, "Word (.docx)")?;
    let styles = match package.part(STYLES_PART)? {
        Some(styles) => paragraph_styles(&package, &styles)?,
        None => HashMap::new(),
    };
    let mut writer = MarkdownWriter::new(&styles);
    walk_xml(&package, DOCUMENT_PART, &body, |event| writer.visit(event))?;
    let text = without_front_matter_block(&readable(&normalize(&writer.blocks.join("\n\n"))));
    if text.is_empty() {
        return Err(IngestError::NoDocuments {
            path: path.to_path_buf(),
        });
    }
    let title = headers(&text)
        .iter()
        .find(|header| header.level == 1 && !header.title.is_empty())
        .map(|header| normalize_title(header.title))
        .unwrap_or_else(|| readable_name(path));
    Ok(file_document(path, title, text, "docx", modified))
}

/// What a paragraph style makes of its paragraphs.
#[derive(Debug, Clone, Copy, Default)]
struct ParagraphStyle {
    heading: Option<usize>,
}

/// Heading levels per paragraph style id, from the styles' names (`heading 1`, `Title`) and
/// outline levels. Localised documents name their style
/// ids freely (`1`, `見出し1`) but keep the English built-in names, so names are what count.
fn paragraph_styles(
    package: &Package,
    xml: &str,
) -> Result<HashMap<String, ParagraphStyle>, IngestError> {
    let mut styles = HashMap::new();
    let mut current: Option<(String, ParagraphStyle)> = None;
    walk_xml(package, STYLES_PART, xml, |event| {
        let element = match event {
            XmlEvent::Start(element) | XmlEvent::Empty(element) => Some(element),
            _ => None,
        };
        match (event.opened(), element, current.as_mut()) {
            (Some("style"), Some(element), _) => {
                current = attribute(element, "styleId")
                    .filter(|_| matches!(event, XmlEvent::Start(_)))
                    .map(|id| (id, ParagraphStyle::default()));
            }
            (Some("name"), Some(element), Some((_, style))) => {
                if let Some(name) = attribute(element, "val") {
                    style.heading = style.heading.or(level_of_style_name(&name));
                }
            }
            (Some("outlineLvl"), Some(element), Some((_, style))) => {
                style.heading = style.heading.or(outline_level(element));
            }
            _ if event.closed() == Some("style") => {
                if let Some((id, style)) = current.take() {
                    if style.heading.is_some() {
                        styles.insert(id, style);
                    }
                }
            }
            _ => {}
        }
    })?;
    Ok(styles)
}

fn level_of_style_name(name: &str) -> Option<usize> {
    let name = name.trim().to_ascii_lowercase();
    if name == "title" {
        return Some(1);
    }
    name.strip_prefix("heading")?.trim().parse::<usize>().ok()
}

fn outline_level(element: &quick_xml::events::BytesStart<'_>) -> Option<usize> {
    let level = attribute(element, "val")?.parse::<usize>().ok()?;
    (level < BODY_OUTLINE_LEVEL).then_some(level + 1)
}

/// Turns the events of `word/document.xml` into Markdown blocks.
struct MarkdownWriter<'a> {
    styles: &'a HashMap<String, ParagraphStyle>,
    blocks: Vec<String>,
    /// Text boxes nest paragraphs inside paragraphs; their text joins the outer one.
    paragraph_depth: usize,
    paragraph: String,
    heading: Option<usize>,
    in_run: bool,
    in_text_run: bool,
    /// Nested tables are flattened into the cell of the outermost table that holds them.
    table_depth: usize,
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    cell: String,
}

impl<'a> MarkdownWriter<'a> {
    fn new(styles: &'a HashMap<String, ParagraphStyle>) -> Self {
        MarkdownWriter {
            styles,
            blocks: Vec::new(),
            paragraph_depth: 0,
            paragraph: String::new(),
            heading: None,
            in_run: false,
            in_text_run: false,
            table_depth: 0,
            rows: Vec::new(),
            row: Vec::new(),
            cell: String::new(),
        }
    }

    fn visit(&mut self, event: &XmlEvent<'_>) {
        match event {
            XmlEvent::Start(element) | XmlEvent::Empty(element) => {
                let starts = matches!(event, XmlEvent::Start(_));
                match event.opened().unwrap_or_default() {
                    "p" if starts => self.open_paragraph(),
                    "pStyle" => {
                        let style = attribute(element, "val")
                            .map(|id| self.style(&id))
                            .unwrap_or_default();
                        self.heading = self.heading.or(style.heading);
                    }
                    "outlineLvl" if self.paragraph_depth > 0 => {
                        self.heading = self.heading.or(outline_level(element));
                    }
                    "r" if starts => self.in_run = true,
                    "t" if starts => self.in_text_run = true,
                    // Outside a run, `tab` is a tab stop of the paragraph's properties.
                    "tab" if self.in_run => self.paragraph.push('\t'),
                    "br" | "cr" if self.paragraph_depth > 0 => self.paragraph.push('\n'),
                    "tbl" if starts => self.open_table(),
                    "tr" if starts && self.table_depth == 1 => self.row.clear(),
                    "tc" if starts && self.table_depth == 1 => self.cell.clear(),
                    _ => {}
                }
            }
            XmlEvent::End(name) => match name.as_str() {
                "r" => self.in_run = false,
                "t" => self.in_text_run = false,
                "p" => self.close_paragraph(),
                "tc" if self.table_depth == 1 => {
                    let cell = std::mem::take(&mut self.cell);
                    self.row.push(cell.trim().to_owned());
                }
                "tr" if self.table_depth == 1 => {
                    let row = std::mem::take(&mut self.row);
                    if row.iter().any(|cell| !cell.is_empty()) {
                        self.rows.push(row);
                    }
                }
                "tbl" => self.close_table(),
                _ => {}
            },
            XmlEvent::Text(text) if self.in_text_run && self.paragraph_depth > 0 => {
                self.paragraph.push_str(text);
            }
            XmlEvent::Text(_) => {}
        }
    }

    fn style(&self, style_id: &str) -> ParagraphStyle {
        self.styles.get(style_id).copied().unwrap_or_else(|| {
            // Without styles.xml the built-in ids are all there is to go on.
            let name = style_id.to_ascii_lowercase().replace("heading", "heading ");
            ParagraphStyle {
                heading: level_of_style_name(&name),
            }
        })
    }

    fn open_paragraph(&mut self) {
        self.paragraph_depth += 1;
        if self.paragraph_depth == 1 {
            self.paragraph.clear();
            self.heading = None;
        } else {
            self.paragraph.push(' ');
        }
    }

    fn close_paragraph(&mut self) {
        self.paragraph_depth = self.paragraph_depth.saturating_sub(1);
        if self.paragraph_depth > 0 {
            return;
        }
        let text = self.paragraph.trim();
        if text.is_empty() {
            return;
        }
        if self.table_depth > 0 {
            if !self.cell.is_empty() {
                self.cell.push(' ');
            }
            self.cell.push_str(text);
            return;
        }
        let block = match self.heading {
            Some(level) => {
                let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
                format!(
                    "{} {one_line}",
                    "#".repeat(level.clamp(1, MAX_HEADER_LEVEL))
                )
            }
            None => text.to_owned(),
        };
        self.blocks.push(block);
    }

    fn open_table(&mut self) {
        self.table_depth += 1;
        if self.table_depth == 1 {
            self.rows.clear();
        }
    }

    fn close_table(&mut self) {
        self.table_depth = self.table_depth.saturating_sub(1);
        if self.table_depth == 0 && !self.rows.is_empty() {
            let rows = std::mem::take(&mut self.rows);
            self.blocks.push(table_lines(&rows));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::chunk_document;
    use crate::error::IngestError;
    use crate::load::{load_file, tests::fixture};
    use crate::samples::{self, docx, word_document, zip_parts, Block};
    use shiori_core::ChunkerConfig;

    #[test]
    fn headings_lists_and_tables_become_markdown() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = docx(&[
            Block::Paragraph("Internal use only."),
            Block::Heading(1, "Travel Guide"),
            Block::Heading(2, "Pricing"),
            Block::Paragraph("Fares depend on the class."),
            Block::Table(vec![
                vec!["Class", "Fare"],
                vec!["Economy", "120"],
                vec!["Business | Plus", "480"],
            ]),
            Block::Heading(2, "出張"),
            Block::ListItem("新幹線は指定席を使えます。"),
        ])
        .expect("docx");
        let path = fixture(&dir, "guide.docx", &bytes);
        let loaded = load_file(&path, 3).expect("load");
        let [doc] = loaded.documents.as_slice() else {
            panic!("expected one document, got {:?}", loaded.documents);
        };
        assert_eq!(
            doc.text,
            "Internal use only.\n\n# Travel Guide\n\n## Pricing\n\nFares depend on the class.\n\n\
             Class: Economy · Fare: 120\nClass: Business | Plus · Fare: 480\n\n\
             ## 出張\n\n新幹線は指定席を使えます。"
        );
        assert_eq!(doc.title, "Travel Guide");
        assert_eq!(doc.source, path.to_string_lossy());
        assert_eq!(doc.metadata["doc_type"], "docx");

        let chunks = chunk_document(doc, &ChunkerConfig::default(), None).unwrap();
        let table_chunk = chunks
            .iter()
            .find(|c| c.text.contains("Class: Economy · Fare: 120"))
            .expect("table chunk");
        assert_eq!(
            table_chunk.metadata["header_path"],
            "Travel Guide > Pricing"
        );
    }

    #[test]
    fn localised_heading_and_list_styles_are_found_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ns = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
        let styles = format!(
            r#"<w:styles xmlns:w="{ns}"><w:style w:type="paragraph" w:styleId="1"><w:name w:val="heading 1"/></w:style><w:style w:type="paragraph" w:styleId="a5"><w:name w:val="Outline"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style><w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/></w:style></w:styles>"#
        );
        let body = r#"<w:p><w:pPr><w:pStyle w:val="1"/></w:pPr><w:r><w:t>規程</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="a5"/></w:pPr><w:r><w:t>第一条</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">A &amp; B</w:t></w:r><w:r><w:tab/><w:t>tabbed</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="ListBullet"/></w:pPr><w:r><w:t>項目</w:t></w:r></w:p>"#;
        let bytes = zip_parts(&[
            ("word/document.xml", &word_document(body)),
            ("word/styles.xml", &styles),
        ])
        .expect("docx");
        let path = fixture(&dir, "rules.docx", &bytes);
        let doc = &load_file(&path, 0).expect("load").documents[0];
        assert_eq!(doc.text, "# 規程\n\n## 第一条\n\nA & B tabbed\n\n項目");
    }

    #[test]
    fn empty_foreign_and_broken_files_are_refused_with_reasons() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = fixture(&dir, "empty.docx", b"");
        let err = load_file(&empty, 0).unwrap_err();
        assert!(matches!(err, IngestError::Empty { .. }), "{err}");

        let other_zip = samples::zip_parts(&[("hello.txt", "hi")]).expect("zip");
        let path = fixture(&dir, "photos.docx", &other_zip);
        let err = load_file(&path, 0).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "photos.docx: not a Word (.docx) file (the zip has no word/document.xml)"
            ),
            "{err}"
        );

        let path = fixture(&dir, "old.docx", b"\xd0\xcf\x11\xe0 an old binary .doc");
        let err = load_file(&path, 0).unwrap_err();
        assert!(
            err.to_string().contains("old.docx: not an Office file"),
            "{err}"
        );

        let broken = zip_parts(&[("word/document.xml", "<w:document><w:p></w:r></w:document>")])
            .expect("zip");
        let path = fixture(&dir, "broken.docx", &broken);
        let err = load_file(&path, 0).unwrap_err();
        assert!(
            err.to_string()
                .contains("broken.docx: word/document.xml: malformed XML"),
            "{err}"
        );

        let blank = zip_parts(&[("word/document.xml", &word_document("<w:p/>"))]).expect("zip");
        let path = fixture(&dir, "blank.docx", &blank);
        let err = load_file(&path, 0).unwrap_err();
        assert!(matches!(err, IngestError::NoDocuments { .. }), "{err}");
    }
}
