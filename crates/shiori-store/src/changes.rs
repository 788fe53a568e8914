//! What a write hands a store, and what the store reports back.

use shiori_core::{Chunk, Document};
use std::time::Duration;

/// What the store remembers about an indexed file, to skip it when unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    pub path: String,
    pub content_hash: String,
    pub size: u64,
    /// The file's modification time, nanoseconds since the Unix epoch.
    pub modified_ns: i64,
    /// When the indexer read the file, nanoseconds since the Unix epoch.
    pub read_at_ns: i64,
}

/// What every backend is opened with: which embedder its vectors come from. (How text is
/// analysed is each backend's own argument: the seam names no analyzer.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    pub embedder_id: String,
    pub dimension: usize,
    /// Open a store built with another embedder so that [`reembed`] can convert it.
    pub reembed: bool,
}

/// One file's new state, applied atomically by [`DocumentStore::apply`].
pub enum FileChange {
    Upsert {
        file: FileRecord,
        documents: Vec<Document>,
        chunks: Vec<(Chunk, Vec<f32>)>,
    },
    Remove {
        path: String,
    },
    /// The file's content is what the store holds; only its stamps moved.
    Touch {
        file: FileRecord,
    },
    /// More records of a file written in parts (a large JSONL file): the first part is an
    /// `Upsert` whose record carries [`partial_hash`], later parts add to it, and `Seal`
    /// records its real hash once the last part is in. A crash in between leaves a hash no
    /// file has, so the next run indexes the file again.
    Append {
        path: String,
        documents: Vec<Document>,
        chunks: Vec<(Chunk, Vec<f32>)>,
    },
    /// The file's real hash and stamps, after its last part.
    Seal {
        file: FileRecord,
    },
}

/// The content hash a file written in parts carries until it is sealed.
pub fn partial_hash(content_hash: &str) -> String {
    format!("partial:{content_hash}")
}

/// A document that was not stored because another file (or an earlier record) holds its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateDocument {
    pub doc_id: String,
    pub path: String,
    pub existing_path: String,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ApplyReport {
    pub chunks_added: usize,
    pub chunks_removed: usize,
    pub duplicates: Vec<DuplicateDocument>,
    pub timings: WriteTimings,
}

/// Where a write's time went, for the indexing report and `shiori bench scale`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WriteTimings {
    /// The tables (documents, chunks, vectors), in their transaction.
    pub tables: Duration,
    /// Handing chunks to the BM25 index (the embedded store's tantivy).
    pub keywords: Duration,
    /// Inserting vectors into the HNSW graph (the embedded store's usearch).
    pub vectors: Duration,
}

impl WriteTimings {
    pub fn absorb(&mut self, other: WriteTimings) {
        self.tables += other.tables;
        self.keywords += other.keywords;
        self.vectors += other.vectors;
    }
}
