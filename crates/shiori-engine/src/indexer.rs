use crate::groups::{narrow_groups, sidecar_groups};
use crate::readers::ProjectReaders;
use crate::remote::SourceSync;
use crate::stamp::{stamped_hash, still_current};
use crate::{Engine, EngineError, ProjectConfig};
use rayon::prelude::*;
use serde::Serialize;
use shiori_core::{normal_group, Chunk, ChunkerConfig, ChunkerKind, Document, Embedder, Filters};
use shiori_ingest::limits::MAX_CHUNKS_PER_FILE;
use shiori_ingest::{
    chunk_document, content_hash, discover, load_bytes_counting, unix_nanos, Budget, ChunkError,
    DiscoveredFile, IngestError, IngestFailure, LoadedFile, Sections, WalkOptions, Walked,
    SECTION_PATH_KEY,
};
use shiori_models::embed_with_cache;
use shiori_store::{ApplyReport, FileChange, FileRecord};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

/// Files loaded, chunked and stored per transaction: bounds memory and the work a crash loses.
const FILES_PER_BATCH: usize = 128;
/// Chunks embedded per cache round-trip, so a long file's progress is cached as it goes.
const CHUNKS_PER_EMBED: usize = 256;
/// The coarsest modification-time resolution of a common filesystem (FAT's two seconds): a file
/// read sooner than this after its stamp could change again without the stamp moving.
const COARSEST_MTIME_TICK_NS: i64 = 2_000_000_000;
/// Metadata keys a project sets on its chunks.
const PROJECT_KEY: &str = "project";
const DOC_TYPE_KEY: &str = "doc_type";
const FORMAT_KEY: &str = "format";

/// Receives progress of long work; `()` ignores it.
pub trait Progress: Sync {
    fn start(&self, phase: &str, total: u64);
    fn advance(&self, done: u64);
    fn finish(&self);
    /// Chunks embedded (or found in the embedding cache) since the last call, reported as each
    /// group is done, so a single large file shows progress too.
    fn chunks_embedded(&self, _chunks: u64) {}
    /// Chunks written to the store since the last call.
    fn chunks_written(&self, _chunks: u64) {}
    /// Pages of PDFs and images read since the last call (scanned ones are read by OCR, a few
    /// a second), reported from the threads that read them.
    fn pages_read(&self, _pages: u64) {}
    /// The bytes of the files this phase will index, once known: the measure of the work
    /// left (embedding time follows the text, and the text the bytes, far better than it
    /// follows the number of files).
    fn bytes_expected(&self, _bytes: u64) {}
    /// Bytes of files done since the last call: a batch's files count their share as their
    /// chunks are embedded, the rest of the batch once it is written.
    fn bytes_done(&self, _bytes: u64) {}
    /// How far into the file being indexed a part at a time (JSONL) the parts so far reach;
    /// [`Progress::bytes_done`] with the file's size ends it.
    fn bytes_into_file(&self, _offset: u64) {}
}

impl Progress for () {
    fn start(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// Passes progress on, and counts each chunk embedded as its share of the bytes it came from,
/// so that the ETA moves while a batch of files, or a part of a JSONL file, is embedded.
pub(crate) struct ChunkShare<'a> {
    inner: &'a dyn Progress,
    bytes: u64,
    chunks: usize,
    reported: AtomicU64,
    /// Where in the file a part starts: its share is reported as the offset reached
    /// ([`Progress::bytes_into_file`]), not as whole files done.
    part_of_file_from: Option<u64>,
}

impl<'a> ChunkShare<'a> {
    /// The chunks of a batch of whole files of `bytes` in all.
    fn new(inner: &'a dyn Progress, bytes: u64, chunks: usize) -> ChunkShare<'a> {
        ChunkShare {
            inner,
            bytes,
            chunks,
            reported: AtomicU64::new(0),
            part_of_file_from: None,
        }
    }

    /// The chunks of the part of a file that spans `bytes`.
    pub(crate) fn of_part(
        inner: &'a dyn Progress,
        bytes: std::ops::Range<u64>,
        chunks: usize,
    ) -> ChunkShare<'a> {
        ChunkShare {
            part_of_file_from: Some(bytes.start),
            ..ChunkShare::new(inner, bytes.end.saturating_sub(bytes.start), chunks)
        }
    }

