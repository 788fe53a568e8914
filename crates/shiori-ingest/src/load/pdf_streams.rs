//! A PDF's streams, unpacked here against the file's budget before lopdf or pdf-extract unpack
//! any of them: their decoders read to the end of whatever a stream inflates to, so one stream
//! of a megabyte can ask for gigabytes.

use crate::limits::{Budget, Unpacked};
use flate2::write::{DeflateDecoder, ZlibDecoder};
use lopdf::{dictionary, Document as PdfDocument, LoadOptions, Object, ObjectId, Stream};
use std::collections::HashMap;
use std::io::Write;

/// The key that stands in for an object stream found over budget while loading (lopdf unpacks
/// object streams as it loads, before anything else can look at them).
const REFUSED: &str = "ShioriOverBudget";

/// Opens the PDF; an object stream that alone unpacks past the budget is replaced by a marker
/// that [`check_unpacked`] reports.
pub(super) fn load(bytes: &[u8]) -> lopdf::Result<PdfDocument> {
    let options = LoadOptions {
        filter: Some(refuse_object_stream_bombs),
        ..LoadOptions::default()
    };
    PdfDocument::load_mem_with_options(bytes, options)
}

/// lopdf keeps a top-level object as this leaves it in place, and an object from inside an
/// object stream as this returns it; the latter are never streams, so only they are cloned.
fn refuse_object_stream_bombs(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    let Object::Stream(stream) = object else {
        return Some((id, object.clone()));
    };
    if stream.dict.has_type(b"ObjStm") && unpack(stream, &mut Unpacked::new(), false).is_err() {
        *object = Object::Dictionary(dictionary! { REFUSED => true });
    }
    Some((id, Object::Null))
}

/// Unpacks every stream of the document but images, only counting, and fails once they come
/// to more than the file's budget; else returns what each unpacks to. Images are unpacked one
/// at a time for OCR, each within a budget of its own pixels (see `pdf_scan`).
pub(super) fn check_unpacked(pdf: &PdfDocument) -> Result<HashMap<ObjectId, u64>, Budget> {
    let mut unpacked = Unpacked::new();
    let mut sizes = HashMap::new();
    for (&id, object) in &pdf.objects {
        match object {
            Object::Dictionary(dict) if dict.has(REFUSED.as_bytes()) => {
                return Err(Budget::Unpacked)
            }
            Object::Stream(stream) if !is_image(stream) => {
                sizes.insert(id, measure(stream, &mut unpacked)?);
            }
            _ => {}
        }
    }
    Ok(sizes)
}

/// Charges each page's content streams again as the page is read: pages can share one stream,
/// and the text extractor unpacks it once per page.
pub(super) fn charge_pages(
    pdf: &PdfDocument,
    pages: impl IntoIterator<Item = ObjectId>,
    sizes: &HashMap<ObjectId, u64>,
) -> Result<(), Budget> {
    let mut unpacked = Unpacked::new();
    for page in pages {
        for content in pdf.get_page_contents(page) {
            unpacked.charge(sizes.get(&content).copied().unwrap_or(0))?;
        }
    }
    Ok(())
}

/// What the stream unpacks to, charged to `unpacked`.
fn measure(stream: &Stream, unpacked: &mut Unpacked) -> Result<u64, Budget> {
    let before = unpacked.left();
    unpack(stream, unpacked, false)?;
    Ok(before - unpacked.left())
}

fn is_image(stream: &Stream) -> bool {
    stream.dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Image")
}

