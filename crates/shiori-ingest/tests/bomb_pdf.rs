//! A PDF of about a megabyte whose one content stream inflates to 1 GiB fails alone, within the
//! file's unpacking budget (issue 48, item 4).

mod bombs;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use lopdf::{dictionary, Object, Stream};
use shiori_ingest::samples;
use std::io::Write;

const GIB: usize = 1024 * 1024 * 1024;

/// A one-page PDF whose page also draws a Flate stream of 1 GiB of NUL bytes (white space to
/// a PDF content parser, so nothing else about the page is odd).
fn flate_bomb() -> Vec<u8> {
    let bytes = samples::pdf(&["A page that hides a bomb"]).expect("pdf");
    let mut pdf = lopdf::Document::load_mem(&bytes).expect("parse");
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::best());
    let zeros = vec![0u8; 1024 * 1024];
    for _ in 0..GIB / zeros.len() {
        encoder.write_all(&zeros).expect("deflate");
    }
    let bomb = Stream::new(
        dictionary! { "Filter" => "FlateDecode" },
        encoder.finish().expect("deflate"),
    );
    let bomb = pdf.add_object(bomb);
    let page = *pdf.get_pages().get(&1).expect("page 1");
    let page = pdf.get_dictionary_mut(page).expect("page");
    let text = page.get(b"Contents").expect("contents").clone();
    page.set("Contents", vec![Object::Reference(bomb), text]);
    let mut saved = Vec::new();
    pdf.save_to(&mut saved).expect("save");
    saved
}

#[test]
fn a_pdf_whose_stream_inflates_to_a_gibibyte_fails_alone() {
    let bomb = flate_bomb();
    assert!(bomb.len() < 2 * 1024 * 1024, "{} bytes", bomb.len());
    bombs::assert_fails_alone("flate.pdf", &bomb, "unpacks to more than");
}
