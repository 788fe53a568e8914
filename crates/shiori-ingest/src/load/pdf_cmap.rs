//! Predefined Unicode CMaps for CID fonts, which pdf-extract does not know (it panics on them):
//! Japanese, Chinese and Korean PDFs that use a system font without embedding it name their
//! encoding `UniJIS-UCS2-H` and the like, and often carry no ToUnicode map.

use lopdf::{dictionary, Document, Object, ObjectId, Stream};

/// Codes of these CMaps are UTF-16 code units, so they decode as Identity codes with a ToUnicode
/// map that sends every code to itself (surrogates aside, which pdf-extract skips anyway).
const UNICODE_CMAP_SUFFIXES: &[&str] = &["-UCS2-H", "-UCS2-V", "-UTF16-H", "-UTF16-V"];
/// CMaps allow at most 100 entries per `beginbfrange` block.
const BFRANGE_BLOCK: usize = 100;

/// Rewrites every Type0 font whose encoding is a predefined Unicode CMap and that has no
/// ToUnicode map to Identity encoding plus an identity ToUnicode map. Widths keep their CID keys,
/// so word spacing may be off in such fonts; the characters are right.
pub(super) fn adopt_unicode_cmaps(pdf: &mut Document) {
    let fonts: Vec<(ObjectId, &'static str)> = pdf
        .objects
        .iter()
        .filter_map(|(&id, object)| {
            let font = object.as_dict().ok()?;
            if font.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Type0".as_slice())
                || font.has(b"ToUnicode")
            {
                return None;
            }
            let encoding = font.get(b"Encoding").and_then(Object::as_name).ok()?;
            let encoding = std::str::from_utf8(encoding).ok()?;
            if !encoding.starts_with("Uni")
                || !UNICODE_CMAP_SUFFIXES.iter().any(|s| encoding.ends_with(s))
            {
                return None;
            }
            let identity = if encoding.ends_with('V') {
                "Identity-V"
            } else {
                "Identity-H"
            };
            Some((id, identity))
        })
        .collect();
    if fonts.is_empty() {
        return;
    }
    let to_unicode = pdf.add_object(Stream::new(dictionary! {}, identity_to_unicode()));
    for (id, identity) in fonts {
        if let Ok(font) = pdf.get_dictionary_mut(id) {
            font.set("Encoding", Object::Name(identity.as_bytes().to_vec()));
            font.set("ToUnicode", to_unicode);
        }
    }
}

fn identity_to_unicode() -> Vec<u8> {
    let mut cmap = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CMapName /Shiori-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    // A bfrange may not cross its last byte, so the identity map is one range per high byte.
    let ranges: Vec<u16> = (0u16..=0xFF)
        .filter(|high| !(0xD8..=0xDF).contains(high))
        .collect();
    for block in ranges.chunks(BFRANGE_BLOCK) {
        cmap.push_str(&format!("{} beginbfrange\n", block.len()));
        for high in block {
            cmap.push_str(&format!("<{high:02X}00> <{high:02X}FF> <{high:02X}00>\n"));
        }
        cmap.push_str("endbfrange\n");
    }
    cmap.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    cmap.into_bytes()
}