    /// The batch's bytes not yet reported (all of them when it had no chunks).
    fn bytes_left(&self) -> u64 {
        self.bytes
            .saturating_sub(self.reported.load(Ordering::Relaxed))
    }
}

impl Progress for ChunkShare<'_> {
    fn start(&self, phase: &str, total: u64) {
        self.inner.start(phase, total);
    }
    fn advance(&self, done: u64) {
        self.inner.advance(done);
    }
    fn finish(&self) {
        self.inner.finish();
    }
    fn chunks_embedded(&self, chunks: u64) {
        self.inner.chunks_embedded(chunks);
        let share = self.bytes * chunks / self.chunks.max(1) as u64;
        let share = share.min(self.bytes_left());
        let reported = self.reported.fetch_add(share, Ordering::Relaxed) + share;
        match self.part_of_file_from {
            Some(start) => self.inner.bytes_into_file(start + reported),
            None => self.inner.bytes_done(share),
        }
    }
    fn chunks_written(&self, chunks: u64) {
        self.inner.chunks_written(chunks);
    }
    fn pages_read(&self, pages: u64) {
        self.inner.pages_read(pages);
    }
}

/// What one indexing run covers: its roots, which files the walk takes, and the project whose
/// metadata every chunk gets.
pub(crate) struct Scope {
    pub paths: Vec<PathBuf>,
    pub walk: WalkOptions,
    pub project: Option<ProjectStamp>,
}

/// What decides who reads a file of a run: the run's project (for its metadata), every project
/// holding the file (their groups narrow it, whichever project indexes it), and the groups keys
/// have (a file naming others is reported).
#[derive(Clone, Copy)]
pub(crate) struct Readership<'a> {
    pub project: Option<&'a ProjectStamp>,
    pub readers: &'a ProjectReaders,
    pub known: Option<&'a BTreeSet<String>>,
}

/// The layers of groups a file's documents are narrowed by: its `.NAME.groups` and the
/// projects holding it.
#[derive(Clone, Copy)]
pub(crate) struct FileGroups<'a> {
    pub sidecar: Option<&'a str>,
    pub projects: Option<&'a str>,
}

impl FileGroups<'_> {
    /// `hash` stamped with these groups and the file's `section` path: a change of any reads
    /// the file again.
    pub(crate) fn stamp(&self, hash: String, section: &str) -> String {
        stamped_hash(hash, section, [self.sidecar, self.projects])
    }
}

/// The metadata a project adds to each of its documents and chunks.
pub(crate) struct ProjectStamp {
    pub name: String,
    pub doc_type: Option<String>,
    pub metadata: BTreeMap<String, String>,
}

impl ProjectStamp {
    pub fn new(name: &str, project: &ProjectConfig) -> ProjectStamp {
        ProjectStamp {
            name: name.to_string(),
            doc_type: project.doc_type.clone(),
            metadata: project.metadata.clone(),
        }
    }

    /// Adds the project's metadata; its `doc_type` replaces the loader's, which is kept as
    /// `format`.
    fn stamp(&self, metadata: &mut BTreeMap<String, String>) {
        metadata.extend(
            self.metadata
                .iter()
                .map(|(key, value)| (key.clone(), value.clone())),
        );
        if let Some(doc_type) = &self.doc_type {
            if let Some(format) = metadata.insert(DOC_TYPE_KEY.to_string(), doc_type.clone()) {
                metadata.insert(FORMAT_KEY.to_string(), format);
            }
        }
        metadata.insert(PROJECT_KEY.to_string(), self.name.clone());
    }
}

/// A file or record that could not be indexed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexFailure {
    pub path: String,
    pub reason: String,
}

impl From<IngestFailure> for IndexFailure {
    fn from(failure: IngestFailure) -> IndexFailure {
        IndexFailure {
            path: failure.path.display().to_string(),
            reason: failure.reason,
        }
    }
}

/// An ingest error's message without the path it starts with: the failure names the path in
/// its own field.
pub(crate) fn without_path(message: &str, path: &str) -> String {
    message
        .strip_prefix(&format!("{path}: "))
        .map_or(message.to_string(), str::to_string)
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
    /// Chunks whose vectors came with their records (JSONL's `vector`).
    pub chunks_imported: usize,
    pub failures: Vec<IndexFailure>,
    /// Records indexed with fewer readers than their data named, and groups no key has.
    pub warnings: Vec<IndexFailure>,
    pub elapsed_ms: f64,
    /// Where the time went.
    pub stages: IndexStages,
    /// What each remote source's sync did before its files were indexed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceSync>,
}

