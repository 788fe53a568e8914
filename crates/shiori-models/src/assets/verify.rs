//! Whether each asset is in a home and holds the bytes that were pinned, for `shiori doctor`:
//! a model present but damaged or swapped loads, or fails, far from its cause.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::gguf::{GgufAsset, QWEN_CODER, SMOLLM2};
use super::pinned_wheel::WheelModel;
use super::wheel::verify_sha256;
use super::{ShioriHome, E5, MINILM};

/// What was found of one asset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum AssetState {
    /// Present, and every pinned checksum matches.
    Verified,
    Missing,
    /// Present, but a file is missing or its bytes are not the pinned ones.
    Damaged(String),
}

/// One asset as `shiori doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssetCheck {
    pub name: &'static str,
    pub path: PathBuf,
    pub state: AssetState,
    /// The command that installs it.
    pub fix: &'static str,
}

const FETCH_DEFAULT: &str = "shiori models fetch";

/// Checks every asset Shiori can fetch against its pinned checksums (the models' weights are
/// hashed whole: about a second for the default set).
pub fn verify_assets(home: &ShioriHome) -> Vec<AssetCheck> {
    let dictionary = home.ipadic_dictionary();
    vec![
        wheel_check(&E5, home.e5_dir()),
        wheel_check(&MINILM, home.minilm_dir()),
        AssetCheck {
            name: "ipadic (vibrato)",
            state: match dictionary.is_file() {
                true => AssetState::Verified,
                false => AssetState::Missing,
            },
            path: dictionary,
            fix: FETCH_DEFAULT,
        },
        gguf_check(home, &SMOLLM2, FETCH_DEFAULT),
        gguf_check(home, &QWEN_CODER, "shiori models fetch qwen2.5-coder-0.5b"),
    ]
}

fn wheel_check(model: &WheelModel, dir: PathBuf) -> AssetCheck {
    let state = if !dir.exists() {
        AssetState::Missing
    } else if let Some(file) = model.files.iter().find(|f| !dir.join(f).is_file()) {
        AssetState::Damaged(format!("{file} is missing"))
    } else {
        checksums_state(&dir, model.checksums)
    };
    AssetCheck {
        name: model.name,
        path: dir,
        state,
        fix: FETCH_DEFAULT,
    }
}

fn checksums_state(dir: &Path, checksums: &[(&str, &'static str)]) -> AssetState {
    for (file, sha256) in checksums {
        if let Err(error) = verify_sha256(&dir.join(file), sha256) {
            return AssetState::Damaged(error.to_string());
        }
    }
    AssetState::Verified
}

fn gguf_check(home: &ShioriHome, asset: &GgufAsset, fix: &'static str) -> AssetCheck {
    let path = home.gguf_path(asset);
    let state = match path.is_file() {
        false => AssetState::Missing,
        true => match verify_sha256(&path, asset.sha256) {
            Ok(()) => AssetState::Verified,
            Err(error) => AssetState::Damaged(error.to_string()),
        },
    };
    AssetCheck {
        name: asset.name,
        path,
        state,
        fix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_missing_and_damaged_models_with_their_fix() {
        let dir = tempfile::tempdir().unwrap();
        let home = ShioriHome(dir.path().to_path_buf());
        let checks = verify_assets(&home);
        assert!(checks.iter().all(|c| c.state == AssetState::Missing));
        assert_eq!(checks[4].fix, "shiori models fetch qwen2.5-coder-0.5b");

        std::fs::create_dir_all(home.minilm_dir()).unwrap();
        for file in MINILM.files {
            std::fs::write(home.minilm_dir().join(file), b"not the model").unwrap();
        }
        let AssetState::Damaged(detail) = &verify_assets(&home)[1].state else {
            panic!("a model with other bytes passed");
        };
        assert!(detail.contains("model.safetensors"), "{detail}");
    }
}
