//! The engine for one data directory: reads `shiori.toml`, opens the store with its embedder and
//! analyzers, runs indexing (ingest → embed → store), search, ask, and evaluation runs. The CLI
//! and the HTTP server are thin layers over it.

mod config;
mod engine;
mod error;
mod evaluation;
mod indexer;

pub use config::{Config, EmbedderConfig, EmbedderKind, EvalConfig, IngestConfig, CONFIG_FILE};
pub use engine::{load_embedder, Engine};
pub use error::EngineError;
pub use evaluation::EvalRun;
pub use indexer::{IndexFailure, IndexReport, Progress};
