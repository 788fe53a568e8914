//! The engine on real scans, rendered by the OCR tests' script in shiori-ingest (Pillow): what
//! it reads, how it reports the page, and its bounds. Missing Python, Pillow or Tesseract's
//! language packs fail these tests.

use shiori_ocr::{check_engine, page_count, recognize, OcrError, OcrSettings, PageImage};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

fn scans() -> &'static PathBuf {
    static RENDERED: OnceLock<PathBuf> = OnceLock::new();
    RENDERED.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ocr-engine-scans");
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shiori-ingest/tests/scans/render_scans.py");
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
        dir
    })
}

fn scan(name: &str) -> Vec<u8> {
    std::fs::read(scans().join(name)).expect("rendered scan")
}

fn page(bytes: &[u8]) -> PageImage<'_> {
    PageImage {
        bytes,
        page: 0,
        dpi: None,
    }
}

#[test]
fn the_languages_are_installed() {
    check_engine().expect("Tesseract starts with jpn+jpn_vert+eng");
}

#[test]
fn a_japanese_scan_is_read_without_spaces_between_characters() {
    let bytes = scan("ja-300.png");
    let read = recognize(page(&bytes), &OcrSettings::default()).expect("read");
    assert!(read.text.contains("梅雨明けといい"), "{}", read.text);
    assert!(!read.text.contains("梅 雨"), "{}", read.text);
    assert!(read.mean_confidence > 80.0, "{}", read.mean_confidence);
    assert!(read.words_kept > 10);
    assert_eq!((read.rotation_degrees, read.vertical), (0, false));
}

#[test]
fn every_page_of_a_tiff_is_read() {
    let bytes = scan("pages.tif");
    assert_eq!(page_count(&bytes), Ok(2));
    let second = PageImage {
        page: 1,
        ..page(&bytes)
    };
    let read = recognize(second, &OcrSettings::default()).expect("read");
    assert!(
        read.text.starts_with("The quarterly report"),
        "{}",
        read.text
    );
    let third = PageImage {
        page: 2,
        ..page(&bytes)
    };
    let missing = recognize(third, &OcrSettings::default()).unwrap_err();
    assert_eq!(missing, OcrError::NoSuchPage { page: 2, pages: 2 });
}

#[test]
fn a_page_over_its_time_limit_is_given_up() {
    let bytes = scan("ja-300.png");
    let hurried = OcrSettings {
        page_time_limit: Duration::from_millis(1),
        ..OcrSettings::default()
    };
    let error = recognize(page(&bytes), &hurried).unwrap_err();
    assert_eq!(error, OcrError::TimedOut(Duration::from_millis(1)));
}

#[test]
fn a_pixel_limit_refuses_the_page_before_it_is_decoded() {
    let bytes = scan("ja-300.png");
    let small = OcrSettings {
        max_pixels: 1_000_000,
        ..OcrSettings::default()
    };
    let error = recognize(page(&bytes), &small).unwrap_err();
    assert!(
        matches!(
            error,
            OcrError::TooLarge {
                width: 2481,
                height: 3507,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_truncated_image_is_reported_as_undecodable() {
    let bytes = scan("truncated.png");
    let error = recognize(page(&bytes), &OcrSettings::default()).unwrap_err();
    assert_eq!(error, OcrError::Undecodable);
}
