//! What the XML listings (WebDAV's multistatus, S3's ListObjectsV2) share.

use quick_xml::events::BytesRef;

/// `&amp;`, `&#x20;` and the like; quick-xml hands each reference over on its own.
pub(crate) fn resolve_reference(reference: &BytesRef<'_>) -> Result<String, String> {
    if let Ok(Some(character)) = reference.resolve_char_ref() {
        return Ok(character.to_string());
    }
    let name = reference.xml10_content();
    quick_xml::escape::resolve_predefined_entity(&name)
        .map(str::to_string)
        .ok_or_else(|| format!("an unknown entity &{name}; in the listing"))
}
