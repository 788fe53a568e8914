//! The images a scanned PDF page is made of, re-wrapped as files Leptonica decodes: JPEG and
//! JPEG 2000 streams as they are, CCITT fax streams in a TIFF header, and raw samples as PNM.

use super::pdf_streams;
use crate::limits::Unpacked;
use lopdf::{Dictionary, Document as PdfDocument, Object, ObjectId, Stream};

/// Images narrower or shorter than this are icons, rules and logos, not scans of text.
const MIN_SIDE: u32 = 100;
/// Raw samples are decoded into memory before OCR; larger images are refused unread.
const MAX_RAW_PIXELS: u64 = 70_000_000;
const POINTS_PER_INCH: f64 = 72.0;
/// The most an image's samples take a pixel (CMYK, 8 bits a component), and what a row may
/// add (a PNG predictor's tag byte) or the data may carry besides (a codec's header).
const MAX_BYTES_PER_PIXEL: u64 = 4;
const SLACK_BYTES: u64 = 64 * 1024;

/// Why an image of a page cannot be handed to OCR.
#[derive(Debug, thiserror::Error)]
pub(super) enum ScanError {
    #[error("{0} images are not supported")]
    UnsupportedFilter(String),
    #[error("image data could not be decompressed ({0})")]
    Decompress(#[source] lopdf::Error),
    #[error("image data is not valid ASCIIHex")]
    AsciiHex,
    #[error("fax image is too large")]
    FaxTooLarge(#[source] std::num::TryFromIntError),
    #[error("image of {width} × {height} px is over the limit of {MAX_RAW_PIXELS} pixels")]
    TooManyPixels { width: u32, height: u32 },
    #[error("images of {0} bits a sample are not supported")]
    UnsupportedBits(i64),
    #[error("images in colour space {0} are not supported")]
    UnsupportedColourSpace(String),
    #[error("image data is shorter than its size says")]
    Truncated,
    #[error("image data unpacks to more than its {width} × {height} px can hold")]
    Unpacked { width: u32, height: u32 },
}

/// One image of a page, encoded, and its resolution as placed on the page.
pub(super) struct ScanImage {
    pub encoded: Vec<u8>,
    pub dpi: Option<u32>,
}

/// The page's images large enough to hold text, in the order its resources list them. An
/// image that cannot be re-wrapped is reported by its reason.
pub(super) fn page_images(pdf: &PdfDocument, page: ObjectId) -> Vec<Result<ScanImage, ScanError>> {
    let page_inches = page_width_inches(pdf, page);
    image_streams(pdf, page)
        .into_iter()
        .filter_map(|stream| {
            let width = dimension(&stream.dict, b"Width")?;
            let height = dimension(&stream.dict, b"Height")?;
            if width.min(height) < MIN_SIDE {
                return None;
            }
            let dpi = page_inches.map(|inches| (f64::from(width.max(height)) / inches) as u32);
            Some(encode(pdf, stream, width, height).map(|encoded| ScanImage { encoded, dpi }))
        })
        .collect()
}

fn image_streams(pdf: &PdfDocument, page: ObjectId) -> Vec<&Stream> {
    let Ok((direct, inherited)) = pdf.get_page_resources(page) else {
        return Vec::new();
    };
    let inherited = inherited
        .into_iter()
        .filter_map(|id| pdf.get_dictionary(id).ok());
    direct
        .into_iter()
        .chain(inherited)
        .filter_map(|resources| pdf.get_dict_in_dict(resources, b"XObject").ok())
        .flat_map(|xobjects| xobjects.iter().map(|(_, object)| object))
        .filter_map(|object| pdf.dereference(object).ok()?.1.as_stream().ok())
        .filter(|stream| {
            stream.dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Image")
        })
        .collect()
}

/// The wider side of the page, for the resolution of an image that fills it.
fn page_width_inches(pdf: &PdfDocument, page: ObjectId) -> Option<f64> {
    let mut node = pdf.get_dictionary(page).ok()?;
    // The page tree is shallow; the bound stops a cycle of Parent links.
    for _ in 0..32 {
        let bounds = node
            .get(b"MediaBox")
            .and_then(|object| pdf.dereference(object))
            .and_then(|(_, object)| object.as_array());
        if let Ok(bounds) = bounds {
            let numbers: Vec<f64> = bounds
                .iter()
                .filter_map(|n| n.as_float().ok().map(f64::from))
                .collect();
            let [x0, y0, x1, y1] = numbers.as_slice() else {
                return None;
            };
            let points = (x1 - x0).abs().max((y1 - y0).abs());
            return (points > 0.0).then_some(points / POINTS_PER_INCH);
        }
        node = pdf
            .get_dictionary(node.get(b"Parent").ok()?.as_reference().ok()?)
            .ok()?;
    }
    None
}

fn dimension(dict: &Dictionary, key: &[u8]) -> Option<u32> {
    u32::try_from(dict.get(key).ok()?.as_i64().ok()?).ok()
}

/// The stream as a file Leptonica reads: transport filters (Flate, LZW, ASCII85, ASCIIHex)
/// undone, then the image codec's own bytes kept, wrapped or turned into PNM.
fn encode(
    pdf: &PdfDocument,
    stream: &Stream,
    width: u32,
    height: u32,
) -> Result<Vec<u8>, ScanError> {
    check_unpacked(stream, width, height)?;
    let filters = filter_names(&stream.dict);
    let mut data = stream.content.clone();
    for (index, filter) in filters.iter().enumerate() {
        let last = index + 1 == filters.len();
        data = match filter.as_slice() {
            b"DCTDecode" | b"DCT" | b"JPXDecode" if last => return Ok(data),
            b"CCITTFaxDecode" | b"CCF" if last => {
                let params = decode_params(pdf, &stream.dict, index);
                return fax_as_tiff(&data, width, height, params);
            }
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(&data)?,
            b"FlateDecode" | b"Fl" | b"LZWDecode" | b"LZW" | b"ASCII85Decode" | b"A85" => {
                transport(pdf, &stream.dict, filter, index, data)?
            }
            other => {
                return Err(ScanError::UnsupportedFilter(
                    String::from_utf8_lossy(other).into_owned(),
                ))
            }
        };
    }
    raw_as_pnm(pdf, &stream.dict, &data, width, height)
}

fn filter_names(dict: &Dictionary) -> Vec<Vec<u8>> {
    match dict.get(b"Filter") {
        Ok(Object::Name(name)) => vec![name.clone()],
        Ok(Object::Array(names)) => names
            .iter()
            .filter_map(|name| name.as_name().ok().map(<[u8]>::to_vec))
            .collect(),
        _ => Vec::new(),
    }
}

/// The parameters of the filter at `index` (`DecodeParms` is one dictionary or one per filter).
fn decode_params<'a>(
    pdf: &'a PdfDocument,
    dict: &'a Dictionary,
    index: usize,
) -> Option<&'a Dictionary> {
    let params = pdf.dereference(dict.get(b"DecodeParms").ok()?).ok()?.1;
    match params {
        Object::Dictionary(params) => Some(params),
        Object::Array(each) => pdf.dereference(each.get(index)?).ok()?.1.as_dict().ok(),
        _ => None,
    }
}

