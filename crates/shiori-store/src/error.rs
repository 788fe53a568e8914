//! What can go wrong in any store backend, with the backend's own error kept as the source.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    /// The backend's database (SQLite, PostgreSQL) failed, in the backend's own words.
    #[error(transparent)]
    Database(Box<dyn std::error::Error + Send + Sync>),
    /// The backend's database could not be reached, or did not answer in time: the request
    /// may succeed if retried later (a server answers 503 with `Retry-After`).
    #[error("the database is unavailable: {0}")]
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
    #[error("store metadata is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A derived index (the embedded store's BM25 or vectors) failed.
    #[error(transparent)]
    Index(Box<dyn std::error::Error + Send + Sync>),
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("store schema version {found} is not supported (this build reads {expected})")]
    SchemaVersion { found: String, expected: String },
    #[error(
        "this index was built with the embedder {stored} but {requested} is configured; \
         re-embed it with `shiori index --reembed` or pick the embedder it was built with"
    )]
    EmbedderMismatch { stored: String, requested: String },
    #[error("the store's lock was poisoned by a panic in another thread")]
    Poisoned,
    #[error(
        "another process is writing the index in {path} (`shiori index --watch`, `shiori serve` \
         or another `shiori index`); try again when it is done"
    )]
    Busy { path: String },
    /// The store holds a value no valid write could have put there.
    #[error("the store holds an invalid {what}: {source}")]
    Corrupt {
        what: &'static str,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
