//! OCR end to end: scans rendered by `scans/render_scans.py` (Pillow) from known text are loaded
//! like any file, and what Tesseract read is compared with the text they were set from.
//! Missing Python, Pillow or Tesseract's language packs fail these tests; nothing is skipped.

use lopdf::{dictionary, Object, Stream};
use serde::Deserialize;
use shiori_ingest::{load_bytes, load_file, normalize, samples, IngestError};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

#[derive(Debug, Deserialize)]
struct Scan {
    file: String,
    /// The source text of each page, in order.
    pages: Vec<String>,
    /// The character accuracy every page must reach.
    threshold: f64,
    kind: String,
}

/// Renders the scans once per test run, into the target's scratch folder.
fn scans() -> &'static (PathBuf, Vec<Scan>) {
    static RENDERED: OnceLock<(PathBuf, Vec<Scan>)> = OnceLock::new();
    RENDERED.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ocr-scans");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scans/render_scans.py");
        let output = Command::new("python3")
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("python3 runs (install it with scripts/test-deps.sh)");
        assert!(
            output.status.success(),
            "rendering the test scans failed (Pillow is installed by scripts/test-deps.sh): {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let manifest = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest");
        let scans = serde_json::from_str(&manifest).expect("manifest parses");
        (dir, scans)
    })
}

fn scan_path(name: &str) -> PathBuf {
    scans().0.join(name)
}

/// 1 − (edit distance ÷ source length), over NFKC text with whitespace runs as one space: a
/// space Tesseract leaves between Japanese characters counts as an error.
fn character_accuracy(source: &str, read: &str) -> f64 {
    let flat = |text: &str| -> Vec<char> {
        let normal = normalize(text);
        normal
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect()
    };
    let (source, read) = (flat(source), flat(read));
    let mut previous: Vec<usize> = (0..=read.len()).collect();
    for (i, s) in source.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, r) in read.iter().enumerate() {
            let substitution = previous[j] + usize::from(s != r);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    1.0 - previous[read.len()] as f64 / source.len() as f64
}

/// Loads every scan of `kind` and checks each page's accuracy, printing the table the README
/// quotes (`cargo test -p shiori-ingest --test ocr -- --nocapture`).
fn check_kind(kind: &str) {
    let mut failures = Vec::new();
    let mut measured = 0;
    for scan in scans().1.iter().filter(|scan| scan.kind == kind) {
        let loaded = load_file(&scan_path(&scan.file), 0)
            .unwrap_or_else(|error| panic!("{}: {error}", scan.file));
        assert!(
            loaded.record_failures.is_empty(),
            "{:?}",
            loaded.record_failures
        );
        assert_eq!(loaded.documents.len(), scan.pages.len(), "{}", scan.file);
        for (number, (source, document)) in scan.pages.iter().zip(&loaded.documents).enumerate() {
            let accuracy = character_accuracy(source, &document.text);
            let confidence = &document.metadata["ocr_confidence"];
            println!(
                "{kind:8} {:16} p.{} accuracy {accuracy:.4} (needs {:.2}), confidence {confidence}",
                scan.file,
                number + 1,
                scan.threshold
            );
            measured += 1;
            if accuracy < scan.threshold {
                failures.push(format!(
                    "{} p.{}: {accuracy:.4}\n{}",
                    scan.file,
                    number + 1,
                    document.text
                ));
            }
        }
    }
    assert!(measured > 0, "no {kind} scans were rendered");
    assert!(
        failures.is_empty(),
        "below threshold:\n{}",
        failures.join("\n")
    );
}

#[test]
fn clean_scans_are_read_at_0_97_or_better() {
    check_kind("clean");
}

#[test]
fn rotated_scans_are_read_upright_at_0_90_or_better() {
    check_kind("rotated");
}

#[test]
fn vertical_japanese_is_read_in_columns() {
    check_kind("vertical");
}

#[test]
fn noisy_low_contrast_skewed_scans_are_read_at_0_90_or_better() {
    check_kind("noisy");
}

#[test]
fn scanned_pages_and_images_are_named_like_other_documents() {
    let pdf = scan_path("scan.pdf");
    let loaded = load_file(&pdf, 7).expect("scan.pdf");
    let sources: Vec<&str> = loaded.documents.iter().map(|d| d.source.as_str()).collect();
    let name = pdf.display();
    assert_eq!(sources, [format!("{name} p.1"), format!("{name} p.2")]);
    let first = &loaded.documents[0];
    assert_eq!(first.metadata["doc_type"], "pdf");
    assert_eq!(first.metadata["ocr"], "tesseract");
    let confidence: f32 = first.metadata["ocr_confidence"].parse().expect("a number");
    assert!((80.0..=100.0).contains(&confidence), "{confidence}");

    let photo = scan_path("photo.jpg");
    let loaded = load_file(&photo, 7).expect("photo.jpg");
    let [document] = loaded.documents.as_slice() else {
        panic!("one document per image: {:?}", loaded.documents);
    };
    assert_eq!(document.source, photo.display().to_string());
    assert_eq!(document.title, "photo");
    assert_eq!(document.metadata["doc_type"], "image");
    assert_eq!(document.modified, 7);

    let tiff = scan_path("pages.tif");
    let loaded = load_file(&tiff, 0).expect("pages.tif");
    let ids: Vec<&str> = loaded.documents.iter().map(|d| d.doc_id.as_str()).collect();
    let name = tiff.display();
    assert_eq!(ids, [format!("{name}#p1"), format!("{name}#p2")]);
    assert_eq!(loaded.documents[1].metadata["pages"], "2");
}