/// Unpacks the image once, only counting, within what its pixels can need: lopdf's decoders,
/// which undo its transport filters below, read to the end of whatever a stream inflates to.
fn check_unpacked(stream: &Stream, width: u32, height: u32) -> Result<(), ScanError> {
    let pixels = (u64::from(width) * u64::from(height)).min(MAX_RAW_PIXELS);
    let limit = pixels * MAX_BYTES_PER_PIXEL + u64::from(height) + SLACK_BYTES;
    pdf_streams::unpack(stream, &mut Unpacked::with_limit(limit), false)
        .map(drop)
        .map_err(|_| ScanError::Unpacked { width, height })
}

/// One transport filter, through lopdf's decoders.
fn transport(
    pdf: &PdfDocument,
    dict: &Dictionary,
    filter: &[u8],
    index: usize,
    data: Vec<u8>,
) -> Result<Vec<u8>, ScanError> {
    let mut single = Dictionary::new();
    single.set("Filter", Object::Name(filter.to_vec()));
    if let Some(params) = decode_params(pdf, dict, index) {
        single.set("DecodeParms", Object::Dictionary(params.clone()));
    }
    Stream::new(single, data)
        .decompressed_content()
        .map_err(ScanError::Decompress)
}

fn ascii_hex(data: &[u8]) -> Result<Vec<u8>, ScanError> {
    let digits: Vec<u8> = data
        .iter()
        .take_while(|&&b| b != b'>')
        .filter(|b| !b.is_ascii_whitespace())
        .map(|&b| (b as char).to_digit(16).map(|d| d as u8))
        .collect::<Option<_>>()
        .ok_or(ScanError::AsciiHex)?;
    Ok(digits
        .chunks(2)
        .map(|pair| pair[0] << 4 | pair.get(1).copied().unwrap_or(0))
        .collect())
}

