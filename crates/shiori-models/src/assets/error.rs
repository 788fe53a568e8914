use std::path::PathBuf;

use thiserror::Error;

/// Why an asset could not be located, fetched or built; names the command or path involved.
#[derive(Debug, Error)]
pub enum AssetError {
    #[error("neither SHIORI_HOME nor HOME is set, so there is no place for models")]
    NoHome,
    #[error("`{command}` failed: {detail}")]
    Command { command: String, detail: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: sha256 is {actual}, expected {expected}")]
    Checksum {
        path: PathBuf,
        expected: &'static str,
        actual: String,
    },
    #[error("{path}: cannot read the archive: {detail}")]
    Archive { path: PathBuf, detail: String },
    #[error("{path} is missing after {step}")]
    Missing { path: PathBuf, step: String },
    #[error("building the dictionary {path} failed: {detail}")]
    Dictionary { path: PathBuf, detail: String },
}

/// Wraps an I/O error with the path it happened at, for `map_err`.
pub(crate) fn io_at(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> AssetError {
    let path = path.into();
    move |source| AssetError::Io { path, source }
}
