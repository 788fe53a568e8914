//! Decoding and clean-up with Leptonica: every image is measured from its header before it is
//! decoded, so a 20,000 × 20,000 px photo is refused without allocating its pixels.

use crate::OcrError;
use leptonica_sys as lept;
use std::ptr::NonNull;
use std::sync::Once;

/// Shortest header Leptonica's format sniffing reads.
const MIN_IMAGE_BYTES: usize = 12;
/// Resolutions below this are placeholders (72 dpi screen defaults), not a scan's.
const MIN_TRUSTED_DPI: u32 = 100;
/// Tesseract reads best at about 300 dpi; finer scans only cost time and memory.
const MAX_USEFUL_DPI: u32 = 400;
const TARGET_DPI: u32 = 300;

/// An image Leptonica allocated, destroyed when dropped.
pub(crate) struct Pix(NonNull<lept::Pix>);

impl Pix {
    /// Takes ownership of what a Leptonica constructor returned; `None` for its null.
    fn owned(raw: *mut lept::Pix) -> Option<Pix> {
        NonNull::new(raw).map(Pix)
    }

    pub(crate) fn as_ptr(&self) -> *mut lept::Pix {
        self.0.as_ptr()
    }

    fn resolution(&self) -> Option<u32> {
        // SAFETY: `self` owns a live Pix; the getter only reads a field.
        let dpi = unsafe { lept::pixGetXRes(self.as_ptr()) };
        u32::try_from(dpi)
            .ok()
            .filter(|&dpi| dpi >= MIN_TRUSTED_DPI)
    }
}

impl Drop for Pix {
    fn drop(&mut self) {
        let mut raw = self.as_ptr();
        // SAFETY: the Pix is owned by `self` alone and destroyed once, here.
        unsafe { lept::pixDestroy(&mut raw) };
    }
}

/// A grey, upright-ish page ready for Tesseract, and its resolution when known.
pub(crate) struct Prepared {
    pub pix: Pix,
    pub dpi: Option<u32>,
}

/// How many pages the image holds: a TIFF's pages, one for every other format.
pub fn page_count(bytes: &[u8]) -> Result<usize, OcrError> {
    if !is_tiff(file_format(bytes)?) {
        return Ok(1);
    }
    // SAFETY: Leptonica reads `bytes` through a read-only memory stream that is closed before
    // `bytes` goes out of scope.
    let stream = unsafe { lept::fopenReadFromMemory(bytes.as_ptr(), bytes.len()) };
    if stream.is_null() {
        return Err(OcrError::Undecodable);
    }
    let mut pages = 0;
    // SAFETY: `stream` is the open stream made above; `pages` outlives the call.
    let status = unsafe { lept::tiffGetCount(stream, &mut pages) };
    // SAFETY: `stream` came from fopen-style allocation and is closed exactly once.
    unsafe { libc::fclose(stream.cast()) };
    match usize::try_from(pages) {
        Ok(pages) if status == 0 && pages > 0 => Ok(pages),
        _ => Err(OcrError::Undecodable),
    }
}

/// Decodes page `page` of the image, refusing it first if its header says it is too large.
pub(crate) fn decode(bytes: &[u8], page: usize, max_pixels: u64) -> Result<Pix, OcrError> {
    let format = file_format(bytes)?;
    let tiff = is_tiff(format);
    if !tiff && page > 0 {
        return Err(OcrError::NoSuchPage { page, pages: 1 });
    }
    let index = i32::try_from(page).map_err(|_| OcrError::NoSuchPage {
        page,
        pages: page_count(bytes).unwrap_or(0),
    })?;
    let (width, height) = if tiff {
        tiff_size(bytes, index).ok_or_else(|| OcrError::NoSuchPage {
            page,
            pages: page_count(bytes).unwrap_or(0),
        })?
    } else {
        size(bytes).ok_or(OcrError::Undecodable)?
    };
    if u64::from(width) * u64::from(height) > max_pixels {
        return Err(OcrError::TooLarge {
            width,
            height,
            limit: max_pixels,
        });
    }
    // SAFETY: Leptonica only reads `bytes` during the call and returns a new Pix or null.
    let raw = unsafe {
        if tiff {
            lept::pixReadMemTiff(bytes.as_ptr(), bytes.len(), index)
        } else {
            lept::pixReadMem(bytes.as_ptr(), bytes.len())
        }
    };
    Pix::owned(raw).ok_or(OcrError::Undecodable)
}

/// Grey, at most [`MAX_USEFUL_DPI`], and straightened: Tesseract's own binarisation and
/// orientation detection take it from there.
pub(crate) fn prepare(pix: Pix, dpi_hint: Option<u32>) -> Result<Prepared, OcrError> {
    let dpi = dpi_hint
        .filter(|&dpi| dpi >= MIN_TRUSTED_DPI)
        .or_else(|| pix.resolution());
    // SAFETY: `pix` is live; the conversion returns a new Pix or null.
    let grey = Pix::owned(unsafe { lept::pixConvertTo8(pix.as_ptr(), 0) })
        .ok_or(OcrError::Processing("turning the image grey"))?;
    drop(pix);
    let (grey, dpi) = match dpi {
        Some(dpi) if dpi > MAX_USEFUL_DPI => {
            let factor = TARGET_DPI as f32 / dpi as f32;
            // SAFETY: `grey` is live; scaling returns a new Pix or null.
            let scaled = Pix::owned(unsafe { lept::pixScale(grey.as_ptr(), factor, factor) })
                .ok_or(OcrError::Processing("scaling the image down"))?;
            (scaled, Some(TARGET_DPI))
        }
        other => (grey, other),
    };
    // SAFETY: `grey` is live; de-skewing returns a new Pix (a clone when no skew is found) or
    // null when the image is too small to measure, in which case the grey one is used.
    let deskewed = Pix::owned(unsafe { lept::pixDeskew(grey.as_ptr(), 0) });
    Ok(Prepared {
        pix: deskewed.unwrap_or(grey),
        dpi,
    })
}

