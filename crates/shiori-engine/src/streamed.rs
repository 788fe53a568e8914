//! Indexing a JSONL file a batch of records at a time: memory stays bounded however large the
//! file, and each batch is its own transaction, so the database's write-ahead log is
//! checkpointed as the file goes in rather than growing to the file's size.

use crate::groups::sidecar_groups;
use crate::indexer::{
    chunk_loaded, ms, without_path, ChunkShare, FileGroups, IndexFailure, IndexReport, Progress,
    Readership,
};
use crate::{Engine, EngineError};
use rayon::prelude::*;
use shiori_ingest::{
    file_content_hash, unix_nanos, ChunkError, DiscoveredFile, JsonlStream, LoadedFile,
};
use shiori_store::{partial_hash, FileChange, FileRecord};
use std::path::Path;
use std::time::{Instant, SystemTime};

/// Records read, chunked, embedded and written per transaction.
const RECORDS_PER_PART: usize = 4_096;

impl Engine {
    /// Indexes one JSONL file in parts, unless its content is what the store already has. The
    /// first part replaces the file's old state; the file is sealed with its real hash after
    /// the last, so a run that stops in between leaves it to be indexed again.
    pub(crate) fn index_streamed(
        &mut self,
        file: &DiscoveredFile,
        stored: Option<&FileRecord>,
        readership: Readership<'_>,
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<(), EngineError> {
        let path = file.path.display().to_string();
        let fail = |report: &mut IndexReport, reason: String| {
            report.failures.push(IndexFailure {
                path: path.clone(),
                reason,
            })
        };
        let read_at_ns = unix_nanos(SystemTime::now());
        let projects = readership.readers.groups_of(&file.path);
        let (hash, sidecar) = match hash_and_groups(&file.path, projects.as_deref()) {
            Ok(found) => found,
            Err(error) => {
                fail(report, error.to_string());
                return Ok(());
            }
        };
        let record = FileRecord {
            path: path.clone(),
            content_hash: hash,
            size: file.size,
            modified_ns: file.modified_ns,
            read_at_ns,
        };
        if stored.is_some_and(|r| r.content_hash == record.content_hash) {
            report.files_unchanged += 1;
            let applied = self.store.apply(vec![FileChange::Touch { file: record }])?;
            report.record_write(applied);
            return Ok(());
        }
        let mut records = match JsonlStream::open(&file.path, file.modified) {
            Ok(records) => records,
            Err(error) => {
                fail(report, without_path(&error.to_string(), &path));
                return Ok(());
            }
        };
        let mut written_any = false;
        loop {
            let loading = Instant::now();
            let part_start = records.bytes_read();
            let part = match records.next_batch(RECORDS_PER_PART) {
                Ok(Some(part)) => part,
                Ok(None) => break,
                Err(error) => {
                    // Parts already written stay searchable; the unsealed file is indexed
                    // again by the next run.
                    fail(report, without_path(&error.to_string(), &path));
                    return Ok(());
                }
            };
            let groups = FileGroups {
                sidecar: sidecar.as_deref(),
                projects: projects.as_deref(),
            };
            let part = Part {
                loaded: part,
                bytes: part_start..records.bytes_read(),
            };
            let Some(change) =
                self.prepare_part(&path, part, (groups, readership), report, progress)?
            else {
                return Ok(());
            };
            report.stages.load_ms += ms(loading.elapsed()) - change.embed_ms;
            let change = match written_any {
                false => FileChange::Upsert {
                    file: FileRecord {
                        content_hash: partial_hash(&record.content_hash),
                        ..record.clone()
                    },
                    documents: change.documents,
                    chunks: change.chunks,
                },
                true => FileChange::Append {
                    path: path.clone(),
                    documents: change.documents,
                    chunks: change.chunks,
                },
            };
            let applied = self.store.apply(vec![change])?;
            progress.chunks_written(applied.chunks_added as u64);
            progress.bytes_into_file(records.bytes_read());
            report.record_write(applied);
            written_any = true;
        }
        let applied = self.store.apply(vec![FileChange::Seal { file: record }])?;
        report.record_write(applied);
        report.files_indexed += 1;
        Ok(())
    }

    /// Chunks one part's records on every core, then gives the chunks their vectors. A
    /// chunking error fails the file (`None`, with the failure reported).
    fn prepare_part(
        &self,
        path: &str,
        Part {
            loaded: mut part,
            bytes,
        }: Part,
        (groups, readership): (FileGroups<'_>, Readership<'_>),
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<Option<PreparedPart>, EngineError> {
        let chunker = &self.config.chunker;
        let embedder = self.embedder.as_ref();
        report
            .failures
            .extend(part.record_failures.drain(..).map(IndexFailure::from));
        let pieces: Result<Vec<_>, ChunkError> = split_evenly(part)
            .into_par_iter()
            .map(|mut slice| {
                let chunked = chunk_loaded(&mut slice, groups, readership, chunker, embedder)?;
                Ok((slice.documents, chunked))
            })
            .collect();
        let pieces = match pieces {
            Ok(pieces) => pieces,
            Err(reason) => {
                report.failures.push(IndexFailure {
                    path: path.to_string(),
                    reason: reason.to_string(),
                });
                return Ok(None);
            }
        };
        let mut documents = Vec::new();
        let mut chunks = Vec::new();
        for (slice_documents, chunked) in pieces {
            documents.extend(slice_documents);
            chunks.extend(chunked.chunks);
            report.failures.extend(chunked.failures);
            report.warnings.extend(chunked.warnings);
        }
        report.documents += documents.len();
        let embedding = Instant::now();
        let by_chunk = ChunkShare::of_part(progress, bytes, chunks.len());
        let chunks = self.embed_chunks(chunks, report, &by_chunk)?;
        Ok(Some(PreparedPart {
            documents,
            chunks,
            embed_ms: ms(embedding.elapsed()),
        }))
    }
}

/// A batch of a file's records and the bytes of the file they were read from.
struct Part {
    loaded: LoadedFile,
    bytes: std::ops::Range<u64>,
}

struct PreparedPart {
    documents: Vec<shiori_core::Document>,
    chunks: Vec<(shiori_core::Chunk, Vec<f32>)>,
    embed_ms: f64,
}

/// One part's documents (with their vectors) cut into as many slices as there are threads.
fn split_evenly(mut part: LoadedFile) -> Vec<LoadedFile> {
    let slices = rayon::current_num_threads().max(1);
    let size = part.documents.len().div_ceil(slices).max(1);
    let mut result = Vec::with_capacity(slices);
    while !part.documents.is_empty() {
        let rest = part.documents.split_off(size.min(part.documents.len()));
        let documents = std::mem::replace(&mut part.documents, rest);
        let vectors = documents
            .iter()
            .filter_map(|d| Some((d.doc_id.clone(), part.vectors.remove(&d.doc_id)?)))
            .collect();
        result.push(LoadedFile {
            documents,
            vectors,
            ..LoadedFile::default()
        });
    }
    result
}

/// The file's content hash (read in pieces, never whole) stamped with its groups, and the
/// groups its sidecar gives it.
fn hash_and_groups(
    path: &Path,
    projects: Option<&str>,
) -> std::io::Result<(String, Option<String>)> {
    let sidecar = sidecar_groups(path)?;
    let groups = FileGroups {
        sidecar: sidecar.as_deref(),
        projects,
    };
    Ok((groups.stamp(file_content_hash(path)?, ""), sidecar))
}
