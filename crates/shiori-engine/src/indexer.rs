use crate::{Engine, EngineError};
use rayon::prelude::*;
use serde::Serialize;
use shiori_core::{Chunk, Document};
use shiori_ingest::{
    chunk_document, content_hash, discover, load_bytes, unix_nanos, DiscoveredFile, WalkOptions,
};
use shiori_models::embed_with_cache;
use shiori_store::{FileChange, FileRecord};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// Files loaded, chunked and stored per transaction: bounds memory and the work a crash loses.
const FILES_PER_BATCH: usize = 128;
/// Chunks embedded per cache round-trip, so a long file's progress is cached as it goes.
const CHUNKS_PER_EMBED: usize = 256;
/// The coarsest modification-time resolution of a common filesystem (FAT's two seconds): a file
/// read sooner than this after its stamp could change again without the stamp moving.
const COARSEST_MTIME_TICK_NS: i64 = 2_000_000_000;

/// Receives progress of long work; `()` ignores it.
pub trait Progress: Sync {
    fn start(&self, phase: &str, total: u64);
    fn advance(&self, done: u64);
    fn finish(&self);
}

impl Progress for () {
    fn start(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// A file or record that could not be indexed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexFailure {
    pub path: String,
    pub reason: String,
}

/// What an indexing run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IndexReport {
    pub files_seen: usize,
    pub files_indexed: usize,
    pub files_unchanged: usize,
    pub files_removed: usize,
    pub documents: usize,
    pub chunks_added: usize,
    pub chunks_removed: usize,
    /// Chunks the embedder computed in this run.
    pub chunks_embedded: usize,
    /// Chunks whose vectors came from the embedding cache.
    pub chunks_cached: usize,
    pub failures: Vec<IndexFailure>,
    pub elapsed_ms: f64,
}

enum Prepared {
    Changed(ChangedFile),
    /// The content hash matches the store's; the record carries the file's new stamps.
    Unchanged(FileRecord),
}

/// A changed file, loaded and chunked, waiting for vectors.
struct ChangedFile {
    record: FileRecord,
    documents: Vec<Document>,
    chunks: Vec<Chunk>,
    /// Records that failed inside an otherwise good file (a bad JSONL line, say).
    record_failures: Vec<IndexFailure>,
}

impl Engine {
    /// Indexes files and folders: new and changed files are (re)indexed, unchanged ones
    /// skipped, and files that vanished from under `paths` dropped. Bad files fail alone.
    pub fn index(
        &mut self,
        paths: &[PathBuf],
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        let max_file_bytes = (self.config.ingest.max_file_mb * 1024.0 * 1024.0) as u64;
        self.index_with_limit(paths, max_file_bytes, progress)
    }

    /// Indexes a corpus file the caller vouches for (an evaluation or benchmark set), so the
    /// per-file size limit meant for document folders does not apply.
    pub fn index_corpus(
        &mut self,
        corpus: &Path,
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        self.index_with_limit(&[corpus.to_path_buf()], u64::MAX, progress)
    }

    fn index_with_limit(
        &mut self,
        paths: &[PathBuf],
        max_file_bytes: u64,
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        let started = Instant::now();
        let ingest = &self.config.ingest;
        let walk = WalkOptions {
            include: ingest.include.clone(),
            exclude: ingest.exclude.clone(),
            max_file_bytes,
        };
        let (files, walk_failures) = discover(paths, &walk)?;
        let mut report = IndexReport {
            files_seen: files.len() + walk_failures.len(),
            failures: walk_failures
                .iter()
                .map(|f| IndexFailure {
                    path: f.path.display().to_string(),
                    reason: f.reason.clone(),
                })
                .collect(),
            ..IndexReport::default()
        };

        let on_disk: HashSet<String> = files
            .iter()
            .map(|f| f.path.display().to_string())
            .chain(walk_failures.iter().map(|f| f.path.display().to_string()))
            .collect();
        let removals = self.vanished_files(paths, &on_disk)?;
        report.files_removed = removals.len();
        if !removals.is_empty() {
            let applied = self.store.apply(removals)?;
            report.chunks_removed += applied.chunks_removed;
        }

        let candidates = self.changed_candidates(files)?;
        report.files_unchanged = report.files_seen - report.failures.len() - candidates.len();
        progress.start("indexing files", candidates.len() as u64);
        for batch in candidates.chunks(FILES_PER_BATCH) {
            self.index_batch(batch, &mut report)?;
            progress.advance(batch.len() as u64);
        }
        progress.finish();
        self.store.commit()?;
        report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(report)
    }