/// A CCITT Group 3 or 4 stream in a minimal one-strip TIFF, which Leptonica decodes with
/// libtiff.
fn fax_as_tiff(
    data: &[u8],
    width: u32,
    height: u32,
    params: Option<&Dictionary>,
) -> Result<Vec<u8>, ScanError> {
    let number = |key: &[u8]| params.and_then(|p| p.get(key).ok()?.as_i64().ok());
    let k = number(b"K").unwrap_or(0);
    let rows = number(b"Rows")
        .and_then(|r| u32::try_from(r).ok())
        .filter(|&r| r > 0)
        .unwrap_or(height);
    let black_is_1 = params
        .and_then(|p| p.get(b"BlackIs1").ok()?.as_bool().ok())
        .unwrap_or(false);
    let compression: u16 = if k < 0 { 4 } else { 3 };
    // T4Options bit 0: two-dimensional coding (K > 0).
    let t4_options = u32::from(k > 0);
    let data_length = u32::try_from(data.len()).map_err(ScanError::FaxTooLarge)?;
    let mut tags: Vec<(u16, u16, u32)> = vec![
        (256, 4, width),
        (257, 4, rows),
        (258, 3, 1),
        (259, 3, u32::from(compression)),
        (262, 3, u32::from(black_is_1)),
        (273, 4, 0),
        (277, 3, 1),
        (278, 4, rows),
        (279, 4, data_length),
    ];
    if compression == 3 {
        tags.push((292, 4, t4_options));
        tags.sort_by_key(|tag| tag.0);
    }
    let header_length = 8 + 2 + tags.len() * 12 + 4;
    let mut tiff = Vec::with_capacity(header_length + data.len());
    tiff.extend_from_slice(b"II*\0");
    tiff.extend_from_slice(&8u32.to_le_bytes());
    tiff.extend_from_slice(&(tags.len() as u16).to_le_bytes());
    for (tag, kind, value) in tags {
        let value = if tag == 273 {
            header_length as u32
        } else {
            value
        };
        tiff.extend_from_slice(&tag.to_le_bytes());
        tiff.extend_from_slice(&kind.to_le_bytes());
        tiff.extend_from_slice(&1u32.to_le_bytes());
        if kind == 3 {
            tiff.extend_from_slice(&(value as u16).to_le_bytes());
            tiff.extend_from_slice(&[0, 0]);
        } else {
            tiff.extend_from_slice(&value.to_le_bytes());
        }
    }
    tiff.extend_from_slice(&0u32.to_le_bytes());
    tiff.extend_from_slice(data);
    Ok(tiff)
}

