//! The embedded store backend: one data directory. SQLite holds documents, chunks and their
//! vectors and is the source of truth; the BM25 index (tantivy) and the vector index (usearch)
//! are derived from it, checksummed at every commit and rebuilt whenever a crash or a damaged
//! file may have left them behind. It implements the seam of `shiori-store`.

mod conversations;
mod error;
mod keyword;
mod reader_statistics;
mod snapshot;
mod tables;
mod vectors;

pub use conversations::SqliteConversations;
pub use error::{AllowedKeys, IndexError};
pub use keyword::TantivyKeywordIndex;
pub use reader_statistics::ReaderStatistics;
pub use snapshot::{inspect, snapshot, Inspection, Snapshot};
pub use vectors::UsearchIndex;

use error::{sqlite, SqliteError};
use rusqlite::{Connection, Transaction};
use shiori_analysis::JapaneseTokenization;
use shiori_core::{Access, Chunk, Document, Filters};
use shiori_store::{
    ApplyReport, DocumentStore, DuplicateDocument, FileChange, FileRecord, StoreError,
    StoreOptions, StoreStats, StoredFile,
};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How many files, documents and chunks a reader may see.
pub(crate) struct Counts {
    pub files: u64,
    pub documents: u64,
    pub chunks: u64,
}

/// A reader's BM25 statistics and the index generation they describe.
type ComputedStatistics = (u64, Arc<ReaderStatistics>);

const DIRTY: &str = "derived_dirty";
/// How many times the derived indexes were committed consistent with the tables.
const COMMITS: &str = "commits";
pub(crate) const TABLES_FILE: &str = "shiori.sqlite";
/// The size and CRC-32 `vectors.usearch` had when last committed.
const VECTORS_CHECKSUM: &str = "vectors_checksum";
/// Why the derived indexes were last rebuilt at open, and when.
const LAST_REBUILD: &str = "last_rebuild";
const REBUILD_BATCH: usize = 2_048;

/// The embedded store: one data directory holding `shiori.sqlite`, `bm25/` and `vectors.usearch`.
pub struct EmbeddedStore {
    connection: Mutex<Connection>,
    keywords: TantivyKeywordIndex,
    vectors: UsearchIndex,
    options: StoreOptions,
    japanese: JapaneseTokenization,
    dir: PathBuf,
    /// The keys each set of readable groups may read, computed once: a reader's filter is then
    /// a set lookup, not a table scan per search. Cleared by every write. A store that misses a
    /// write by another process keeps an older set, which can only lack new keys (keys are
    /// never reused).
    readable: Mutex<HashMap<BTreeSet<String>, AllowedKeys>>,
    /// Each set of readable groups' BM25 statistics, with the index generation they describe.
    statistics: Mutex<HashMap<BTreeSet<String>, ComputedStatistics>>,
}

