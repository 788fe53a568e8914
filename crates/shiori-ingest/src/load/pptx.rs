use super::office::{attribute, attribute_value, walk_xml, Package, XmlEvent};
use super::{file_stem, normalize_title, part_document, LoadedFile};
use crate::error::IngestError;
use crate::normalize::normalize;
use crate::structure::rows::table_lines;
use quick_xml::events::BytesStart;
use std::collections::HashMap;
use std::path::Path;

const PRESENTATION_PART: &str = "ppt/presentation.xml";
const PRESENTATION_RELS: &str = "ppt/_rels/presentation.xml.rels";
const NOTES_RELATIONSHIP: &str = "/notesSlide";
/// Placeholders whose text is page furniture (slide numbers, dates, footers), not content.
const FURNITURE_PLACEHOLDERS: &[&str] = &["sldNum", "dt", "ftr", "hdr"];
const TITLE_PLACEHOLDERS: &[&str] = &["title", "ctrTitle"];

/// A PowerPoint deck, one document per slide in presentation order: its title, body text and
/// tables, then its speaker notes. `slide` in metadata is the 1-based position in the deck.
pub(super) fn load(path: &Path, bytes: Vec<u8>, modified: i64) -> Result<LoadedFile, IngestError> {
    let mut package = Package::open(path, bytes)?;
    let presentation = package.main_part(PRESENTATION_PART, "PowerPoint (.pptx)")?;
    let slide_ids = slide_relationship_ids(&package, &presentation)?;
    let targets = match package.part(PRESENTATION_RELS)? {
        Some(rels) => relationships(&package, PRESENTATION_RELS, &rels)?,
        None => HashMap::new(),
    };
    let slide_parts: Vec<String> = slide_ids
        .iter()
        .filter_map(|id| targets.get(id))
        .map(|(_, target)| resolve_target("ppt", target))
        .collect();
    let total = slide_parts.len().to_string();
    let stem = file_stem(path);
    let mut loaded = LoadedFile::default();
    for (index, part) in slide_parts.iter().enumerate() {
        let number = index + 1;
        let Some(xml) = package.part(part)? else {
            return Err(package.error(part, "listed in the presentation but missing"));
        };
        let slide = read_shapes(&package, part, &xml)?;
        let notes = match notes_part(&mut package, part)? {
            Some((notes_part, notes_xml)) => read_shapes(&package, &notes_part, &notes_xml)?.body,
            None => Vec::new(),
        };
        let title = normalize_title(&slide.title.join(" "));
        let mut sections = vec![title.clone(), slide.body.join("\n")];
        if !notes.is_empty() {
            sections.push(format!("Notes:\n{}", notes.join("\n")));
        }
        let text = normalize(&sections.join("\n\n"));
        if text.is_empty() {
            continue;
        }
        let title = if title.is_empty() {
            stem.clone()
        } else {
            title
        };
        let mut document = part_document(
            path,
            &format!("slide{number}"),
            &format!("slide {number}"),
            title,
            text,
            "pptx",
            modified,
        );
        document
            .metadata
            .insert("slide".to_owned(), number.to_string());
        document.metadata.insert("slides".to_owned(), total.clone());
        loaded.documents.push(document);
    }
    Ok(loaded)
}

/// The `r:id`s of `p:sldIdLst`, in the order the deck shows its slides (which need not be the
/// order of the slide part names).
fn slide_relationship_ids(package: &Package, xml: &str) -> Result<Vec<String>, IngestError> {
    let mut ids = Vec::new();
    walk_xml(package, PRESENTATION_PART, xml, |event| {
        if let (Some("sldId"), XmlEvent::Start(element) | XmlEvent::Empty(element)) =
            (event.opened(), event)
        {
            ids.extend(relationship_id(element));
        }
    })?;
    Ok(ids)
}

/// `r:id`, told apart from the plain `id` that `p:sldId` also carries.
fn relationship_id(element: &BytesStart<'_>) -> Option<String> {
    element
        .attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.as_ref().ends_with(":id"))
        .and_then(|a| attribute_value(&a))
}

/// Relationship id → (type, target) of a `.rels` part.
fn relationships(
    package: &Package,
    part: &str,
    xml: &str,
) -> Result<HashMap<String, (String, String)>, IngestError> {
    let mut targets = HashMap::new();
    walk_xml(package, part, xml, |event| {
        if let (Some("Relationship"), XmlEvent::Start(element) | XmlEvent::Empty(element)) =
            (event.opened(), event)
        {
            let id = attribute(element, "Id");
            let kind = attribute(element, "Type").unwrap_or_default();
            if let (Some(id), Some(target)) = (id, attribute(element, "Target")) {
                targets.insert(id, (kind, target));
            }
        }
    })?;
    Ok(targets)
}

/// A part name from a relationship target, relative to the folder of the part that refers to it.
fn resolve_target(base_folder: &str, target: &str) -> String {
    if let Some(absolute) = target.strip_prefix('/') {
        return absolute.to_owned();
    }
    let mut segments: Vec<&str> = base_folder.split('/').filter(|s| !s.is_empty()).collect();
    for segment in target.split('/') {
        match segment {
            ".." => {
                segments.pop();
            }
            "." | "" => {}
            name => segments.push(name),
        }
    }
    segments.join("/")
}