/// Raw samples (after transport filters) as a PGM or PPM file: grey, RGB and palette images of
/// 1 or 8 bits a component, the colour spaces scanners write.
fn raw_as_pnm(
    pdf: &PdfDocument,
    dict: &Dictionary,
    data: &[u8],
    width: u32,
    height: u32,
) -> Result<Vec<u8>, ScanError> {
    if u64::from(width) * u64::from(height) > MAX_RAW_PIXELS {
        return Err(ScanError::TooManyPixels { width, height });
    }
    let bits = dict
        .get(b"BitsPerComponent")
        .and_then(Object::as_i64)
        .unwrap_or(1);
    let bits = match bits {
        1 | 2 | 4 | 8 => bits as u32,
        other => return Err(ScanError::UnsupportedBits(other)),
    };
    let stencil = dict
        .get(b"ImageMask")
        .and_then(Object::as_bool)
        .unwrap_or(false);
    let space = colour_space(pdf, dict);
    let (channels, palette) = match &space {
        _ if stencil => (1, None),
        ColourSpace::Grey => (1, None),
        ColourSpace::Rgb => (3, None),
        ColourSpace::Indexed {
            base_channels,
            table,
        } => (*base_channels, Some(table.as_slice())),
        ColourSpace::Unsupported(name) => {
            return Err(ScanError::UnsupportedColourSpace(name.clone()))
        }
    };
    let samples_per_row = width as usize * if palette.is_some() { 1 } else { channels };
    let samples = unpack(data, samples_per_row, height as usize, bits)?;
    let mut pixels: Vec<u8> = match palette {
        Some(table) => samples
            .iter()
            .flat_map(|&i| {
                (0..channels)
                    .map(move |c| table.get(i as usize * channels + c).copied().unwrap_or(0))
            })
            .collect(),
        None => {
            let max = (1u16 << bits) - 1;
            samples
                .iter()
                .map(|&s| (u16::from(s) * 255 / max) as u8)
                .collect()
        }
    };
    if decode_inverted(dict) && palette.is_none() {
        pixels.iter_mut().for_each(|p| *p = 255 - *p);
    }
    let magic = if channels == 3 { "P6" } else { "P5" };
    let mut pnm = format!("{magic}\n{width} {height}\n255\n").into_bytes();
    pnm.extend_from_slice(&pixels);
    Ok(pnm)
}

/// A `Decode` array of `[1 0 …]` swaps dark and light (a stencil's `[1 0]` paints its 1s).
fn decode_inverted(dict: &Dictionary) -> bool {
    let first = dict
        .get(b"Decode")
        .and_then(Object::as_array)
        .ok()
        .and_then(|d| d.first());
    first.and_then(|value| value.as_float().ok()) == Some(1.0)
}

enum ColourSpace {
    Grey,
    Rgb,
    Indexed {
        base_channels: usize,
        table: Vec<u8>,
    },
    Unsupported(String),
}

fn colour_space(pdf: &PdfDocument, dict: &Dictionary) -> ColourSpace {
    let Some(space) = dict
        .get(b"ColorSpace")
        .ok()
        .and_then(|o| pdf.dereference(o).ok())
    else {
        return ColourSpace::Grey;
    };
    named_space(pdf, space.1)
}

fn named_space(pdf: &PdfDocument, space: &Object) -> ColourSpace {
    match space {
        Object::Name(name) => match name.as_slice() {
            b"DeviceGray" | b"G" | b"CalGray" => ColourSpace::Grey,
            b"DeviceRGB" | b"RGB" | b"CalRGB" => ColourSpace::Rgb,
            other => ColourSpace::Unsupported(String::from_utf8_lossy(other).into_owned()),
        },
        Object::Array(parts) => array_space(pdf, parts),
        _ => ColourSpace::Unsupported("(malformed)".to_owned()),
    }
}