impl EmbeddedStore {
    /// Opens or creates the store in `dir`, rebuilding the derived indexes if an earlier run
    /// stopped before making them consistent with the tables.
    pub fn open(
        dir: &Path,
        options: StoreOptions,
        japanese: JapaneseTokenization,
    ) -> Result<EmbeddedStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
            path: dir.display().to_string(),
            source,
        })?;
        let connection = tables::open(&dir.join(TABLES_FILE))?;
        if !options.reembed {
            check_embedder(&connection, &options)?;
        }
        let keywords = TantivyKeywordIndex::open(&dir.join("bm25"), &japanese)?;
        let vectors = UsearchIndex::open(&dir.join("vectors.usearch"), options.dimension)?;
        let mut store = EmbeddedStore {
            connection: Mutex::new(connection),
            keywords,
            vectors,
            options,
            japanese,
            dir: dir.to_path_buf(),
            readable: Mutex::new(HashMap::new()),
            statistics: Mutex::new(HashMap::new()),
        };
        // A store opened to be re-embedded is rebuilt by `reembed`; its old vectors may not
        // even fit the new dimension.
        if store.options.reembed {
            return Ok(store);
        }
        if let Some(reason) = store.rebuild_reason()? {
            // Another process holding the writer lock is in the middle of a write (`shiori index
            // --watch`, a server's reindex) and brings the indexes up to date itself: read them
            // as they are rather than fail.
            if store.keywords.try_lock_writer()? {
                // A writer may have committed between the indexes' load and the check: with
                // the lock held nothing moves, so the reason is read again.
                let Some(reason) = store.rebuild_reason()? else {
                    store.keywords.release_writer();
                    return Ok(store);
                };
                tracing::warn!("{reason}; rebuilding them from the tables");
                store.rebuild_derived()?;
                let seconds = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |elapsed| elapsed.as_secs());
                let note = format!("{reason}; rebuilt from the tables at unix time {seconds}");
                tables::set_meta(&*store.connection()?, LAST_REBUILD, &note)?;
            } else {
                tracing::warn!(
                    "{reason}, but another process is writing this index; reading it as it is"
                );
            }
        }
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn connection(&self) -> Result<std::sync::MutexGuard<'_, Connection>, StoreError> {
        self.connection.lock().map_err(|_| StoreError::Poisoned)
    }

    /// Why the derived indexes cannot be served as they are: a write stopped before they were
    /// consistent with the tables, they hold another number of chunks, or a file's bytes no
    /// longer match the checksum written at commit. `None` when they can.
    fn rebuild_reason(&self) -> Result<Option<String>, SqliteError> {
        let started = std::time::Instant::now();
        let reason = self.rebuild_reason_now()?;
        tracing::debug!(
            "derived indexes checked against the tables and their checksums in {:.1} ms",
            started.elapsed().as_secs_f64() * 1000.0
        );
        Ok(reason)
    }

    fn rebuild_reason_now(&self) -> Result<Option<String>, SqliteError> {
        let connection = self.connection()?;
        if tables::get_meta(&connection, DIRTY)?.as_deref() == Some("1") {
            return Ok(Some(
                "a write stopped before the derived indexes caught up".into(),
            ));
        }
        let chunks = tables::count(&connection, "chunks")? as usize;
        let counts_match = !(self.keywords.was_reset() && chunks > 0)
            && self.keywords.len() == chunks
            && self.vectors.len() == chunks;
        if !counts_match {
            return Ok(Some("the derived indexes are behind the tables".into()));
        }
        let committed = tables::get_meta(&connection, VECTORS_CHECKSUM)?;
        if committed.is_some() && committed != self.vectors.file_checksum()? {
            return Ok(Some(
                "vectors.usearch does not match the checksum written at its last commit".into(),
            ));
        }
        let damaged = self.keywords.damaged_files()?;
        if !damaged.is_empty() {
            return Ok(Some(format!(
                "BM25 files do not match their checksums: {}",
                damaged.join(", ")
            )));
        }
        Ok(None)
    }

    /// Re-derives BM25 and vectors from the tables, then marks them consistent.
    pub fn rebuild_derived(&mut self) -> Result<(), StoreError> {
        let connection = self
            .connection
            .get_mut()
            .map_err(|_| StoreError::Poisoned)?;
        self.keywords.clear()?;
        self.vectors.clear()?;
        tables::for_each_chunk_batch(connection, REBUILD_BATCH, |batch| {
            let texts: Vec<(u64, &str, &str)> = batch
                .iter()
                .map(|c| (c.key, c.title.as_str(), c.text.as_str()))
                .collect();
            self.keywords.add(&texts)?;
            let vectors: Vec<(u64, Vec<f32>)> =
                batch.into_iter().map(|c| (c.key, c.vector)).collect();
            self.vectors.upsert(&vectors)?;
            Ok(())
        })?;
        self.commit()
    }

    fn swap_vectors(&mut self, vectors: &[(u64, Vec<f32>)]) -> Result<(), SqliteError> {
        let transaction = begin_dirty_write(&mut self.connection)?;
        tables::update_vectors(&transaction, vectors)?;
        record_embedder(&transaction, &self.options)?;
        transaction.commit()?;
        Ok(())
    }

    /// The vector index derived from the tables.
    pub fn vectors(&self) -> &UsearchIndex {
        &self.vectors
    }

    /// The BM25 index derived from the tables.
    pub fn keywords(&self) -> &TantivyKeywordIndex {
        &self.keywords
    }

    fn allowed_keys(&self, filters: &Filters) -> Result<Option<AllowedKeys>, StoreError> {
        if filters.is_empty() {
            return Ok(None);
        }
        let only_access = Filters {
            access: Access::Everything,
            ..filters.clone()
        }
        .is_empty();
        match filters.access.groups() {
            Some(groups) if only_access => self.readable_keys(groups, filters).map(Some),
            _ => Ok(Some(Arc::new(
                self.keys_matching(filters)?.into_iter().collect(),
            ))),
        }
    }

    fn readable_keys(
        &self,
        groups: &BTreeSet<String>,
        filters: &Filters,
    ) -> Result<AllowedKeys, StoreError> {
        if let Some(keys) = self.readable_cache()?.get(groups) {
            return Ok(Arc::clone(keys));
        }
        let keys: AllowedKeys = Arc::new(self.keys_matching(filters)?.into_iter().collect());
        self.readable_cache()?
            .insert(groups.clone(), Arc::clone(&keys));
        Ok(keys)
    }

    /// The statistics BM25 scores the searches of a reader limited to `access` with: for a
    /// reader limited to groups, its own, so chunks it cannot read do not move its scores (see
    /// [`ReaderStatistics`]), computed once per index generation and set of groups; `None`
    /// (the index's) for a reader of everything.
    fn reader_statistics(
        &self,
        access: &Access,
    ) -> Result<Option<Arc<ReaderStatistics>>, StoreError> {
        let Some(groups) = access.groups() else {
            return Ok(None);
        };
        let generation = self.keywords.generation();
        let cache = || self.statistics.lock().map_err(|_| StoreError::Poisoned);
        if let Some((computed_on, statistics)) = cache()?.get(groups) {
            if *computed_on == generation {
                return Ok(Some(Arc::clone(statistics)));
            }
        }
        let only_access = Filters {
            access: access.clone(),
            ..Filters::default()
        };
        let readable = self.readable_keys(groups, &only_access)?;
        let statistics = Arc::new(self.keywords.reader_statistics(&readable)?);
        cache()?.insert(groups.clone(), (generation, Arc::clone(&statistics)));
        Ok(Some(statistics))
    }

    fn readable_cache(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, HashMap<BTreeSet<String>, AllowedKeys>>, StoreError> {
        self.readable.lock().map_err(|_| StoreError::Poisoned)
    }
}