/// The stream's transport filters undone the way lopdf undoes them, charged to `unpacked`:
/// the bytes when `keep`, else an empty vector. Filters after one this does not undo (an image
/// codec) are left alone, as is data that stops decoding part way (lopdf keeps what came out).
pub(super) fn unpack(
    stream: &Stream,
    unpacked: &mut Unpacked,
    keep: bool,
) -> Result<Vec<u8>, Budget> {
    let filters = stream.filters().unwrap_or_default();
    let mut data = stream.content.clone();
    for (index, filter) in filters.iter().enumerate() {
        let last = index + 1 == filters.len();
        data = match *filter {
            b"FlateDecode" | b"Fl" => inflate(&data, unpacked, keep || !last)?,
            b"LZWDecode" | b"LZW" => unlzw(&data, unpacked, keep || !last)?,
            // Undone by lopdf: four bytes out for each one in at most.
            b"ASCII85Decode" | b"A85" => {
                let single = Stream::new(dictionary! { "Filter" => "ASCII85Decode" }, data);
                let decoded = single.decompressed_content().unwrap_or_default();
                unpacked.charge(decoded.len() as u64)?;
                decoded
            }
            _ => break,
        };
    }
    Ok(if keep { data } else { Vec::new() })
}

/// Zlib data, or, when that yields nothing, raw deflate after the two header bytes (lopdf's
/// fallback for streams with a damaged header or checksum).
fn inflate(data: &[u8], unpacked: &mut Unpacked, keep: bool) -> Result<Vec<u8>, Budget> {
    let mut sink = unpacked.sink(keep);
    let mut zlib = ZlibDecoder::new(&mut sink);
    // A decoding error ends the data; the budget is what the sink says.
    let _ = zlib.write_all(data).and_then(|()| zlib.try_finish());
    drop(zlib);
    if sink.written() > 0 || data.len() <= 2 {
        return sink.finish();
    }
    let mut raw = DeflateDecoder::new(&mut sink);
    let _ = raw.write_all(&data[2..]).and_then(|()| raw.try_finish());
    drop(raw);
    sink.finish()
}

/// LZW as PDF writes it: most significant bit first, codes from 9 bits, switching width one
/// code early (lopdf's default).
fn unlzw(data: &[u8], unpacked: &mut Unpacked, keep: bool) -> Result<Vec<u8>, Budget> {
    let mut decoder = weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
    let mut sink = unpacked.sink(keep);
    // As with Flate, a decoding error ends the data.
    let _ = decoder.into_stream(&mut sink).decode_all(data);
    sink.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_UNPACKED_BYTES;
    use flate2::write::ZlibEncoder;
    use flate2::Compression;

    fn flate(data: &[u8]) -> Stream {
        let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(data).expect("deflate");
        let content = encoder.finish().expect("deflate");
        Stream::new(dictionary! { "Filter" => "FlateDecode" }, content)
    }

    #[test]
    fn streams_unpack_as_lopdf_unpacks_them_within_the_budget() {
        let stream = flate(b"BT (hello) Tj ET");
        let unpacked = unpack(&stream, &mut Unpacked::new(), true).expect("small");
        assert_eq!(unpacked, stream.decompressed_content().expect("lopdf"));
        let mut tight = Unpacked::with_limit(5);
        assert_eq!(unpack(&stream, &mut tight, false), Err(Budget::Unpacked));
    }

    #[test]
    fn the_budget_is_shared_by_all_the_streams_of_a_file() {
        let mut pdf = PdfDocument::with_version("1.5");
        let half = vec![b' '; (MAX_UNPACKED_BYTES / 2) as usize];
        pdf.add_object(flate(&half));
        assert!(check_unpacked(&pdf).is_ok());
        pdf.add_object(flate(&half));
        pdf.add_object(flate(b"one byte too many"));
        assert_eq!(check_unpacked(&pdf), Err(Budget::Unpacked));
    }

    #[test]
    fn an_object_stream_over_the_budget_is_refused_while_loading() {
        let mut stream = flate(&vec![b' '; MAX_UNPACKED_BYTES as usize + 1]);
        stream.dict.set("Type", "ObjStm");
        let mut object = Object::Stream(stream);
        refuse_object_stream_bombs((1, 0), &mut object);
        let mut pdf = PdfDocument::with_version("1.5");
        pdf.objects.insert((1, 0), object);
        assert_eq!(check_unpacked(&pdf), Err(Budget::Unpacked));
    }
}
