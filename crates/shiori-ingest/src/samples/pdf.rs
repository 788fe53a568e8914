use super::SampleError;
use lopdf::{dictionary, Document as PdfDocument, Object, Stream, StringFormat};
use lopdf::{EncryptionState, EncryptionVersion, Permissions};
use std::collections::BTreeSet;

const FONT_SIZE: i64 = 12;
/// A line height of 1.25 em, as word processors set body text.
const LINE_GAP: i64 = 15;
/// ToUnicode CMaps allow at most 100 entries per `beginbfchar` block.
const BFCHAR_BLOCK: usize = 100;

/// A PDF with one page per entry of `pages`; lines of a page are separate text lines.
pub fn pdf(pages: &[&str]) -> Result<Vec<u8>, SampleError> {
    save(&mut pdf_document(pages))
}

/// A PDF that opens only with `user_password` (RC4, 128-bit).
pub fn encrypted_pdf(pages: &[&str], user_password: &str) -> Result<Vec<u8>, SampleError> {
    let mut document = pdf_document(pages);
    let state = EncryptionState::try_from(EncryptionVersion::V2 {
        document: &document,
        owner_password: "owner",
        user_password,
        key_length: 128,
        permissions: Permissions::all(),
    })?;
    document.encrypt(&state)?;
    save(&mut document)
}

fn save(document: &mut PdfDocument) -> Result<Vec<u8>, SampleError> {
    let mut bytes = Vec::new();
    document.save_to(&mut bytes)?;
    Ok(bytes)
}

fn pdf_document(pages: &[&str]) -> PdfDocument {
    let mut document = PdfDocument::with_version("1.5");
    let pages_id = document.new_object_id();
    let characters: BTreeSet<u16> = pages.iter().flat_map(|page| cid_codes(page)).collect();
    let font = cid_font(&mut document, &characters);
    let resources = document.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let kids: Vec<Object> = pages
        .iter()
        .map(|text| {
            let content = document.add_object(Stream::new(dictionary! {}, page_content(text)));
            let page =
                dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => content };
            document.add_object(page).into()
        })
        .collect();
    let pages_dictionary = dictionary! {
        "Type" => "Pages",
        "Count" => kids.len() as i64,
        "Kids" => kids,
        "Resources" => resources,
        "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
    };
    document
        .objects
        .insert(pages_id, Object::Dictionary(pages_dictionary));
    let catalog = document.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    document.trailer.set("Root", catalog);
    // Encryption keys are derived from the file identifier.
    let id = Object::String(b"shiori-sample-id".to_vec(), StringFormat::Hexadecimal);
    document.trailer.set("ID", vec![id.clone(), id]);
    document
}

/// Identity-H codes are the UTF-16 code units; characters beyond the BMP are left out.
fn cid_codes(text: &str) -> Vec<u16> {
    text.chars()
        .filter_map(|c| u16::try_from(u32::from(c)).ok())
        .collect()
}

fn page_content(text: &str) -> Vec<u8> {
    let mut content = format!("BT /F1 {FONT_SIZE} Tf 50 800 Td\n");
    for (index, line) in text.lines().enumerate() {
        if index > 0 {
            content.push_str(&format!("0 -{LINE_GAP} Td\n"));
        }
        let hex: String = cid_codes(line).iter().map(|c| format!("{c:04X}")).collect();
        content.push_str(&format!("<{hex}> Tj\n"));
    }
    content.push_str("ET\n");
    content.into_bytes()
}

fn cid_font(document: &mut PdfDocument, characters: &BTreeSet<u16>) -> lopdf::ObjectId {
    let descriptor = document.add_object(dictionary! {
        "Type" => "FontDescriptor",
        "FontName" => "ShioriSampleGothic",
        "Flags" => 4,
        "FontBBox" => vec![0.into(), (-200).into(), 1000.into(), 900.into()],
        "ItalicAngle" => 0,
        "Ascent" => 880,
        "Descent" => -120,
        "CapHeight" => 700,
        "StemV" => 80,
    });
    let descendant = document.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "CIDFontType2",
        "BaseFont" => "ShioriSampleGothic",
        "CIDSystemInfo" => dictionary! {
            "Registry" => Object::string_literal("Adobe"),
            "Ordering" => Object::string_literal("Identity"),
            "Supplement" => 0,
        },
        "FontDescriptor" => descriptor,
        "DW" => 1000,
    });
    let to_unicode = document.add_object(Stream::new(dictionary! {}, to_unicode_cmap(characters)));
    document.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type0",
        "BaseFont" => "ShioriSampleGothic",
        "Encoding" => "Identity-H",
        "DescendantFonts" => vec![descendant.into()],
        "ToUnicode" => to_unicode,
    })
}

fn to_unicode_cmap(characters: &BTreeSet<u16>) -> Vec<u8> {
    let mut cmap = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    let codes: Vec<u16> = characters.iter().copied().collect();
    for block in codes.chunks(BFCHAR_BLOCK) {
        cmap.push_str(&format!("{} beginbfchar\n", block.len()));
        for code in block {
            cmap.push_str(&format!("<{code:04X}> <{code:04X}>\n"));
        }
        cmap.push_str("endbfchar\n");
    }
    cmap.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    cmap.into_bytes()
}