#[test]
fn orientation_and_writing_direction_are_recorded() {
    let rotated = load_file(&scan_path("ja-rotated.png"), 0).expect("rotated");
    assert_eq!(rotated.documents[0].metadata["ocr_rotation"], "270");
    let vertical = load_file(&scan_path("ja-vertical.png"), 0).expect("vertical");
    assert_eq!(vertical.documents[0].metadata["ocr_vertical"], "true");
    let upright = load_file(&scan_path("ja-300.png"), 0).expect("upright");
    assert!(!upright.documents[0].metadata.contains_key("ocr_rotation"));
}

#[test]
fn a_huge_image_is_refused_by_its_header_and_a_truncated_one_fails_alone() {
    let error = load_file(&scan_path("huge.png"), 0).unwrap_err();
    assert!(matches!(error, IngestError::Parse { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("image of 20000 × 20000 px is over the limit"),
        "{error}"
    );
    let error = load_file(&scan_path("truncated.png"), 0).unwrap_err();
    assert!(matches!(error, IngestError::Parse { .. }), "{error}");
    assert!(error.to_string().contains("truncated.png: "), "{error}");
}

/// A text PDF whose second page also draws the JPEG scan `photo.jpg` over the whole page.
fn text_pdf_with_scan_on_page_two(pages: &[&str]) -> Vec<u8> {
    let photo = std::fs::read(scan_path("photo.jpg")).expect("photo.jpg");
    let mut pdf = lopdf::Document::load_mem(&samples::pdf(pages).expect("pdf")).expect("parse");
    let image = pdf.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => 2481, "Height" => 3507,
            "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode",
        },
        photo,
    ));
    let page_two = pdf.get_pages()[&2];
    let parent = pdf
        .get_dictionary(page_two)
        .and_then(|p| p.get(b"Parent"))
        .and_then(Object::as_reference)
        .expect("parent");
    let resources = pdf
        .get_dictionary(parent)
        .and_then(|p| p.get(b"Resources"))
        .and_then(Object::as_reference)
        .expect("resources");
    pdf.get_dictionary_mut(resources)
        .expect("resources")
        .set("XObject", dictionary! { "Im1" => image });
    let contents = pdf
        .get_dictionary(page_two)
        .and_then(|p| p.get(b"Contents"))
        .and_then(Object::as_reference)
        .expect("contents");
    let stream = pdf
        .get_object_mut(contents)
        .and_then(Object::as_stream_mut)
        .expect("stream");
    let mut content = stream.content.clone();
    content.extend_from_slice(b"\nq 595 0 0 842 0 0 cm /Im1 Do Q\n");
    stream.set_content(content);
    let mut bytes = Vec::new();
    pdf.save_to(&mut bytes).expect("save");
    bytes
}

#[test]
fn a_page_with_stray_text_over_a_scan_is_read_by_ocr_and_a_text_page_as_before() {
    let text_page = "Quarterly report: revenue grew 12% in the third quarter.";
    let bytes = text_pdf_with_scan_on_page_two(&[text_page, "3"]);
    let loaded = load_bytes(Path::new("mixed.pdf"), bytes, 0).expect("mixed.pdf");
    let [first, second] = loaded.documents.as_slice() else {
        panic!("two pages: {:?}", loaded.documents);
    };
    assert_eq!(first.text, text_page);
    assert!(!first.metadata.contains_key("ocr"));
    assert_eq!(second.source, "mixed.pdf p.2");
    assert_eq!(second.metadata["ocr"], "tesseract");
    let source = "Employees may work from home up to three days a week.";
    assert!(second.text.starts_with(source), "{}", second.text);
}

#[test]
fn a_page_with_a_full_text_layer_keeps_it_even_over_an_image() {
    let layer = "This page has its own text layer of several words, made by a scanner's OCR.";
    let bytes = text_pdf_with_scan_on_page_two(&["first page of text", layer]);
    let loaded = load_bytes(Path::new("searchable.pdf"), bytes, 0).expect("searchable.pdf");
    assert_eq!(loaded.documents[1].text, layer);
    assert!(!loaded.documents[1].metadata.contains_key("ocr"));
}
