//! The seam between the engine and a store backend: everything indexing, retrieval and
//! migration ask of a store, whether it is the embedded one or a database server.

use crate::{ApplyReport, FileChange, FileRecord, StoreError, StoreStats};
use shiori_core::{Access, Chunk, Document, Filters};
use std::collections::HashMap;

/// A file as stored, with its documents and its chunks' vectors: what moves between backends
/// without re-embedding. Documents carry no text (stores keep only their chunks' text).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFile {
    pub file: FileRecord,
    pub documents: Vec<Document>,
    pub chunks: Vec<(Chunk, Vec<f32>)>,
}

impl From<StoredFile> for FileChange {
    fn from(stored: StoredFile) -> FileChange {
        FileChange::Upsert {
            file: stored.file,
            documents: stored.documents,
            chunks: stored.chunks,
        }
    }
}

/// Documents, chunks, their vectors and keyword terms, keyed by a store-assigned chunk key.
pub trait DocumentStore: Send + Sync {
    /// Claims the right to write ahead of a write, so that a writer this backend cannot run
    /// beside another fails here, before changing anything, and not half-way.
    fn lock_for_writing(&mut self) -> Result<(), StoreError>;
    /// Every stored file's state by path, to decide which files changed: one read per run,
    /// not one round trip per file.
    fn file_records(&self) -> Result<HashMap<String, FileRecord>, StoreError>;
    /// The project (`project` metadata) a stored file was indexed through, if any.
    fn file_project(&self, path: &str) -> Result<Option<String>, StoreError>;
    /// Every indexed file path, sorted; with filters, the files holding a chunk they accept.
    fn file_paths(&self, filters: &Filters) -> Result<Vec<String>, StoreError>;
    /// A file with its documents and chunks (vectors included), for migration.
    fn stored_file(&self, path: &str) -> Result<Option<StoredFile>, StoreError>;
    /// Applies file changes atomically; durable in the source of truth at return.
    fn apply(&mut self, changes: Vec<FileChange>) -> Result<ApplyReport, StoreError>;
    /// Makes everything applied so far durable and searchable.
    fn commit(&mut self) -> Result<(), StoreError>;
    /// Freezes what this store answers from at what is committed now, for a store that only
    /// serves reads while another one writes.
    fn pin_snapshot(&self) -> Result<(), StoreError>;
    /// How many commits the store has seen, read now and past any pinned snapshot: a store
    /// that pinned its view compares it with the count it pinned at to learn that another
    /// process (`shiori index`) committed since. `None` where every read already sees the
    /// latest commit.
    fn commits(&self) -> Result<Option<u64>, StoreError>;
    /// Chunks by store key, in the order given; keys no longer stored are skipped.
    fn chunks(&self, keys: &[u64]) -> Result<Vec<(u64, Chunk)>, StoreError>;
    /// Every chunk of a document, in order.
    fn document_chunks(&self, doc_id: &str) -> Result<Vec<Chunk>, StoreError>;
    /// Keys of the chunks that pass `filters`.
    fn keys_matching(&self, filters: &Filters) -> Result<Vec<u64>, StoreError>;
    /// The `k` chunks nearest to `query` by cosine similarity among those `filters` accept,
    /// best first.
    fn dense_search(
        &self,
        query: &[f32],
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<(u64, f32)>, StoreError>;
    /// The `k` best chunks for `query` by BM25 over Shiori's analyzers, among those `filters`
    /// accept, best first.
    fn keyword_search(
        &self,
        query: &str,
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<(u64, f32)>, StoreError>;
    /// The cosine [`dense_search`](Self::dense_search) gives each of `keys` for `query`, for
    /// fusion to score a candidate the dense search did not return. Keys no longer stored are
    /// left out.
    fn dense_scores(&self, query: &[f32], keys: &[u64]) -> Result<Vec<(u64, f32)>, StoreError>;
    /// The BM25 score [`keyword_search`](Self::keyword_search) gives each of `keys` for
    /// `query` in a search as `access`, for fusion to score a candidate the keyword search did
    /// not return. Keys that match no term of the query (their score is 0) and keys no longer
    /// stored are left out.
    fn keyword_scores(
        &self,
        query: &str,
        keys: &[u64],
        access: &Access,
    ) -> Result<Vec<(u64, f32)>, StoreError>;
    /// `(key, content_hash, embedding input)` of every chunk, for re-embedding.
    fn embedding_inputs(&self) -> Result<Vec<(u64, String, String)>, StoreError>;
    /// Swaps in new vectors for every chunk at once and adopts the configured embedder.
    fn replace_vectors(&mut self, vectors: &[(u64, Vec<f32>)]) -> Result<(), StoreError>;
    /// The index's description, with the files, documents and chunks `filters` accepts (a
    /// reader's counts leave out what it may not read).
    fn stats(&self, filters: &Filters) -> Result<StoreStats, StoreError>;
}

/// Replaces every chunk's vector with `embed(inputs)` (given `(content_hash, embedding input)`
/// pairs, `batch` at a time) and adopts the configured embedder. The vectors are swapped in one
/// transaction, so a failure leaves the old embedder in place.
pub fn reembed<E: From<StoreError>>(
    store: &mut dyn DocumentStore,
    batch: usize,
    mut embed: impl FnMut(&[(&str, &str)]) -> Result<Vec<Vec<f32>>, E>,
) -> Result<usize, E> {
    let chunks = store.embedding_inputs()?;
    let mut vectors = Vec::with_capacity(chunks.len());
    for group in chunks.chunks(batch.max(1)) {
        let items: Vec<(&str, &str)> = group
            .iter()
            .map(|(_, hash, text)| (hash.as_str(), text.as_str()))
            .collect();
        let embedded = embed(&items)?;
        vectors.extend(group.iter().map(|(key, _, _)| *key).zip(embedded));
    }
    store.replace_vectors(&vectors)?;
    Ok(vectors.len())
}