    /// Stored files under one of `paths` that are no longer on disk.
    fn vanished_files(
        &self,
        paths: &[PathBuf],
        on_disk: &HashSet<String>,
    ) -> Result<Vec<FileChange>, EngineError> {
        let roots: Vec<String> = paths
            .iter()
            .map(|p| {
                std::fs::canonicalize(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string()
            })
            .collect();
        let under_root = |stored: &str| {
            roots.iter().any(|root| {
                stored == root
                    || stored
                        .strip_prefix(root.as_str())
                        .is_some_and(|rest| rest.starts_with(std::path::MAIN_SEPARATOR))
            })
        };
        Ok(self
            .store
            .file_paths()?
            .into_iter()
            .filter(|stored| under_root(stored) && !on_disk.contains(stored))
            .map(|path| FileChange::Remove { path })
            .collect())
    }

    /// Files whose size or modification time differ from what the store remembers, or whose
    /// stamp is too close to when they were read to rule out a later edit within the same tick.
    fn changed_candidates(
        &self,
        files: Vec<DiscoveredFile>,
    ) -> Result<Vec<(DiscoveredFile, Option<FileRecord>)>, EngineError> {
        let mut candidates = Vec::new();
        for file in files {
            let record = self.store.file_record(&file.path.display().to_string())?;
            let unchanged = record.as_ref().is_some_and(|r| {
                r.size == file.size
                    && r.modified_ns == file.modified_ns
                    && r.read_at_ns.saturating_sub(r.modified_ns) >= COARSEST_MTIME_TICK_NS
            });
            if !unchanged {
                candidates.push((file, record));
            }
        }
        Ok(candidates)
    }

    fn index_batch(
        &mut self,
        batch: &[(DiscoveredFile, Option<FileRecord>)],
        report: &mut IndexReport,
    ) -> Result<(), EngineError> {
        let chunker = &self.config.chunker;
        let prepared: Vec<Result<Prepared, IndexFailure>> = batch
            .par_iter()
            .map(|(file, record)| prepare(file, record.as_ref(), chunker))
            .collect();
        let mut ready = Vec::new();
        let mut changes = Vec::with_capacity(batch.len());
        for outcome in prepared {
            match outcome {
                Ok(Prepared::Changed(file)) => ready.push(file),
                Ok(Prepared::Unchanged(file)) => {
                    report.files_unchanged += 1;
                    changes.push(FileChange::Touch { file });
                }
                Err(failure) => report.failures.push(failure),
            }
        }
        for file in ready {
            report.failures.extend(file.record_failures);
            let vectors = self.embed_chunks(&file.chunks, report)?;
            report.files_indexed += 1;
            report.documents += file.documents.len();
            changes.push(FileChange::Upsert {
                file: file.record,
                documents: file.documents,
                chunks: file.chunks.into_iter().zip(vectors).collect(),
            });
        }
        let applied = self.store.apply(changes)?;
        report.chunks_added += applied.chunks_added;
        report.chunks_removed += applied.chunks_removed;
        report
            .failures
            .extend(applied.duplicates.into_iter().map(|d| IndexFailure {
                path: d.path,
                reason: format!(
                    "document id {:?} is already indexed from {}; skipped",
                    d.doc_id, d.existing_path
                ),
            }));
        Ok(())
    }

    fn embed_chunks(
        &self,
        chunks: &[Chunk],
        report: &mut IndexReport,
    ) -> Result<Vec<Vec<f32>>, EngineError> {
        let mut vectors = Vec::with_capacity(chunks.len());
        for group in chunks.chunks(CHUNKS_PER_EMBED) {
            let inputs: Vec<String> = group.iter().map(Chunk::embedding_input).collect();
            let items: Vec<(&str, &str)> = group
                .iter()
                .zip(&inputs)
                .map(|(c, input)| (c.content_hash.as_str(), input.as_str()))
                .collect();
            let (embedded, stats) = embed_with_cache(self.embedder.as_ref(), &self.cache, &items)?;
            report.chunks_embedded += stats.embedded;
            report.chunks_cached += stats.hits;
            vectors.extend(embedded);
        }
        Ok(vectors)
    }
}

/// Loads and chunks one file, unless its content is what the store already has.
fn prepare(
    file: &DiscoveredFile,
    record: Option<&FileRecord>,
    chunker: &shiori_core::ChunkerConfig,
) -> Result<Prepared, IndexFailure> {
    let path = file.path.display().to_string();
    let failure = |reason: String| IndexFailure {
        path: path.clone(),
        reason,
    };
    let read_at_ns = unix_nanos(SystemTime::now());
    let bytes = std::fs::read(&file.path).map_err(|e| failure(e.to_string()))?;
    let file_record = FileRecord {
        path: path.clone(),
        content_hash: content_hash(&bytes),
        size: file.size,
        modified_ns: file.modified_ns,
        read_at_ns,
    };
    if record.is_some_and(|r| r.content_hash == file_record.content_hash) {
        return Ok(Prepared::Unchanged(file_record));
    }
    let loaded = load_bytes(&file.path, bytes, file.modified).map_err(|e| {
        // The error names the path; the report shows the path in its own field.
        let message = e.to_string();
        let reason = message
            .strip_prefix(&format!("{path}: "))
            .map_or(message.clone(), str::to_string);
        failure(reason)
    })?;
    let chunks = loaded
        .documents
        .iter()
        .flat_map(|document| chunk_document(document, chunker))
        .collect();
    Ok(Prepared::Changed(ChangedFile {
        record: file_record,
        documents: loaded.documents,
        chunks,
        record_failures: loaded
            .record_failures
            .into_iter()
            .map(|f| IndexFailure {
                path: f.path.display().to_string(),
                reason: f.reason,
            })
            .collect(),
    }))
}