impl DocumentStore for EmbeddedStore {
    /// Takes tantivy's writer lock, which a second process writing the same directory holds.
    fn lock_for_writing(&mut self) -> Result<(), StoreError> {
        if self.keywords.try_lock_writer()? {
            Ok(())
        } else {
            Err(StoreError::Busy {
                path: self.dir.display().to_string(),
            })
        }
    }

    fn file_records(&self) -> Result<HashMap<String, FileRecord>, StoreError> {
        sqlite(|| tables::file_records(&*self.connection()?))
    }

    fn file_project(&self, path: &str) -> Result<Option<String>, StoreError> {
        sqlite(|| tables::file_project(&*self.connection()?, path))
    }

    fn file_paths(&self, filters: &Filters) -> Result<Vec<String>, StoreError> {
        sqlite(|| tables::file_paths(&*self.connection()?, filters))
    }

    fn stored_file(&self, path: &str) -> Result<Option<StoredFile>, StoreError> {
        sqlite(|| {
            let connection = self.connection()?;
            let Some(file) = tables::file_record(&connection, path)? else {
                return Ok(None);
            };
            let documents = tables::documents_of_file(&connection, path)?;
            let mut chunks = Vec::new();
            for document in &documents {
                chunks.extend(tables::chunks_with_vectors(&connection, &document.doc_id)?);
            }
            Ok(Some(StoredFile {
                file,
                documents,
                chunks,
            }))
        })
    }

    /// Applies file changes in one transaction and feeds the derived indexes. Durable in the
    /// tables at return; [`DocumentStore::commit`] makes the derived indexes durable too.
    #[tracing::instrument(name = "store.apply", skip_all, fields(changes = changes.len()))]
    fn apply(&mut self, changes: Vec<FileChange>) -> Result<ApplyReport, StoreError> {
        sqlite(|| {
            let mut report = ApplyReport::default();
            let mut removed_keys = Vec::new();
            let mut added: Vec<(u64, Chunk, Vec<f32>)> = Vec::new();
            let started = Instant::now();
            {
                let transaction = begin_dirty_write(&mut self.connection)?;
                for change in changes {
                    match change {
                        FileChange::Remove { path } => {
                            removed_keys.extend(tables::delete_file(&transaction, &path)?);
                        }
                        FileChange::Touch { file } => tables::touch_file(&transaction, &file)?,
                        FileChange::Seal { file } => tables::seal_file(&transaction, &file)?,
                        FileChange::Upsert {
                            file,
                            documents,
                            chunks,
                        } => {
                            removed_keys.extend(tables::delete_file(&transaction, &file.path)?);
                            tables::insert_file(&transaction, &file)?;
                            added.extend(insert_records(
                                &transaction,
                                &file.path,
                                documents,
                                chunks,
                                &mut report,
                            )?);
                        }
                        FileChange::Append {
                            path,
                            documents,
                            chunks,
                        } => added.extend(insert_records(
                            &transaction,
                            &path,
                            documents,
                            chunks,
                            &mut report,
                        )?),
                    }
                }
                transaction.commit()?;
            }
            report.timings.tables = started.elapsed();
            self.readable_cache()?.clear();
            report.chunks_removed = removed_keys.len();
            report.chunks_added = added.len();
            let started = Instant::now();
            self.keywords.remove(&removed_keys)?;
            let texts: Vec<(u64, &str, &str)> = added
                .iter()
                .map(|(key, chunk, _)| (*key, chunk.title.as_str(), chunk.text.as_str()))
                .collect();
            self.keywords.add(&texts)?;
            report.timings.keywords = started.elapsed();
            let started = Instant::now();
            self.vectors.remove(&removed_keys)?;
            let vectors: Vec<(u64, Vec<f32>)> = added
                .into_iter()
                .map(|(key, _, vector)| (key, vector))
                .collect();
            self.vectors.upsert(&vectors)?;
            report.timings.vectors = started.elapsed();
            Ok(report)
        })
    }

