use super::SampleError;
use std::io::{Cursor, Write};
use zip::write::SimpleFileOptions;
use zip::ZipWriter;

/// A zip of the given parts, deflated as Office writes them.
pub fn zip_parts(parts: &[(&str, &str)]) -> Result<Vec<u8>, SampleError> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, contents) in parts {
        zip.start_file(*name, SimpleFileOptions::default())?;
        zip.write_all(contents.as_bytes())?;
    }
    Ok(zip.finish()?.into_inner())
}

/// Text escaped for XML content and attribute values.
fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const WORD_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// A block of a Word document.
pub enum Block<'a> {
    Heading(usize, &'a str),
    Paragraph(&'a str),
    ListItem(&'a str),
    Table(Vec<Vec<&'a str>>),
}

/// A Word document whose headings use the built-in `HeadingN` styles.
pub fn docx(blocks: &[Block<'_>]) -> Result<Vec<u8>, SampleError> {
    let body: String = blocks.iter().map(word_block).collect();
    let styles: String = (1..=6)
        .map(|level| {
            format!(
                r#"<w:style w:type="paragraph" w:styleId="Heading{level}"><w:name w:val="heading {level}"/></w:style>"#
            )
        })
        .collect();
    zip_parts(&[
        ("[Content_Types].xml", CONTENT_TYPES),
        ("_rels/.rels", &root_relationships("word/document.xml")),
        ("word/document.xml", &word_document(&body)),
        (
            "word/styles.xml",
            &format!(r#"<w:styles xmlns:w="{WORD_NS}">{styles}</w:styles>"#),
        ),
    ])
}

/// `word/document.xml` around the given body XML.
pub fn word_document(body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{WORD_NS}"><w:body>{body}</w:body></w:document>"#
    )
}

fn word_block(block: &Block<'_>) -> String {
    match block {
        Block::Heading(level, text) => word_paragraph(&format!("Heading{level}"), text, ""),
        Block::Paragraph(text) => word_paragraph("", text, ""),
        Block::ListItem(text) => word_paragraph(
            "ListParagraph",
            text,
            r#"<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>"#,
        ),
        Block::Table(rows) => {
            let rows: String = rows
                .iter()
                .map(|row| {
                    let cells: String = row
                        .iter()
                        .map(|cell| format!("<w:tc>{}</w:tc>", word_paragraph("", cell, "")))
                        .collect();
                    format!("<w:tr>{cells}</w:tr>")
                })
                .collect();
            format!("<w:tbl>{rows}</w:tbl>")
        }
    }
}

fn word_paragraph(style: &str, text: &str, extra_properties: &str) -> String {
    let style = if style.is_empty() {
        String::new()
    } else {
        format!(r#"<w:pStyle w:val="{style}"/>"#)
    };
    format!(
        r#"<w:p><w:pPr>{style}{extra_properties}</w:pPr><w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
        xml_escape(text)
    )
}

const SHEET_NS: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const REL_NS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const PACKAGE_REL_NS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/></Types>"#;

/// The package's `_rels/.rels`, pointing at its main part.
fn root_relationships(main_part: &str) -> String {
    format!(
        r#"<Relationships xmlns="{PACKAGE_REL_NS}"><Relationship Id="rId1" Type="{REL_NS}/officeDocument" Target="{main_part}"/></Relationships>"#
    )
}

/// A workbook of sheets given as (name, rows); cells that parse as numbers are numbers.
pub fn xlsx(sheets: &[(&str, Vec<Vec<&str>>)]) -> Result<Vec<u8>, SampleError> {
    let sheets: Vec<(&str, String)> = sheets
        .iter()
        .map(|(name, rows)| (*name, sheet_xml(rows)))
        .collect();
    xlsx_with_sheet_xml(&sheets)
}

/// A workbook whose worksheets' XML is given whole (to write odd or huge sheets).
pub fn xlsx_with_sheet_xml(sheets: &[(&str, String)]) -> Result<Vec<u8>, SampleError> {
    let mut entries = String::new();
    let mut relationships = String::new();
    let mut parts = Vec::new();
    for (index, (name, xml)) in sheets.iter().enumerate() {
        let number = index + 1;
        entries.push_str(&format!(
            r#"<sheet name="{}" sheetId="{number}" r:id="rId{number}"/>"#,
            xml_escape(name)
        ));
        relationships.push_str(&format!(
            r#"<Relationship Id="rId{number}" Type="{REL_NS}/worksheet" Target="worksheets/sheet{number}.xml"/>"#
        ));
        parts.push((format!("xl/worksheets/sheet{number}.xml"), xml.clone()));
    }
    let workbook = format!(
        r#"<workbook xmlns="{SHEET_NS}" xmlns:r="{REL_NS}"><sheets>{entries}</sheets></workbook>"#
    );
    let rels =
        format!(r#"<Relationships xmlns="{PACKAGE_REL_NS}">{relationships}</Relationships>"#);
    let root = root_relationships("xl/workbook.xml");
    let mut all: Vec<(&str, &str)> = vec![
        ("[Content_Types].xml", CONTENT_TYPES),
        ("_rels/.rels", &root),
        ("xl/workbook.xml", &workbook),
        ("xl/_rels/workbook.xml.rels", &rels),
    ];
    all.extend(
        parts
            .iter()
            .map(|(name, xml)| (name.as_str(), xml.as_str())),
    );
    zip_parts(&all)
}

/// A worksheet's XML with inline strings and numbers.
pub fn sheet_xml(rows: &[Vec<&str>]) -> String {
    let rows: String = rows
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let cells: String = row
                .iter()
                .enumerate()
                .filter(|(_, value)| !value.is_empty())
                .map(|(c, value)| {
                    let reference = format!("{}{}", column_name(c), r + 1);
                    if value.parse::<f64>().is_ok() {
                        format!(r#"<c r="{reference}"><v>{value}</v></c>"#)
                    } else {
                        format!(
                            r#"<c r="{reference}" t="inlineStr"><is><t>{}</t></is></c>"#,
                            xml_escape(value)
                        )
                    }
                })
                .collect();
            format!(r#"<row r="{}">{cells}</row>"#, r + 1)
        })
        .collect();
    format!(r#"<worksheet xmlns="{SHEET_NS}"><sheetData>{rows}</sheetData></worksheet>"#)
}

/// `A`, `B`, …, `Z`, `AA`, … for a 0-based column.
pub fn column_name(index: usize) -> String {
    let mut name = Vec::new();
    let mut n = index + 1;
    while n > 0 {
        let remainder = (n - 1) % 26;
        name.push(b'A' + remainder as u8);
        n = (n - 1) / 26;
    }
    name.reverse();
    String::from_utf8_lossy(&name).into_owned()
}

const DRAWING_NS: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const PRESENTATION_NS: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";

/// One slide of a sample deck.
pub struct Slide<'a> {
    pub title: &'a str,
    pub body: Vec<&'a str>,
    pub notes: Option<&'a str>,
}

/// A PowerPoint deck; `order` lists slide part numbers in presentation order, so a test can
/// make the deck's order differ from the part names.
pub fn pptx(slides: &[Slide<'_>], order: &[usize]) -> Result<Vec<u8>, SampleError> {
    let ids: String = order
        .iter()
        .enumerate()
        .map(|(i, part)| format!(r#"<p:sldId id="{}" r:id="rId{part}"/>"#, 256 + i))
        .collect();
    let relationships: String = (1..=slides.len())
        .map(|n| {
            format!(
                r#"<Relationship Id="rId{n}" Type="{REL_NS}/slide" Target="slides/slide{n}.xml"/>"#
            )
        })
        .collect();
    let mut parts: Vec<(String, String)> = vec![
        ("[Content_Types].xml".into(), CONTENT_TYPES.into()),
        (
            "_rels/.rels".into(),
            root_relationships("ppt/presentation.xml"),
        ),
        (
            "ppt/presentation.xml".into(),
            format!(
                r#"<p:presentation xmlns:p="{PRESENTATION_NS}" xmlns:r="{REL_NS}"><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"#
            ),
        ),
        (
            "ppt/_rels/presentation.xml.rels".into(),
            format!(r#"<Relationships xmlns="{PACKAGE_REL_NS}">{relationships}</Relationships>"#),
        ),
    ];
    for (index, slide) in slides.iter().enumerate() {
        let n = index + 1;
        let mut shapes = shape("title", &[slide.title]);
        shapes.push_str(&shape("", &slide.body));
        shapes.push_str(&shape("sldNum", &[&n.to_string()]));
        parts.push((
            format!("ppt/slides/slide{n}.xml"),
            slide_xml("sld", &shapes),
        ));
        if let Some(notes) = slide.notes {
            let notes_shapes = format!("{}{}", shape("body", &[notes]), shape("sldNum", &["9"]));
            parts.push((
                format!("ppt/notesSlides/notesSlide{n}.xml"),
                slide_xml("notes", &notes_shapes),
            ));
            parts.push((
                format!("ppt/slides/_rels/slide{n}.xml.rels"),
                format!(
                    r#"<Relationships xmlns="{PACKAGE_REL_NS}"><Relationship Id="rId1" Type="{REL_NS}/notesSlide" Target="../notesSlides/notesSlide{n}.xml"/></Relationships>"#
                ),
            ));
        }
    }
    let borrowed: Vec<(&str, &str)> = parts
        .iter()
        .map(|(name, xml)| (name.as_str(), xml.as_str()))
        .collect();
    zip_parts(&borrowed)
}

fn slide_xml(root: &str, shapes: &str) -> String {
    format!(
        r#"<p:{root} xmlns:a="{DRAWING_NS}" xmlns:p="{PRESENTATION_NS}" xmlns:r="{REL_NS}"><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:{root}>"#
    )
}

/// A shape with one paragraph per line; `placeholder` empty means a plain text box.
fn shape(placeholder: &str, paragraphs: &[&str]) -> String {
    let placeholder = if placeholder.is_empty() {
        String::new()
    } else {
        format!(r#"<p:ph type="{placeholder}"/>"#)
    };
    let paragraphs: String = paragraphs
        .iter()
        .map(|text| format!("<a:p><a:r><a:t>{}</a:t></a:r></a:p>", xml_escape(text)))
        .collect();
    format!(
        r#"<p:sp><p:nvSpPr><p:cNvPr id="2" name="Shape"/><p:cNvSpPr/><p:nvPr>{placeholder}</p:nvPr></p:nvSpPr><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp>"#
    )
}
