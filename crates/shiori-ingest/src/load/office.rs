//! What DOCX and PPTX share: an Office Open XML package (a zip of XML parts) and the XML
//! reading helpers their loaders walk it with.

use crate::error::IngestError;
use crate::limits::{Overread, Unpacked};
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use zip::result::ZipError;
use zip::ZipArchive;

/// An opened Office package; every error it reports names the file. The parts it reads share
/// the file's unpacking budget, so neither one huge part nor many large ones can take the
/// machine's memory.
pub(super) struct Package {
    path: PathBuf,
    archive: ZipArchive<Cursor<Vec<u8>>>,
    unpacked: Unpacked,
}

impl Package {
    /// Opens `bytes` as a zip, refusing empty files and other formats with a clear reason.
    pub(super) fn open(path: &Path, bytes: Vec<u8>) -> Result<Package, IngestError> {
        if bytes.is_empty() {
            return Err(IngestError::Empty {
                path: path.to_path_buf(),
            });
        }
        let archive = ZipArchive::new(Cursor::new(bytes)).map_err(|err| IngestError::Parse {
            path: path.to_path_buf(),
            message: format!("not an Office file (unreadable as a zip archive: {err})"),
        })?;
        Ok(Package {
            path: path.to_path_buf(),
            archive,
            unpacked: Unpacked::new(),
        })
    }

    /// The part the format cannot do without: its absence means the zip is some other file.
    pub(super) fn main_part(&mut self, name: &str, format: &str) -> Result<String, IngestError> {
        self.part(name)?.ok_or_else(|| IngestError::Parse {
            path: self.path.clone(),
            message: format!("not a {format} file (the zip has no {name})"),
        })
    }

    /// A part's text, or `None` when the package has no part of that name.
    pub(super) fn part(&mut self, name: &str) -> Result<Option<String>, IngestError> {
        let Package {
            path,
            archive,
            unpacked,
        } = self;
        let file = match archive.by_name(name) {
            Ok(file) => file,
            Err(ZipError::FileNotFound) => return Ok(None),
            Err(err) => return Err(part_error(path, name, err)),
        };
        let bytes = unpacked.read_all(file).map_err(|err| match err {
            Overread::Budget(budget) => IngestError::OverBudget {
                path: path.clone(),
                budget,
            },
            Overread::Io(err) => part_error(path, name, err),
        })?;
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|err| part_error(path, name, err))
    }

    pub(super) fn error(&self, part: &str, reason: impl std::fmt::Display) -> IngestError {
        part_error(&self.path, part, reason)
    }
}

fn part_error(path: &Path, part: &str, reason: impl std::fmt::Display) -> IngestError {
    IngestError::Parse {
        path: path.to_path_buf(),
        message: format!("{part}: {reason}"),
    }
}

/// Walks the XML of one part, calling `visit` for each event; turns XML errors into errors
/// naming the file and part.
pub(super) fn walk_xml(
    package: &Package,
    part: &str,
    xml: &str,
    mut visit: impl FnMut(&XmlEvent<'_>),
) -> Result<(), IngestError> {
    let mut reader = Reader::from_str(xml);
    loop {
        let event = reader.read_event().map_err(|err| {
            let at = reader.error_position();
            package.error(part, format!("malformed XML at byte {at}: {err}"))
        })?;
        let event = match event {
            Event::Start(element) => XmlEvent::Start(element),
            Event::Empty(element) => XmlEvent::Empty(element),
            Event::End(element) => XmlEvent::End(element.local_name().as_ref().to_owned()),
            Event::Text(text) => XmlEvent::Text(text.xml10_content().into_owned()),
            Event::CData(data) => XmlEvent::Text(data.into_inner().into_owned()),
            Event::GeneralRef(reference) => {
                let character = match reference.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    _ => quick_xml::escape::resolve_predefined_entity(&reference.xml10_content())
                        .unwrap_or_default()
                        .to_owned(),
                };
                XmlEvent::Text(character)
            }
            Event::Eof => return Ok(()),
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => continue,
        };
        visit(&event);
    }
}

/// The XML events the loaders look at, names without namespace prefixes.
pub(super) enum XmlEvent<'a> {
    Start(BytesStart<'a>),
    Empty(BytesStart<'a>),
    End(String),
    Text(String),
}

impl XmlEvent<'_> {
    /// The element name of a start or empty tag.
    pub(super) fn opened(&self) -> Option<&str> {
        match self {
            XmlEvent::Start(element) | XmlEvent::Empty(element) => Some(local_name(element)),
            _ => None,
        }
    }

    pub(super) fn closed(&self) -> Option<&str> {
        match self {
            XmlEvent::End(name) => Some(name),
            _ => None,
        }
    }
}

/// An attribute's value by its name without namespace prefix.
pub(super) fn attribute(element: &BytesStart<'_>, local_name: &str) -> Option<String> {
    element
        .attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local_name)
        .and_then(|a| attribute_value(&a))
}

pub(super) fn attribute_value(attribute: &Attribute<'_>) -> Option<String> {
    attribute
        .normalized_value(XmlVersion::Implicit1_0)
        .ok()
        .map(|value| value.into_owned())
}

fn local_name<'a>(element: &'a BytesStart<'_>) -> &'a str {
    let name = element.name().0;
    name.rsplit_once(':').map_or(name, |(_, local)| local)
}
