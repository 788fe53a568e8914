//! Without its language packs the engine says what to install; in a test binary of its own, since
//! it points `TESSDATA_PREFIX`, which every engine in the process reads, at an empty folder.

use shiori_ocr::{check_engine, OcrError};

#[test]
fn missing_language_packs_name_the_packages_to_install() {
    let empty = tempfile::tempdir().expect("tempdir");
    // The only test of this binary: no other thread reads the environment meanwhile.
    std::env::set_var("TESSDATA_PREFIX", empty.path());
    let error = check_engine().unwrap_err();
    assert!(
        matches!(error, OcrError::EngineUnavailable { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("tesseract-ocr-jpn"), "{error}");
}
