//! The engine for one data directory: reads `shiori.toml`, opens the store with its embedder and
//! analyzers, runs indexing (ingest → embed → store), search, ask, and evaluation runs. The CLI
//! and the HTTP server are thin layers over it.

mod auth;
mod backup;
mod config;
mod config_file;
mod conversation;
mod doctor;
mod embedding;
mod engine;
mod error;
mod evaluation;
mod generation;
mod groups;
mod indexer;
mod progress_counts;
mod query;
mod readers;
mod remote;
mod shown_paths;
mod sources;
mod stamp;
mod store;
mod streamed;
mod traced_chat;
mod uploads;
mod watch;

pub use auth::{AuthConfig, KeyConfig, Keyring, Reader, LEGACY_KEY_VARIABLE};
pub use backup::{
    backup, restore, BackupError, BackupReport, Manifest, ManifestFile, RestoreReport,
};
pub use config::{
    Config, EmbedderConfig, EmbedderKind, EvalConfig, IngestConfig, LlmConfig, ModelConfig,
    PipelineConfig, ProjectConfig, ProviderKind, RetryConfig, StoreConfig, StoreKind,
    TelemetryConfig, WebSearchConfig, WebSearchKind, CONFIG_FILE,
};
pub use config_file::save_chat_models;
pub use conversation::{MAX_CONVERSATIONS, MAX_TURNS};
pub use doctor::{diagnose, Check, Diagnosis, Status};
pub use embedding::{EmbedAs, MAX_EMBED_CHARS, MAX_EMBED_INPUTS};
pub use engine::{load_embedder, AskOptions, Engine};
pub use error::EngineError;
pub use evaluation::{AnswerPass, AnswerRun, EvalRun, EvalSweeps};
pub use generation::{
    adopt_installed_chat_model, answer_time_limit, build_chat_model, drop_adopted_chat_model,
    ChatModelsDropped, Generation,
};
pub use groups::{groups_file, write_groups_file};
pub use indexer::{IndexFailure, IndexReport, IndexStages, Progress};
pub use progress_counts::{PhaseProgress, ProgressCounts};
pub use query::{Question, RetrievalOverrides, MAX_QUESTION_CHARS, MAX_TOP_K};
pub use remote::SourceSync;
pub use shiori_rag::{AnswerEvent, Listener, PipelineKind};
pub use shown_paths::{without_absolute_paths, ShownPaths};
pub use sources::IndexTarget;
pub use store::{database_bytes, init_store, migrate_store, MigrationReport, StoreInit};
pub use uploads::{UploadInfo, UploadListing};
pub use watch::{WatchError, WatchPass};