/// Milliseconds spent in each stage of an indexing run. Reading and chunking run on all
/// cores at once, so their figure is wall time, not the sum over threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct IndexStages {
    /// Reading, parsing and chunking files and records.
    pub load_ms: f64,
    /// Embedding chunks (or finding them in the cache).
    pub embed_ms: f64,
    /// Writing documents, chunks and vectors to the tables.
    pub tables_ms: f64,
    /// Handing chunks to the BM25 index.
    pub keywords_ms: f64,
    /// Inserting vectors into the HNSW graph.
    pub vectors_ms: f64,
    /// Making the derived indexes durable at the end.
    pub commit_ms: f64,
}

impl IndexStages {
    fn absorb(&mut self, other: IndexStages) {
        self.load_ms += other.load_ms;
        self.embed_ms += other.embed_ms;
        self.tables_ms += other.tables_ms;
        self.keywords_ms += other.keywords_ms;
        self.vectors_ms += other.vectors_ms;
        self.commit_ms += other.commit_ms;
    }
}

pub(crate) fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

impl IndexReport {
    /// Adds another run's counts to this one (indexing several projects in a row).
    pub fn absorb(&mut self, other: IndexReport) {
        self.files_seen += other.files_seen;
        self.files_indexed += other.files_indexed;
        self.files_unchanged += other.files_unchanged;
        self.files_removed += other.files_removed;
        self.documents += other.documents;
        self.chunks_added += other.chunks_added;
        self.chunks_removed += other.chunks_removed;
        self.chunks_embedded += other.chunks_embedded;
        self.chunks_cached += other.chunks_cached;
        self.chunks_imported += other.chunks_imported;
        self.failures.extend(other.failures);
        self.warnings.extend(other.warnings);
        self.elapsed_ms += other.elapsed_ms;
        self.stages.absorb(other.stages);
        self.sources.extend(other.sources);
    }

    /// Counts a store write: chunks in and out, duplicate documents as failures, its time.
    pub(crate) fn record_write(&mut self, applied: ApplyReport) {
        self.chunks_added += applied.chunks_added;
        self.chunks_removed += applied.chunks_removed;
        self.stages.tables_ms += ms(applied.timings.tables);
        self.stages.keywords_ms += ms(applied.timings.keywords);
        self.stages.vectors_ms += ms(applied.timings.vectors);
        self.failures
            .extend(applied.duplicates.into_iter().map(|d| IndexFailure {
                path: d.path,
                reason: format!(
                    "document id {:?} is already indexed from {}; skipped",
                    d.doc_id, d.existing_path
                ),
            }));
    }
}

enum Prepared {
    Changed(ChangedFile),
    /// The content hash matches the store's; the record carries the file's new stamps.
    Unchanged(FileRecord),
}

/// A chunk with the vector its record brought, if any; the embedder gives the others theirs.
pub(crate) type PendingChunk = (Chunk, Option<Vec<f32>>);

/// A changed file, loaded and chunked, waiting for vectors.
struct ChangedFile {
    record: FileRecord,
    documents: Vec<Document>,
    chunks: Vec<PendingChunk>,
    /// Records that failed inside an otherwise good file (a bad JSONL line, say).
    record_failures: Vec<IndexFailure>,
    warnings: Vec<IndexFailure>,
}

impl Engine {
    /// Indexes files and folders: new and changed files are (re)indexed, unchanged ones
    /// skipped, and files that vanished from under `paths` dropped. Bad files fail alone.
    pub fn index(
        &mut self,
        paths: &[PathBuf],
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        let scope = Scope {
            paths: paths.to_vec(),
            walk: self.walk_options(None),
            project: None,
        };
        self.index_scope(&scope, progress)
    }

    /// Indexes a corpus file the caller vouches for (an evaluation or benchmark set), so the
    /// per-file size limit meant for document folders does not apply.
    pub fn index_corpus(
        &mut self,
        corpus: &Path,
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        let scope = Scope {
            paths: vec![corpus.to_path_buf()],
            walk: WalkOptions {
                max_file_bytes: u64::MAX,
                ..self.walk_options(None)
            },
            project: None,
        };
        self.index_scope(&scope, progress)
    }