fn file_format(bytes: &[u8]) -> Result<i32, OcrError> {
    quiet_leptonica();
    if bytes.len() < MIN_IMAGE_BYTES {
        return Err(OcrError::UnknownFormat);
    }
    let mut format = 0;
    // SAFETY: `bytes` holds at least the 12 bytes the sniffing reads; `format` outlives the call.
    let status = unsafe { lept::findFileFormatBuffer(bytes.as_ptr(), &mut format) };
    if status != 0 || format == lept::IFF_UNKNOWN as i32 {
        return Err(OcrError::UnknownFormat);
    }
    Ok(format)
}

fn is_tiff(format: i32) -> bool {
    let tiff_formats =
        (lept::IFF_TIFF as i32..=lept::IFF_TIFF_ZIP as i32).chain([lept::IFF_TIFF_JPEG as i32]);
    tiff_formats.into_iter().any(|tiff| tiff == format)
}

/// Width and height from the header alone.
fn size(bytes: &[u8]) -> Option<(u32, u32)> {
    let (mut format, mut width, mut height) = (0, 0, 0);
    let (mut bits, mut samples, mut colormap) = (0, 0, 0);
    // SAFETY: Leptonica reads `bytes` and writes the six out-parameters, which outlive the call.
    let status = unsafe {
        lept::pixReadHeaderMem(
            bytes.as_ptr(),
            bytes.len(),
            &mut format,
            &mut width,
            &mut height,
            &mut bits,
            &mut samples,
            &mut colormap,
        )
    };
    dimensions(status, width, height)
}

/// Width and height of one TIFF page from its directory alone.
fn tiff_size(bytes: &[u8], page: i32) -> Option<(u32, u32)> {
    let (mut width, mut height, mut bits, mut samples) = (0, 0, 0, 0);
    let (mut resolution, mut colormap, mut format) = (0, 0, 0);
    // SAFETY: Leptonica reads `bytes` and writes the seven out-parameters, which outlive the
    // call.
    let status = unsafe {
        lept::readHeaderMemTiff(
            bytes.as_ptr(),
            bytes.len(),
            page,
            &mut width,
            &mut height,
            &mut bits,
            &mut samples,
            &mut resolution,
            &mut colormap,
            &mut format,
        )
    };
    dimensions(status, width, height)
}

fn dimensions(status: i32, width: i32, height: i32) -> Option<(u32, u32)> {
    let width = u32::try_from(width).ok().filter(|&w| w > 0)?;
    let height = u32::try_from(height).ok().filter(|&h| h > 0)?;
    (status == 0).then_some((width, height))
}

/// Leptonica writes every error to stderr; here each one becomes an `OcrError` instead.
fn quiet_leptonica() {
    static QUIET: Once = Once::new();
    // SAFETY: sets a process-wide severity level once, before any other Leptonica call here.
    QUIET.call_once(|| unsafe {
        lept::setMsgSeverity(lept::L_SEVERITY_NONE as i32);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_no_image_are_refused_before_decoding() {
        assert_eq!(
            decode(b"short", 0, 1000).err(),
            Some(OcrError::UnknownFormat)
        );
        let text = b"this is plain text and not an image at all";
        assert_eq!(decode(text, 0, 1000).err(), Some(OcrError::UnknownFormat));
        assert_eq!(page_count(text), Err(OcrError::UnknownFormat));
    }

    #[test]
    fn a_header_promising_too_many_pixels_is_refused_without_decoding() {
        // A PNG signature and an IHDR chunk for 20,000 × 20,000 px, and no pixel data at all.
        let mut chunk = b"IHDR".to_vec();
        chunk.extend_from_slice(&20_000u32.to_be_bytes());
        chunk.extend_from_slice(&20_000u32.to_be_bytes());
        chunk.extend_from_slice(&[8, 0, 0, 0, 0]);
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\r".to_vec();
        png.extend_from_slice(&chunk);
        png.extend_from_slice(&crc32(&chunk).to_be_bytes());
        png.extend_from_slice(b"\0\0\0\0IEND\xaeB`\x82");
        let refused = decode(&png, 0, 70_000_000).err();
        assert_eq!(
            refused,
            Some(OcrError::TooLarge {
                width: 20_000,
                height: 20_000,
                limit: 70_000_000
            })
        );
    }

    /// PNG's chunk checksum (CRC-32, reflected, polynomial 0xEDB88320).
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in bytes {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn a_second_page_of_a_single_page_format_does_not_exist() {
        let pgm = b"P5\n4 4\n255\n0123456789abcdef";
        assert!(decode(pgm, 0, 100).is_ok());
        assert_eq!(
            decode(pgm, 1, 100).err(),
            Some(OcrError::NoSuchPage { page: 1, pages: 1 })
        );
        assert_eq!(page_count(pgm), Ok(1));
    }
}