/// The notes slide of a slide part, found through the slide's own relationships.
fn notes_part(
    package: &mut Package,
    slide_part: &str,
) -> Result<Option<(String, String)>, IngestError> {
    let (folder, file) = slide_part.rsplit_once('/').unwrap_or(("", slide_part));
    let rels_part = format!("{folder}/_rels/{file}.rels");
    let Some(rels) = package.part(&rels_part)? else {
        return Ok(None);
    };
    let targets = relationships(package, &rels_part, &rels)?;
    let Some((_, target)) = targets
        .values()
        .find(|(kind, _)| kind.ends_with(NOTES_RELATIONSHIP))
    else {
        return Ok(None);
    };
    let notes = resolve_target(folder, target);
    Ok(package.part(&notes)?.map(|xml| (notes.clone(), xml)))
}

/// The text of a slide's (or notes page's) shapes: title placeholders apart, each table row a line with its header.
#[derive(Default)]
struct Shapes {
    title: Vec<String>,
    body: Vec<String>,
}

fn read_shapes(package: &Package, part: &str, xml: &str) -> Result<Shapes, IngestError> {
    let mut shapes = Shapes::default();
    let mut placeholder: Option<String> = None;
    let mut paragraph = String::new();
    let mut in_text = false;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut cell: Option<String> = None;
    walk_xml(package, part, xml, |event| {
        match (event.opened(), event) {
            (Some("sp"), XmlEvent::Start(_)) => placeholder = None,
            (Some("ph"), XmlEvent::Start(element) | XmlEvent::Empty(element)) => {
                placeholder = Some(attribute(element, "type").unwrap_or_default());
            }
            (Some("p"), XmlEvent::Start(_)) => paragraph.clear(),
            (Some("t"), XmlEvent::Start(_)) => in_text = true,
            (Some("br"), _) => paragraph.push('\n'),
            (Some("tc"), XmlEvent::Start(_)) => cell = Some(String::new()),
            _ => {}
        }
        match event {
            XmlEvent::Text(text) if in_text => paragraph.push_str(text),
            XmlEvent::End(name) => match name.as_str() {
                "t" => in_text = false,
                "sp" => placeholder = None,
                "p" => {
                    let text = paragraph.trim();
                    let role = placeholder.as_deref().unwrap_or_default();
                    let furniture = FURNITURE_PLACEHOLDERS.contains(&role);
                    match cell.as_mut() {
                        _ if text.is_empty() || furniture => {}
                        Some(cell) => {
                            cell.push(' ');
                            cell.push_str(text);
                        }
                        None if TITLE_PLACEHOLDERS.contains(&role) => {
                            shapes.title.push(text.to_owned())
                        }
                        None => shapes.body.push(text.to_owned()),
                    }
                }
                "tc" => row.push(cell.take().unwrap_or_default().trim().to_owned()),
                "tr" => rows.push(std::mem::take(&mut row)),
                "tbl" => {
                    rows.retain(|row| row.iter().any(|cell| !cell.is_empty()));
                    if !rows.is_empty() {
                        shapes.body.push(table_lines(&std::mem::take(&mut rows)));
                    }
                }
                _ => {}
            },
            _ => {}
        }
    })?;
    Ok(shapes)
}

#[cfg(test)]
mod tests {
    use super::resolve_target;
    use crate::error::IngestError;
    use crate::load::{load_file, tests::fixture};
    use crate::samples::{pptx, zip_parts, Slide};

    #[test]
    fn slides_in_deck_order_with_title_body_and_notes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let slides = [
            Slide {
                title: "Roadmap",
                body: vec!["Q1: search", "Q2: 日本語の要約"],
                notes: Some("Mention the beta users."),
            },
            Slide {
                title: "Welcome",
                body: vec![],
                notes: None,
            },
        ];
        // The deck shows the second slide part first.
        let path = fixture(&dir, "deck.pptx", &pptx(&slides, &[2, 1]).expect("pptx"));
        let loaded = load_file(&path, 4).expect("load");
        let name = path.to_string_lossy();
        let [welcome, roadmap] = loaded.documents.as_slice() else {
            panic!("expected two slides, got {:?}", loaded.documents);
        };
        assert_eq!(welcome.text, "Welcome");
        assert_eq!(welcome.metadata["slide"], "1");
        assert_eq!(
            roadmap.text,
            "Roadmap\n\nQ1: search\nQ2: 日本語の要約\n\nNotes:\nMention the beta users."
        );
        assert_eq!(roadmap.title, "Roadmap");
        assert_eq!(roadmap.source, format!("{name} slide 2"));
        assert_eq!(roadmap.doc_id, format!("{name}#slide2"));
        assert_eq!(roadmap.metadata["slide"], "2");
        assert_eq!(roadmap.metadata["slides"], "2");
        assert_eq!(roadmap.metadata["doc_type"], "pptx");
    }

    #[test]
    fn a_zip_without_a_presentation_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = zip_parts(&[("word/document.xml", "<w:document/>")]).expect("zip");
        let path = fixture(&dir, "misnamed.pptx", &bytes);
        let err = load_file(&path, 0).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("not a PowerPoint (.pptx) file (the zip has no ppt/presentation.xml)"),
            "{err}"
        );
        let empty = fixture(&dir, "empty.pptx", b"");
        assert!(matches!(
            load_file(&empty, 0).unwrap_err(),
            IngestError::Empty { .. }
        ));
    }

    #[test]
    fn relationship_targets_resolve_against_the_referring_folder() {
        assert_eq!(
            resolve_target("ppt", "slides/slide1.xml"),
            "ppt/slides/slide1.xml"
        );
        assert_eq!(
            resolve_target("ppt/slides", "../notesSlides/notesSlide1.xml"),
            "ppt/notesSlides/notesSlide1.xml"
        );
        assert_eq!(
            resolve_target("ppt/slides", "/ppt/media/x.xml"),
            "ppt/media/x.xml"
        );
    }
}