    /// Every group a configured key reads, to report data naming others; `None` without keys,
    /// when groups restrict nobody yet.
    pub(crate) fn known_groups(&self) -> Option<BTreeSet<String>> {
        let keys = &self.config.auth.keys;
        (!keys.is_empty()).then(|| {
            let named = keys.iter().flat_map(|key| &key.groups);
            named.map(|group| normal_group(group)).collect()
        })
    }

    /// The `[ingest]` walk settings, with a project's include and exclude globs on top.
    pub(crate) fn walk_options(&self, project: Option<&ProjectConfig>) -> WalkOptions {
        let ingest = &self.config.ingest;
        let mut walk = WalkOptions {
            include: ingest.include.clone(),
            exclude: ingest.exclude.clone(),
            max_file_bytes: (ingest.max_file_mb * 1024.0 * 1024.0) as u64,
        };
        if let Some(project) = project {
            if !project.include.is_empty() {
                walk.include = project.include.clone();
            }
            walk.exclude.extend(project.exclude.iter().cloned());
        }
        walk
    }

    pub(crate) fn index_scope(
        &mut self,
        scope: &Scope,
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        let started = Instant::now();
        self.store.lock_for_writing()?;
        let Walked {
            files,
            failures: walk_failures,
            skipped,
        } = discover(&scope.paths, &scope.walk)?;
        let mut report = IndexReport {
            files_seen: files.len() + walk_failures.len(),
            failures: walk_failures
                .iter()
                .cloned()
                .map(IndexFailure::from)
                .collect(),
            warnings: skipped.into_iter().map(IndexFailure::from).collect(),
            ..IndexReport::default()
        };

        let on_disk: HashSet<String> = files
            .iter()
            .map(|f| f.path.display().to_string())
            .chain(walk_failures.iter().map(|f| f.path.display().to_string()))
            .collect();
        let owner = scope.project.as_ref().map(|stamp| stamp.name.as_str());
        let removals = self.vanished_files(&scope.paths, &on_disk, owner)?;
        report.files_removed = removals.len();
        if !removals.is_empty() {
            let applied = self.store.apply(removals)?;
            report.record_write(applied);
        }

        let sections = Sections::read(&files);
        let readers = ProjectReaders::new(&self.config, &self.data_dir, |project| {
            self.walk_options(Some(project))
        });
        let candidates = self.changed_candidates(files, &sections, &readers)?;
        report.files_unchanged = report.files_seen - report.failures.len() - candidates.len();
        progress.start("indexing files", candidates.len() as u64);
        progress.bytes_expected(candidates.iter().map(|(file, _)| file.size).sum());
        let (streamed, whole): (Vec<_>, Vec<_>) = candidates
            .into_iter()
            .partition(|(file, _)| is_streamed(&file.path));
        let known = self.known_groups();
        let readership = Readership {
            project: scope.project.as_ref(),
            readers: &readers,
            known: known.as_ref(),
        };
        for batch in whole.chunks(FILES_PER_BATCH) {
            self.index_batch(batch, readership, &sections, &mut report, progress)?;
            progress.advance(batch.len() as u64);
        }
        for (file, record) in &streamed {
            self.index_streamed(file, record.as_ref(), readership, &mut report, progress)?;
            progress.advance(1);
            progress.bytes_done(file.size);
        }
        progress.finish();
        let committing = Instant::now();
        self.store.commit()?;
        report.stages.commit_ms += ms(committing.elapsed());
        report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        // A streamed file's part and slice each report its file's groups.
        report
            .warnings
            .sort_by(|a, b| (&a.path, &a.reason).cmp(&(&b.path, &b.reason)));
        report.warnings.dedup();
        Ok(report)
    }

