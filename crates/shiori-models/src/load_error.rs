use std::path::PathBuf;

use thiserror::Error;

/// Why a local chat model or reranker could not be loaded; always names the file at fault.
#[derive(Debug, Error)]
pub enum ModelLoadError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {detail}")]
    Invalid { path: PathBuf, detail: String },
}

impl ModelLoadError {
    pub(crate) fn invalid(path: impl Into<PathBuf>, detail: impl ToString) -> Self {
        ModelLoadError::Invalid {
            path: path.into(),
            detail: detail.to_string(),
        }
    }
}
