//! The embedded backend's errors: its derived indexes' ([`IndexError`]) and, inside the crate,
//! SQLite's, each handed to the seam's [`StoreError`] with its source kept.

use shiori_store::StoreError;
use thiserror::Error;

/// Why a derived index (tantivy's BM25, usearch's vectors) failed.
#[derive(Debug, Error)]
pub enum IndexError {
    #[error("vector has dimension {got}, index expects {expected}")]
    Dimension { expected: usize, got: usize },
    #[error("index I/O failed at {path}: {message}")]
    Io { path: String, message: String },
    #[error("index backend failed: {0}")]
    Backend(String),
}

/// A tantivy failure as an [`IndexError`].
pub(crate) fn backend(error: tantivy::TantivyError) -> IndexError {
    IndexError::Backend(error.to_string())
}

impl From<IndexError> for StoreError {
    fn from(error: IndexError) -> StoreError {
        StoreError::Index(Box::new(error))
    }
}

/// What the tables and conversations return inside this crate: a SQLite error keeps its type
/// until it crosses the seam (a `rusqlite::Error` cannot become a [`StoreError`] by `?`, as
/// neither type is this crate's).
#[derive(Debug, Error)]
pub(crate) enum SqliteError {
    #[error("store database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<SqliteError> for StoreError {
    fn from(error: SqliteError) -> StoreError {
        match error {
            SqliteError::Sqlite(_) => StoreError::Database(Box::new(error)),
            SqliteError::Store(error) => error,
        }
    }
}

/// Runs `body`, which may use `?` on SQLite's errors, and hands its error to the seam.
pub(crate) fn sqlite<T>(body: impl FnOnce() -> Result<T, SqliteError>) -> Result<T, StoreError> {
    body().map_err(StoreError::from)
}

impl From<serde_json::Error> for SqliteError {
    fn from(error: serde_json::Error) -> SqliteError {
        SqliteError::Store(StoreError::Json(error))
    }
}

impl From<IndexError> for SqliteError {
    fn from(error: IndexError) -> SqliteError {
        SqliteError::Store(error.into())
    }
}

/// The keys a filtered search may return, shared with the index's search threads.
pub type AllowedKeys = std::sync::Arc<std::collections::HashSet<u64>>;