    /// Stored files under one of `paths` that this walk no longer takes: gone from disk, or
    /// still there but indexed through this run's project (`owner`, none for plain paths) and
    /// now excluded; and the project's files under none of `paths`. A file another project
    /// indexed stays, so nested or overlapping project folders do not drop each other's files.
    fn vanished_files(
        &self,
        paths: &[PathBuf],
        on_disk: &HashSet<String>,
        owner: Option<&str>,
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
        let mut removals = Vec::new();
        for stored in self.store.file_paths(&Filters::default())? {
            if !under_root(&stored) || on_disk.contains(&stored) {
                continue;
            }
            if !Path::new(&stored).exists() || self.store.file_project(&stored)?.as_deref() == owner
            {
                removals.push(FileChange::Remove { path: stored });
            }
        }
        // A project's file under none of its folders came in through a link that led out of
        // them, which walks no longer follow: it goes.
        if let Some(name) = owner {
            let theirs = Filters {
                projects: vec![name.to_string()],
                ..Filters::default()
            };
            for stored in self.store.file_paths(&theirs)? {
                if !under_root(&stored) {
                    removals.push(FileChange::Remove { path: stored });
                }
            }
        }
        Ok(removals)
    }

    /// Files whose size or modification time differ from what the store remembers, whose
    /// stamp is too close to when they were read to rule out a later edit within the same tick,
    /// that an earlier version's reader read or read in another section, or whose groups
    /// changed (their `.NAME.groups`, or the `groups` of a project holding them): a group
    /// taken off a project is taken off its files at the next index, however old they are.
    fn changed_candidates(
        &self,
        files: Vec<DiscoveredFile>,
        sections: &Sections,
        readers: &ProjectReaders,
    ) -> Result<Vec<(DiscoveredFile, Option<FileRecord>)>, EngineError> {
        let mut records = self.store.file_records()?;
        let mut candidates = Vec::new();
        for file in files {
            let record = records.remove(&file.path.display().to_string());
            let unchanged = record.as_ref().is_some_and(|r| {
                r.size == file.size
                    && r.modified_ns == file.modified_ns
                    && r.read_at_ns.saturating_sub(r.modified_ns) >= COARSEST_MTIME_TICK_NS
                    && stamped_as_now(r, &file.path, sections, readers)
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
        readership: Readership<'_>,
        sections: &Sections,
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<(), EngineError> {
        let _span = tracing::info_span!("index_batch", files = batch.len()).entered();
        let chunker = &self.config.chunker;
        let embedder = self.embedder.as_ref();
        let loading = Instant::now();
        let prepared: Vec<Result<Prepared, IndexFailure>> = batch
            .par_iter()
            .map(|(file, record)| {
                prepare(
                    file,
                    record.as_ref(),
                    chunker,
                    embedder,
                    readership,
                    &section_of(sections, &file.path),
                    progress,
                )
            })
            .collect();
        report.stages.load_ms += ms(loading.elapsed());
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
        // The batch's chunks are embedded together: a file of a few chunks alone makes batches
        // too small to keep both the cores and the int8 kernels busy.
        let batch_bytes: u64 = batch.iter().map(|(file, _)| file.size).sum();
        let counts: Vec<usize> = ready.iter().map(|file| file.chunks.len()).collect();
        let pending: Vec<PendingChunk> = ready
            .iter_mut()
            .flat_map(|file| std::mem::take(&mut file.chunks))
            .collect();
        let by_chunk = ChunkShare::new(progress, batch_bytes, pending.len());
        let mut embedded = self.embed_chunks(pending, report, &by_chunk)?.into_iter();
        for (file, count) in ready.into_iter().zip(counts) {
            report.failures.extend(file.record_failures);
            report.warnings.extend(file.warnings);
            report.files_indexed += 1;
            report.documents += file.documents.len();
            changes.push(FileChange::Upsert {
                file: file.record,
                documents: file.documents,
                chunks: embedded.by_ref().take(count).collect(),
            });
        }
        let applied = self.store.apply(changes)?;
        progress.chunks_written(applied.chunks_added as u64);
        progress.bytes_done(by_chunk.bytes_left());
        report.record_write(applied);
        Ok(())
    }

    /// Gives every chunk its vector, in order: the one its record brought, else the
    /// embedder's (through the cache).
    pub(crate) fn embed_chunks(
        &self,
        chunks: Vec<PendingChunk>,
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<Vec<(Chunk, Vec<f32>)>, EngineError> {
        let started = Instant::now();
        let (chunks, mut vectors): (Vec<Chunk>, Vec<Option<Vec<f32>>>) = chunks.into_iter().unzip();
        let imported = vectors.iter().filter(|vector| vector.is_some()).count();
        report.chunks_imported += imported;
        progress.chunks_embedded(imported as u64);
        let missing: Vec<usize> = (0..chunks.len())
            .filter(|&i| vectors[i].is_none())
            .collect();
        for group in missing.chunks(CHUNKS_PER_EMBED) {
            let inputs: Vec<String> = group.iter().map(|&i| chunks[i].embedding_input()).collect();
            let items: Vec<(&str, &str)> = group
                .iter()
                .zip(&inputs)
                .map(|(&i, input)| (chunks[i].content_hash.as_str(), input.as_str()))
                .collect();
            let (embedded, stats) = embed_with_cache(self.embedder.as_ref(), &self.cache, &items)?;
            report.chunks_embedded += stats.embedded;
            report.chunks_cached += stats.hits;
            progress.chunks_embedded(group.len() as u64);
            for (&i, vector) in group.iter().zip(embedded) {
                vectors[i] = Some(vector);
            }
        }
        report.stages.embed_ms += ms(started.elapsed());
        Ok(chunks
            .into_iter()
            .zip(vectors)
            .filter_map(|(chunk, vector)| Some((chunk, vector?)))
            .collect())
    }
}

/// Whether a file is read a batch of records at a time rather than whole (JSONL).
fn is_streamed(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("jsonl"))
}

/// Whether `record` was stamped by this reader, in the section `path` lies in now, with the
/// groups it has now; a sidecar that cannot be read counts as changed (reading the file again
/// reports it).
fn stamped_as_now(
    record: &FileRecord,
    path: &Path,
    sections: &Sections,
    readers: &ProjectReaders,
) -> bool {
    let Ok(sidecar) = sidecar_groups(path) else {
        return false;
    };
    let projects = readers.groups_of(path);
    let groups = [sidecar.as_deref(), projects.as_deref()];
    still_current(&record.content_hash, &section_of(sections, path), groups)
}

/// The section path a file's documents keep ([`Sections`]); none for records (JSONL), which
/// are not pages of a site.
fn section_of(sections: &Sections, path: &Path) -> String {
    if is_streamed(path) {
        String::new()
    } else {
        sections.path_of(path)
    }
}

/// Loads and chunks one file, unless its content is what the store already has.
fn prepare(
    file: &DiscoveredFile,
    record: Option<&FileRecord>,
    chunker: &shiori_core::ChunkerConfig,
    embedder: &dyn Embedder,
    readership: Readership<'_>,
    section: &str,
    progress: &dyn Progress,
) -> Result<Prepared, IndexFailure> {
    let path = file.path.display().to_string();
    let failure = |reason: String| IndexFailure {
        path: path.clone(),
        reason,
    };
    let read_at_ns = unix_nanos(SystemTime::now());
    let bytes = std::fs::read(&file.path).map_err(|e| failure(e.to_string()))?;
    let sidecar = sidecar_groups(&file.path).map_err(|e| failure(e.to_string()))?;
    let projects = readership.readers.groups_of(&file.path);
    let groups = FileGroups {
        sidecar: sidecar.as_deref(),
        projects: projects.as_deref(),
    };
    let file_record = FileRecord {
        path: path.clone(),
        content_hash: groups.stamp(content_hash(&bytes), section),
        size: file.size,
        modified_ns: file.modified_ns,
        read_at_ns,
    };
    if record.is_some_and(|r| r.content_hash == file_record.content_hash) {
        return Ok(Prepared::Unchanged(file_record));
    }
    let pages_read = |pages| progress.pages_read(pages);
    let mut loaded = match load_bytes_counting(&file.path, bytes, file.modified, &pages_read) {
        Ok(loaded) => loaded,
        // A blank file is no fault of the run (a page not written yet): it is stored with
        // nothing in it, which also drops what an earlier version of it had, and reported.
        Err(IngestError::Empty { .. }) => {
            return Ok(Prepared::Changed(ChangedFile {
                record: file_record,
                documents: Vec::new(),
                chunks: Vec::new(),
                record_failures: Vec::new(),
                warnings: vec![failure("file is empty: nothing in it to index".into())],
            }))
        }
        Err(error) => return Err(failure(without_path(&error.to_string(), &path))),
    };
    if !section.is_empty() {
        for document in &mut loaded.documents {
            let key = SECTION_PATH_KEY.to_string();
            document.metadata.insert(key, section.to_string());
        }
    }
    let chunked = chunk_loaded(&mut loaded, groups, readership, chunker, embedder)
        .map_err(|error| failure(error.to_string()))?;
    Ok(Prepared::Changed(ChangedFile {
        record: file_record,
        documents: loaded.documents,
        chunks: chunked.chunks,
        record_failures: loaded
            .record_failures
            .into_iter()
            .map(IndexFailure::from)
            .chain(chunked.failures)
            .collect(),
        warnings: chunked.warnings,
    }))
}

/// A loaded file cut into chunks, with what went wrong on the way.
pub(crate) struct Chunked {
    pub chunks: Vec<PendingChunk>,
    /// Records that were not indexed.
    pub failures: Vec<IndexFailure>,
    /// Records indexed with fewer readers than their data asked for, or naming a group no key
    /// has.
    pub warnings: Vec<IndexFailure>,
}

/// Chunks loaded documents and gives them (and their chunks) the file's groups and project.
/// A record that brought its own vector becomes one chunk that keeps it; a vector of the
/// wrong size fails its record. An error fails the whole file.
pub(crate) fn chunk_loaded(
    loaded: &mut LoadedFile,
    groups: FileGroups<'_>,
    readership: Readership<'_>,
    chunker: &ChunkerConfig,
    embedder: &dyn Embedder,
) -> Result<Chunked, ChunkError> {
    let mut failures = take_vectors_that_fit(loaded, embedder.dimension());
    let grouping = narrow_groups(loaded, groups.sidecar, groups.projects, readership.known);
    failures.extend(grouping.failures);
    let whole = ChunkerConfig {
        kind: ChunkerKind::Record,
        ..chunker.clone()
    };
    let mut chunks = Vec::new();
    for document in &loaded.documents {
        let vector = loaded.vectors.remove(&document.doc_id);
        let config = if vector.is_some() { &whole } else { chunker };
        let pieces = chunk_document(document, config, Some(embedder))?;
        chunks.extend(pieces.into_iter().map(|chunk| (chunk, vector.clone())));
        // Each chunk is embedded and written under the write lock: a file of tiny paragraphs
        // must not hold it for hours.
        if chunks.len() > MAX_CHUNKS_PER_FILE {
            return Err(ChunkError::OverBudget(Budget::Chunks));
        }
    }
    // Stamped after chunking: the chunkers read the loader's `doc_type`.
    if let Some(project) = readership.project {
        for document in &mut loaded.documents {
            project.stamp(&mut document.metadata);
        }
        for (chunk, _) in &mut chunks {
            project.stamp(&mut chunk.metadata);
        }
    }
    Ok(Chunked {
        chunks,
        failures,
        warnings: grouping.warnings,
    })
}

/// Normalises the vectors records brought (the indexes rank by inner product), and drops each
/// record whose vector does not fit the embedder (`dimension`) with a failure naming its line.
fn take_vectors_that_fit(loaded: &mut LoadedFile, dimension: usize) -> Vec<IndexFailure> {
    let mut failures = Vec::new();
    let mut rejected = HashSet::new();
    for document in &loaded.documents {
        let Some(vector) = loaded.vectors.get_mut(&document.doc_id) else {
            continue;
        };
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        let reason = if vector.len() != dimension {
            format!(
                "vector has {} dimensions; the embedder makes {dimension}",
                vector.len()
            )
        } else if norm == 0.0 || !norm.is_finite() {
            "vector has zero or infinite length".to_string()
        } else {
            vector.iter_mut().for_each(|x| *x /= norm);
            continue;
        };
        let (path, line) = document
            .source
            .rsplit_once("#L")
            .unwrap_or((document.source.as_str(), "?"));
        failures.push(IndexFailure {
            path: path.to_string(),
            reason: format!("line {line}: {reason}"),
        });
        rejected.insert(document.doc_id.clone());
    }
    loaded
        .documents
        .retain(|document| !rejected.contains(&document.doc_id));
    failures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use shiori_core::EmbedError;

    /// The bytes a progress was told of.
    #[derive(Default)]
    struct Bytes {
        done: AtomicU64,
        into_file: AtomicU64,
    }

    impl Progress for Bytes {
        fn start(&self, _: &str, _: u64) {}
        fn advance(&self, _: u64) {}
        fn finish(&self) {}
        fn bytes_done(&self, bytes: u64) {
            self.done.fetch_add(bytes, Ordering::Relaxed);
        }
        fn bytes_into_file(&self, offset: u64) {
            self.into_file.store(offset, Ordering::Relaxed);
        }
    }

    #[test]
    fn each_chunk_embedded_counts_its_share_of_its_batchs_or_its_parts_bytes() {
        let whole = Bytes::default();
        let batch = ChunkShare::new(&whole, 1_000, 4);
        batch.chunks_embedded(1);
        assert_eq!(whole.done.load(Ordering::Relaxed), 250);
        batch.chunks_embedded(3);
        assert_eq!(whole.done.load(Ordering::Relaxed), 1_000);
        assert_eq!(batch.bytes_left(), 0);

        let file = Bytes::default();
        let part = ChunkShare::of_part(&file, 500..1_500, 4);
        part.chunks_embedded(2);
        assert_eq!(file.into_file.load(Ordering::Relaxed), 1_000);
        part.chunks_embedded(2);
        assert_eq!(file.into_file.load(Ordering::Relaxed), 1_500);
        assert_eq!(
            file.done.load(Ordering::Relaxed),
            0,
            "no whole file is done"
        );
    }

    /// Vectors of ones: the chunkers under test never ask for any.
    struct Ones;

    impl Embedder for Ones {
        fn model_id(&self) -> &str {
            "ones"
        }
        fn dimension(&self) -> usize {
            2
        }
        fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts.iter().map(|_| vec![1.0; 2]).collect())
        }
        fn embed_query(&self, _text: &str) -> Result<Vec<f32>, EmbedError> {
            Ok(vec![1.0; 2])
        }
    }

    #[test]
    fn a_file_that_makes_more_chunks_than_its_budget_fails_naming_it() {
        let chunker = ChunkerConfig {
            kind: ChunkerKind::Fixed,
            max_chars: 10,
            overlap_chars: 0,
            ..ChunkerConfig::default()
        };
        let text = "0123456789".repeat(MAX_CHUNKS_PER_FILE + 1);
        let document = Document {
            doc_id: "long.txt".into(),
            title: "long".into(),
            source: "long.txt".into(),
            text,
            modified: 0,
            metadata: BTreeMap::new(),
        };
        let mut loaded = LoadedFile {
            documents: vec![document],
            ..LoadedFile::default()
        };
        let readers = ProjectReaders::new(&Config::default(), Path::new("/data"), |_| {
            WalkOptions::default()
        });
        let readership = Readership {
            project: None,
            readers: &readers,
            known: None,
        };
        let groups = FileGroups {
            sidecar: None,
            projects: None,
        };
        let Err(error) = chunk_loaded(&mut loaded, groups, readership, &chunker, &Ones) else {
            panic!("a file over the chunk budget was chunked");
        };
        assert_eq!(
            error.to_string(),
            "over the per-file budget: it makes more than 50000 chunks"
        );
    }

    #[test]
    fn a_project_stamps_its_name_doc_type_and_metadata() {
        let project = ProjectConfig {
            doc_type: Some("manual".into()),
            metadata: BTreeMap::from([
                ("team".to_string(), "infra".to_string()),
                ("project".to_string(), "not the name".to_string()),
            ]),
            ..ProjectConfig::default()
        };
        let mut metadata = BTreeMap::from([("doc_type".to_string(), "markdown".to_string())]);
        ProjectStamp::new("kumo", &project).stamp(&mut metadata);
        let expected = [
            ("doc_type", "manual"),
            ("format", "markdown"),
            ("project", "kumo"),
            ("team", "infra"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        assert_eq!(metadata, BTreeMap::from(expected));

        let plain = ProjectConfig::default();
        let mut metadata = BTreeMap::from([("doc_type".to_string(), "csv".to_string())]);
        ProjectStamp::new("sora", &plain).stamp(&mut metadata);
        assert_eq!(
            metadata["doc_type"], "csv",
            "no doc_type of its own: the loader's stays"
        );
        assert_eq!(metadata["project"], "sora");
    }
}