    /// Makes the derived indexes durable and marks them consistent with the tables.
    #[tracing::instrument(name = "store.commit", skip_all)]
    fn commit(&mut self) -> Result<(), StoreError> {
        sqlite(|| {
            self.keywords.persist()?;
            self.vectors.persist()?;
            let connection = self.connection()?;
            if let Some(checksum) = self.vectors.file_checksum()? {
                tables::set_meta(&connection, VECTORS_CHECKSUM, &checksum)?;
            }
            let transaction = connection.unchecked_transaction()?;
            tables::set_meta(&transaction, DIRTY, "0")?;
            tables::count_commit(&transaction, COMMITS)?;
            transaction.commit()?;
            Ok(())
        })
    }

    /// Holds a read transaction until the store is dropped: another store writing the same
    /// directory (a server's reindex) then changes nothing this one answers from, just as its
    /// BM25 and vector indexes stay as loaded.
    fn pin_snapshot(&self) -> Result<(), StoreError> {
        sqlite(|| {
            let connection = self.connection()?;
            connection.execute_batch("BEGIN DEFERRED")?;
            // A deferred transaction takes its snapshot at its first read.
            tables::count(&connection, "chunks")?;
            Ok(())
        })
    }

    /// Read on a connection of its own: the store's may hold a pinned snapshot.
    fn commits(&self) -> Result<Option<u64>, StoreError> {
        sqlite(|| {
            let latest = tables::open_read_only(&self.dir.join(TABLES_FILE))?;
            let commits = tables::get_meta(&latest, COMMITS)?;
            Ok(Some(
                commits.and_then(|count| count.parse().ok()).unwrap_or(0),
            ))
        })
    }

    #[tracing::instrument(name = "store.read_chunks", skip_all, fields(keys = keys.len()))]
    fn chunks(&self, keys: &[u64]) -> Result<Vec<(u64, Chunk)>, StoreError> {
        sqlite(|| tables::chunks_by_keys(&*self.connection()?, keys))
    }

    fn document_chunks(&self, doc_id: &str) -> Result<Vec<Chunk>, StoreError> {
        sqlite(|| tables::chunks_of_document(&*self.connection()?, doc_id))
    }

    fn keys_matching(&self, filters: &Filters) -> Result<Vec<u64>, StoreError> {
        sqlite(|| tables::keys_matching(&*self.connection()?, filters))
    }

    #[tracing::instrument(name = "store.dense_search", skip_all)]
    fn dense_search(
        &self,
        query: &[f32],
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let allowed = self.allowed_keys(filters)?;
        let allow = allowed
            .as_ref()
            .map(|set| move |key: u64| set.contains(&key));
        let allow_dyn: Option<&(dyn Fn(u64) -> bool + Sync)> =
            allow.as_ref().map(|f| f as &(dyn Fn(u64) -> bool + Sync));
        Ok(self.vectors.search(query, k, allow_dyn)?)
    }

    #[tracing::instrument(name = "store.keyword_search", skip_all)]
    fn keyword_search(
        &self,
        query: &str,
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let allowed = self.allowed_keys(filters)?;
        let reader = self.reader_statistics(&filters.access)?;
        Ok(self
            .keywords
            .search_as(query, k, allowed.as_ref(), reader.as_deref())?)
    }

    fn dense_scores(&self, query: &[f32], keys: &[u64]) -> Result<Vec<(u64, f32)>, StoreError> {
        Ok(self.vectors.scores(query, keys)?)
    }