fn array_space(pdf: &PdfDocument, parts: &[Object]) -> ColourSpace {
    let part = |i: usize| {
        parts
            .get(i)
            .and_then(|o| pdf.dereference(o).ok())
            .map(|(_, o)| o)
    };
    match part(0).and_then(|o| o.as_name().ok()) {
        Some(b"ICCBased") => {
            let channels = part(1)
                .and_then(|o| o.as_stream().ok())
                .and_then(|s| s.dict.get(b"N").ok()?.as_i64().ok());
            match channels {
                Some(1) => ColourSpace::Grey,
                Some(3) => ColourSpace::Rgb,
                _ => ColourSpace::Unsupported("ICCBased (not grey or RGB)".to_owned()),
            }
        }
        Some(b"Indexed" | b"I") => {
            let base_channels = match part(1).map(|base| named_space(pdf, base)) {
                Some(ColourSpace::Grey) => 1,
                Some(ColourSpace::Rgb) => 3,
                _ => return ColourSpace::Unsupported("Indexed (base not grey or RGB)".to_owned()),
            };
            let table = match part(3) {
                Some(Object::String(bytes, _)) => bytes.clone(),
                Some(Object::Stream(stream)) => stream
                    .decompressed_content()
                    .unwrap_or_else(|_| stream.content.clone()),
                _ => return ColourSpace::Unsupported("Indexed (no table)".to_owned()),
            };
            ColourSpace::Indexed {
                base_channels,
                table,
            }
        }
        Some(b"CalGray") => ColourSpace::Grey,
        Some(b"CalRGB") => ColourSpace::Rgb,
        Some(other) => ColourSpace::Unsupported(String::from_utf8_lossy(other).into_owned()),
        None => ColourSpace::Unsupported("(malformed)".to_owned()),
    }
}

/// Samples of `bits` bits packed in rows padded to whole bytes, one byte each, unscaled.
fn unpack(data: &[u8], per_row: usize, rows: usize, bits: u32) -> Result<Vec<u8>, ScanError> {
    let bits = bits as usize;
    let row_bytes = (per_row * bits).div_ceil(8);
    if data.len() < row_bytes * rows {
        return Err(ScanError::Truncated);
    }
    if bits == 8 {
        return Ok(data[..per_row * rows].to_vec());
    }
    let mask = (1u8 << bits) - 1;
    let mut samples = Vec::with_capacity(per_row * rows);
    for row in data.chunks(row_bytes).take(rows) {
        samples.extend((0..per_row).map(|i| {
            let bit = i * bits;
            (row[bit / 8] >> (8 - bits - bit % 8)) & mask
        }));
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_samples_are_unpacked_row_by_row() {
        // Two rows of three 1-bit samples, each row padded to a whole byte.
        let bits = unpack(&[0b1010_0000, 0b0110_0000], 3, 2, 1).expect("unpack");
        assert_eq!(bits, [1, 0, 1, 0, 1, 1]);
        assert_eq!(unpack(&[0x1f], 2, 1, 4).expect("unpack"), [1, 15]);
        assert!(unpack(&[0xff], 9, 1, 1).is_err());
    }

    #[test]
    fn ascii_hex_skips_whitespace_and_stops_at_its_end_marker() {
        assert_eq!(ascii_hex(b"48 65\n6c6C6f>junk").expect("hex"), b"Hello");
        assert_eq!(ascii_hex(b"7>").expect("hex"), [0x70]);
        assert!(ascii_hex(b"zz").is_err());
    }

    #[test]
    fn raw_grey_samples_become_a_pgm_and_an_inverting_decode_is_applied() {
        let pdf = PdfDocument::with_version("1.5");
        let mut dict = lopdf::dictionary! { "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8 };
        let pnm = raw_as_pnm(&pdf, &dict, &[0, 255], 2, 1).expect("pnm");
        assert_eq!(pnm, b"P5\n2 1\n255\n\x00\xff");
        dict.set("Decode", vec![1.into(), 0.into()]);
        let pnm = raw_as_pnm(&pdf, &dict, &[0, 255], 2, 1).expect("pnm");
        assert_eq!(pnm, b"P5\n2 1\n255\n\xff\x00");
    }
}
