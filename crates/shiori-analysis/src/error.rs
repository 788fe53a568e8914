use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why a dictionary could not be built or loaded.
#[derive(Debug, Error)]
pub enum AnalysisError {
    #[error("I/O failed at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no *.csv lexicon files in {0}")]
    NoLexicon(PathBuf),
    #[error("dictionary {path} is invalid: {message}")]
    Dictionary { path: PathBuf, message: String },
}

pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> AnalysisError + '_ {
    move |source| AnalysisError::Io {
        path: path.to_path_buf(),
        source,
    }
}