    fn keyword_scores(
        &self,
        query: &str,
        keys: &[u64],
        access: &Access,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let reader = self.reader_statistics(access)?;
        Ok(self.keywords.scores(query, keys, reader.as_deref())?)
    }

    fn embedding_inputs(&self) -> Result<Vec<(u64, String, String)>, StoreError> {
        sqlite(|| tables::chunk_texts(&*self.connection()?))
    }

    /// Swaps the vectors in one transaction, then rebuilds the derived indexes from them.
    fn replace_vectors(&mut self, vectors: &[(u64, Vec<f32>)]) -> Result<(), StoreError> {
        self.swap_vectors(vectors)?;
        self.rebuild_derived()
    }

    fn stats(&self, filters: &Filters) -> Result<StoreStats, StoreError> {
        sqlite(|| {
            let connection = self.connection()?;
            let counts = if filters.is_empty() {
                Counts {
                    files: tables::count(&connection, "files")?,
                    documents: tables::count(&connection, "documents")?,
                    chunks: tables::count(&connection, "chunks")?,
                }
            } else {
                tables::counts_matching(&connection, filters)?
            };
            Ok(StoreStats {
                files: counts.files,
                documents: counts.documents,
                chunks: counts.chunks,
                embedder: self.options.embedder_id.clone(),
                dimension: self.options.dimension,
                japanese_analyzer: shiori_analysis::japanese_analyzer_name(&self.japanese)
                    .to_string(),
                vector_index: "usearch-hnsw (exact below 20k vectors)".to_string(),
                keyword_index: "tantivy".to_string(),
                last_rebuild: tables::get_meta(&connection, LAST_REBUILD)?,
                replicas: Vec::new(),
            })
        })
    }
}

/// Stores a file's documents, skipping (and reporting) those another file already holds, then
/// the chunks of the documents it stored; yields each stored chunk with its new key.
fn insert_records(
    transaction: &Transaction,
    path: &str,
    documents: Vec<Document>,
    chunks: Vec<(Chunk, Vec<f32>)>,
    report: &mut ApplyReport,
) -> Result<Vec<(u64, Chunk, Vec<f32>)>, SqliteError> {
    let mut stored_docs = HashSet::new();
    for document in documents {
        if let Some(existing_path) = tables::document_owner(transaction, &document.doc_id)? {
            report.duplicates.push(DuplicateDocument {
                doc_id: document.doc_id,
                path: path.to_string(),
                existing_path,
            });
            continue;
        }
        tables::insert_document(transaction, path, &document)?;
        stored_docs.insert(document.doc_id);
    }
    let mut stored = Vec::with_capacity(chunks.len());
    for (chunk, vector) in chunks {
        if stored_docs.contains(&chunk.doc_id) {
            let key = tables::insert_chunk(transaction, &chunk, &vector)?;
            stored.push((key, chunk, vector));
        }
    }
    Ok(stored)
}

/// The embedder and vector size the store in `dir` was built with, if there is one.
pub fn stored_embedder(dir: &Path) -> Result<Option<(String, usize)>, StoreError> {
    let path = dir.join(TABLES_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let connection = tables::open(&path)?;
    let embedder = tables::get_meta(&connection, "embedder")?;
    let dimension = tables::get_meta(&connection, "dimension")?.and_then(|d| d.parse().ok());
    Ok(embedder.zip(dimension))
}

/// Starts a write transaction that marks the derived indexes stale until
/// [`DocumentStore::commit`].
fn begin_dirty_write(connection: &mut Mutex<Connection>) -> Result<Transaction<'_>, SqliteError> {
    let connection = connection.get_mut().map_err(|_| StoreError::Poisoned)?;
    let transaction = connection.transaction()?;
    tables::set_meta(&transaction, DIRTY, "1")?;
    Ok(transaction)
}

/// Refuses to mix vectors from two embedders; an empty store adopts the configured one.
fn check_embedder(connection: &Connection, options: &StoreOptions) -> Result<(), SqliteError> {
    let stored = tables::get_meta(connection, "embedder")?;
    let chunks = tables::count(connection, "chunks")?;
    match stored {
        Some(stored) if stored != options.embedder_id && chunks > 0 => {
            Err(SqliteError::Store(StoreError::EmbedderMismatch {
                stored,
                requested: options.embedder_id.clone(),
            }))
        }
        _ => record_embedder(connection, options),
    }
}

fn record_embedder(connection: &Connection, options: &StoreOptions) -> Result<(), SqliteError> {
    tables::set_meta(connection, "embedder", &options.embedder_id)?;
    tables::set_meta(connection, "dimension", &options.dimension.to_string())
}
