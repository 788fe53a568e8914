//! A TIFF of 3,000 pages that all show one strip (about a megabyte on disk, hours of OCR) fails
//! alone before any page is read (issue 48, item 5).

mod bombs;

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 1000;
const PAGES: usize = 3000;

/// One little-endian IFD entry: tag, type (3 SHORT, 4 LONG), one value.
fn entry(tiff: &mut Vec<u8>, tag: u16, kind: u16, value: u32) {
    tiff.extend_from_slice(&tag.to_le_bytes());
    tiff.extend_from_slice(&kind.to_le_bytes());
    tiff.extend_from_slice(&1u32.to_le_bytes());
    match kind {
        // A SHORT sits in the first two bytes of the value field.
        3 => tiff.extend_from_slice(&[value as u8, (value >> 8) as u8, 0, 0]),
        _ => tiff.extend_from_slice(&value.to_le_bytes()),
    }
}

/// An uncompressed 8-bit grey strip of a grey bar on white, then one IFD per page pointing at it.
fn shared_strip_tiff() -> Vec<u8> {
    const STRIP_AT: u32 = 8;
    let strip_bytes = WIDTH * HEIGHT;
    let mut tiff = b"II*\0".to_vec();
    tiff.extend_from_slice(&(STRIP_AT + strip_bytes).to_le_bytes());
    for row in 0..HEIGHT {
        let grey = if (400..600).contains(&row) { 0 } else { 255 };
        tiff.extend(std::iter::repeat_n(grey, WIDTH as usize));
    }
    for page in 0..PAGES {
        let entries: [(u16, u16, u32); 9] = [
            (256, 4, WIDTH),
            (257, 4, HEIGHT),
            (258, 3, 8),
            (259, 3, 1),
            (262, 3, 1),
            (273, 4, STRIP_AT),
            (277, 3, 1),
            (278, 4, HEIGHT),
            (279, 4, strip_bytes),
        ];
        tiff.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        for (tag, kind, value) in entries {
            entry(&mut tiff, tag, kind, value);
        }
        let next = if page + 1 == PAGES {
            0
        } else {
            tiff.len() as u32 + 4
        };
        tiff.extend_from_slice(&next.to_le_bytes());
    }
    tiff
}

#[test]
fn a_tiff_of_thousands_of_pages_sharing_one_strip_fails_alone() {
    let bomb = shared_strip_tiff();
    assert!(bomb.len() < 2 * 1024 * 1024, "{} bytes", bomb.len());
    assert_eq!(shiori_ocr::page_count(&bomb), Ok(PAGES));
    bombs::assert_fails_alone("pages.tif", &bomb, "pages to read by OCR");
}
