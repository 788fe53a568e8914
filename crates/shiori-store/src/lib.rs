//! The storage seam: what the engine asks of any store backend ([`DocumentStore`],
//! [`ConversationStore`]), the changes a write hands it, what it reports, and [`StoreError`].
//! It names no backend: the embedded store (`shiori-store-embedded`: SQLite, tantivy, usearch)
//! and PostgreSQL (`shiori-store-postgres`) each implement it in their own crate. With the
//! `conformance` feature it also carries the checks every backend's tests run.

mod changes;
#[cfg(feature = "conformance")]
pub mod conformance;
mod conversations;
mod document_store;
mod error;
mod stats;

pub use changes::{
    partial_hash, ApplyReport, DuplicateDocument, FileChange, FileRecord, StoreOptions,
    WriteTimings,
};
pub use conversations::{stored_id, ConversationStore};
pub use document_store::{reembed, DocumentStore, StoredFile};
pub use error::StoreError;
pub use stats::{ReplicaStatus, StoreStats};
