//! Writes: file changes in one transaction under the write lock, in multi-row batches.

use crate::copy_rows::CopyRows;
use crate::schema::{self, WRITE_LOCK};
use crate::terms::{Analyzers, FieldTerms, FIELDS};
use crate::textsearch::KeywordIndex;
use crate::token_text;
use crate::{HnswParams, PostgresError};
use postgres::{Client, GenericClient, Transaction};
use shiori_core::{Chunk, Document, GROUPS_KEY};
use shiori_store::{ApplyReport, DuplicateDocument, FileChange, FileRecord, StoreOptions};
use std::collections::{HashMap, HashSet};

/// Chunks per multi-row insert: bounds the size of one statement's parameters.
const CHUNKS_PER_INSERT: usize = 500;
/// Term rows per multi-row insert.
const TERMS_PER_INSERT: usize = 50_000;

/// The `shiori_meta` key whose value every write moves on, so readers know their cached
/// statistics are stale.
pub(crate) const GENERATION: &str = "write_generation";

pub(crate) fn set_meta(
    client: &mut impl GenericClient,
    key: &str,
    value: &str,
) -> Result<(), PostgresError> {
    client.execute(
        "INSERT INTO shiori_meta (key, value) VALUES ($1, $2)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[&key, &value],
    )?;
    Ok(())
}

pub(crate) fn record_embedder(
    client: &mut impl GenericClient,
    options: &StoreOptions,
) -> Result<(), PostgresError> {
    set_meta(client, "embedder", &options.embedder_id)?;
    set_meta(client, "dimension", &options.dimension.to_string())
}

/// A chunk waiting for its row, with its vector and terms (counted, and as its `bm25_text`).
struct NewChunk {
    chunk: Chunk,
    vector: Vec<f32>,
    terms: Vec<FieldTerms>,
    bm25_text: String,
}

/// Per-field changes to `keyword_stats`, and per term and group set to `term_df`.
#[derive(Default)]
struct StatsDelta {
    chunks: [i64; FIELDS],
    total_length: [i64; FIELDS],
    df: HashMap<(i16, String, String), i64>,
}

impl StatsDelta {
    fn count_term(&mut self, field: i16, term: &str, groups: &str, chunks: i64) {
        *self
            .df
            .entry((field, term.to_string(), groups.to_string()))
            .or_default() += chunks;
    }

    /// Writes the changes, in the transaction that made them.
    fn write(self, transaction: &mut Transaction) -> Result<(), PostgresError> {
        for (field, (chunks, total_length)) in
            self.chunks.iter().zip(&self.total_length).enumerate()
        {
            if *chunks != 0 || *total_length != 0 {
                transaction.execute(
                    "UPDATE keyword_stats SET chunks = chunks + $2,
                                              total_length = total_length + $3
                     WHERE field = $1",
                    &[&(field as i16), chunks, total_length],
                )?;
            }
        }
        let changed: Vec<_> = self.df.into_iter().filter(|(_, n)| *n != 0).collect();
        for batch in changed.chunks(TERMS_PER_INSERT) {
            let fields: Vec<i16> = batch.iter().map(|((f, _, _), _)| *f).collect();
            let terms: Vec<&str> = batch.iter().map(|((_, t, _), _)| t.as_str()).collect();
            let groups: Vec<&str> = batch.iter().map(|((_, _, g), _)| g.as_str()).collect();
            let counts: Vec<i64> = batch.iter().map(|(_, n)| *n).collect();
            transaction.execute(
                "INSERT INTO term_df (field, term, groups, df)
                 SELECT * FROM unnest($1::SMALLINT[], $2::TEXT[], $3::TEXT[], $4::BIGINT[])
                 ON CONFLICT (field, term, groups) DO UPDATE SET df = term_df.df + EXCLUDED.df",
                &[&fields, &terms, &groups, &counts],
            )?;
            // Only a count that went down can have reached zero.
            if counts.iter().any(|n| *n < 0) {
                transaction.execute(
                    "DELETE FROM term_df d
                     USING unnest($1::SMALLINT[], $2::TEXT[], $3::TEXT[], $4::BIGINT[])
                           AS u(field, term, groups, n)
                     WHERE u.n < 0 AND d.field = u.field AND d.term = u.term
                       AND d.groups = u.groups AND d.df <= 0",
                    &[&fields, &terms, &groups, &counts],
                )?;
            }
        }
        Ok(())
    }

    fn add(&mut self, fields: &[i16], lengths: &[i32], sign: i64) {
        for &field in fields {
            let slot = field as usize;
            self.chunks[slot] += sign;
            self.total_length[slot] += sign * i64::from(lengths.get(slot).copied().unwrap_or(0));
        }
    }
}

/// A transaction holding the write lock, with no statement time limit: a batch's statements
/// take as long as the batch is large, which is no sign of a database in trouble.
pub(crate) fn locked(client: &mut Client) -> Result<Transaction<'_>, PostgresError> {
    let mut transaction = client.transaction()?;
    transaction.batch_execute("SET LOCAL statement_timeout = 0")?;
    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])?;
    Ok(transaction)
}

/// Applies `changes` in one transaction; term rows are written only when `index` keeps them.
pub(crate) fn apply(
    client: &mut Client,
    analyzers: &Analyzers,
    changes: Vec<FileChange>,
    index: &KeywordIndex,
) -> Result<ApplyReport, PostgresError> {
    let started = std::time::Instant::now();
    // Analysis is CPU work: done before the lock, so other writers wait only for the database.
    let fields: Vec<i16> = analyzers.field_ids().collect();
    let analysed: Vec<Analysed> = changes
        .into_iter()
        .map(|change| match change {
            FileChange::Upsert {
                file,
                documents,
                chunks,
            } => Analysed::Upsert {
                file,
                documents,
                chunks: analyse(analyzers, chunks),
            },
            FileChange::Append {
                path,
                documents,
                chunks,
            } => Analysed::Append {
                path,
                documents,
                chunks: analyse(analyzers, chunks),
            },
            FileChange::Remove { path } => Analysed::Remove { path },
            FileChange::Touch { file } => Analysed::Touch { file },
            FileChange::Seal { file } => Analysed::Seal { file },
        })
        .collect();

    let mut transaction = locked(client)?;
    let mut report = ApplyReport::default();
    let mut stats = StatsDelta::default();
    let mut pending = Vec::new();
    for change in analysed {
        match change {
            Analysed::Remove { path } => {
                report.chunks_removed +=
                    delete_file(&mut transaction, &path, index, &fields, &mut stats)?;
            }
            Analysed::Touch { file } => touch_file(&mut transaction, &file)?,
            Analysed::Upsert {
                file,
                documents,
                chunks,
            } => {
                let stored: Option<String> = transaction
                    .query_opt(
                        "SELECT content_hash FROM files WHERE path = $1",
                        &[&file.path],
                    )?
                    .map(|row| row.get(0));
                if stored.as_deref() == Some(file.content_hash.as_str()) {
                    // Another indexer stored this content first.
                    touch_file(&mut transaction, &file)?;
                    continue;
                }
                report.chunks_removed +=
                    delete_file(&mut transaction, &file.path, index, &fields, &mut stats)?;
                insert_file(&mut transaction, &file)?;
                pending.extend(insert_documents(
                    &mut transaction,
                    &file.path,
                    &documents,
                    chunks,
                    &mut report,
                )?);
            }
            Analysed::Append {
                path,
                documents,
                chunks,
            } => pending.extend(insert_documents(
                &mut transaction,
                &path,
                &documents,
                chunks,
                &mut report,
            )?),
            Analysed::Seal { file } => seal_file(&mut transaction, &file)?,
        }
    }
    for batch in pending.chunks(CHUNKS_PER_INSERT) {
        report.chunks_added += insert_chunks(&mut transaction, batch, index, &fields, &mut stats)?;
    }
    stats.write(&mut transaction)?;
    transaction.execute(
        "INSERT INTO shiori_meta (key, value) VALUES ($1, '1')
         ON CONFLICT (key) DO UPDATE SET value = (shiori_meta.value::BIGINT + 1)::TEXT",
        &[&GENERATION],
    )?;
    transaction.commit()?;
    // BM25 terms (or the pg_textsearch index) and the HNSW index are written inside the same
    // statements.
    report.timings.tables = started.elapsed();
    Ok(report)
}

fn analyse(analyzers: &Analyzers, chunks: Vec<(Chunk, Vec<f32>)>) -> Vec<NewChunk> {
    chunks
        .into_iter()
        .map(|(chunk, vector)| {
            let terms = analyzers.chunk_terms(&chunk.title, &chunk.text);
            NewChunk {
                bm25_text: token_text::chunk_text(&terms),
                terms,
                chunk,
                vector,
            }
        })
        .collect()
}

/// Stores a file's documents, skipping (and reporting) those another file already holds;
/// returns the chunks of the documents it stored, to be inserted.
fn insert_documents(
    transaction: &mut Transaction,
    path: &str,
    documents: &[Document],
    chunks: Vec<NewChunk>,
    report: &mut ApplyReport,
) -> Result<Vec<NewChunk>, PostgresError> {
    let mut stored = HashSet::new();
    for document in documents {
        let owner: Option<String> = transaction
            .query_opt(
                "SELECT file_path FROM documents WHERE doc_id = $1",
                &[&document.doc_id],
            )?
            .map(|row| row.get(0));
        if let Some(existing_path) = owner {
            report.duplicates.push(DuplicateDocument {
                doc_id: document.doc_id.clone(),
                path: path.to_string(),
                existing_path,
            });
            continue;
        }
        insert_document(transaction, path, document)?;
        stored.insert(document.doc_id.clone());
    }
    Ok(chunks
        .into_iter()
        .filter(|c| stored.contains(&c.chunk.doc_id))
        .collect())
}

enum Analysed {
    Upsert {
        file: FileRecord,
        documents: Vec<Document>,
        chunks: Vec<NewChunk>,
    },
    Append {
        path: String,
        documents: Vec<Document>,
        chunks: Vec<NewChunk>,
    },
    Seal {
        file: FileRecord,
    },
    Remove {
        path: String,
    },
    Touch {
        file: FileRecord,
    },
}

/// Deletes a file with its documents, chunks and terms; returns how many chunks went.
fn delete_file(
    transaction: &mut Transaction,
    path: &str,
    index: &KeywordIndex,
    fields: &[i16],
    stats: &mut StatsDelta,
) -> Result<usize, PostgresError> {
    let removed = transaction.query(
        "DELETE FROM chunks WHERE doc_id IN (SELECT doc_id FROM documents WHERE file_path = $1)
         RETURNING key, term_lengths, COALESCE(metadata->>'groups', ''), bm25_text",
        &[&path],
    )?;
    let keys: Vec<i64> = removed.iter().map(|row| row.get(0)).collect();
    for row in &removed {
        stats.add(fields, &row.get::<_, Vec<i32>>(1), -1);
        let groups: &str = row.get(2);
        let terms: HashSet<(i16, String)> = token_text::words(row.get(3))
            .filter_map(token_text::decode)
            .collect();
        for (field, term) in &terms {
            stats.count_term(*field, term, groups, -1);
        }
    }
    if index.keeps_term_rows() && !keys.is_empty() {
        transaction.execute("DELETE FROM chunk_terms WHERE key = ANY($1)", &[&keys])?;
    }
    transaction.execute("DELETE FROM files WHERE path = $1", &[&path])?;
    Ok(removed.len())
}

fn touch_file(transaction: &mut Transaction, file: &FileRecord) -> Result<(), PostgresError> {
    update_file(
        transaction,
        file,
        "UPDATE files SET size = $2, modified_ns = $3, read_at_ns = $4
         WHERE path = $1 AND content_hash = $5",
    )
}

/// Records the real hash and stamps of a file written in parts.
fn seal_file(transaction: &mut Transaction, file: &FileRecord) -> Result<(), PostgresError> {
    update_file(
        transaction,
        file,
        "UPDATE files SET content_hash = $5, size = $2, modified_ns = $3, read_at_ns = $4
         WHERE path = $1",
    )
}

/// Runs `sql` with the file's path, size, stamps and hash as $1 to $5.
fn update_file(
    transaction: &mut Transaction,
    file: &FileRecord,
    sql: &str,
) -> Result<(), PostgresError> {
    transaction.execute(
        sql,
        &[
            &file.path,
            &(file.size as i64),
            &file.modified_ns,
            &file.read_at_ns,
            &file.content_hash,
        ],
    )?;
    Ok(())
}

fn insert_file(transaction: &mut Transaction, file: &FileRecord) -> Result<(), PostgresError> {
    transaction.execute(
        "INSERT INTO files (path, content_hash, size, modified_ns, read_at_ns)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &file.path,
            &file.content_hash,
            &(file.size as i64),
            &file.modified_ns,
            &file.read_at_ns,
        ],
    )?;
    Ok(())
}

fn insert_document(
    transaction: &mut Transaction,
    file_path: &str,
    document: &Document,
) -> Result<(), PostgresError> {
    transaction.execute(
        "INSERT INTO documents (doc_id, file_path, title, source, modified, metadata)
         VALUES ($1, $2, $3, $4, $5, $6::TEXT::JSONB)",
        &[
            &document.doc_id,
            &file_path,
            &document.title,
            &document.source,
            &document.modified,
            &serde_json::to_string(&document.metadata)?,
        ],
    )?;
    Ok(())
}

/// pgvector's text form; Rust's shortest round-trip float formatting keeps every bit.
fn vector_text(vector: &[f32]) -> String {
    let values: Vec<String> = vector.iter().map(f32::to_string).collect();
    format!("[{}]", values.join(","))
}

/// Inserts chunks, and their terms where `index` keeps term rows, with one multi-row statement
/// each; without term rows, by COPY. Returns how many.
fn insert_chunks(
    transaction: &mut Transaction,
    batch: &[NewChunk],
    index: &KeywordIndex,
    fields: &[i16],
    stats: &mut StatsDelta,
) -> Result<usize, PostgresError> {
    for new in batch {
        stats.add(fields, &lengths(&new.terms), 1);
        let groups = new
            .chunk
            .metadata
            .get(GROUPS_KEY)
            .map_or("", String::as_str);
        for field in &new.terms {
            for term in field.frequencies.keys() {
                stats.count_term(field.field, term, groups, 1);
            }
        }
    }
    if !index.keeps_term_rows() {
        return copy_chunks(transaction, batch);
    }
    let mut columns = ChunkColumns::default();
    for new in batch {
        columns.push(new)?;
    }
    let rows = transaction.query(
        "INSERT INTO chunks (chunk_id, doc_id, idx, total, title, source, text, modified,
                             content_hash, metadata, embedding, term_lengths, bm25_text)
         SELECT u.chunk_id, u.doc_id, u.idx, u.total, u.title, u.source, u.text, u.modified,
                u.content_hash, u.metadata::JSONB, u.embedding::vector,
                ARRAY[u.length0, u.length1, u.length2], u.bm25_text
         FROM unnest($1::TEXT[], $2::TEXT[], $3::INTEGER[], $4::INTEGER[], $5::TEXT[],
                     $6::TEXT[], $7::TEXT[], $8::BIGINT[], $9::TEXT[], $10::TEXT[], $11::TEXT[],
                     $12::INTEGER[], $13::INTEGER[], $14::INTEGER[], $15::TEXT[])
              AS u(chunk_id, doc_id, idx, total, title, source, text, modified, content_hash,
                   metadata, embedding, length0, length1, length2, bm25_text)
         RETURNING key, chunk_id",
        &[
            &columns.chunk_ids,
            &columns.doc_ids,
            &columns.indexes,
            &columns.totals,
            &columns.titles,
            &columns.sources,
            &columns.texts,
            &columns.modified,
            &columns.hashes,
            &columns.metadata,
            &columns.embeddings,
            &columns.lengths[0],
            &columns.lengths[1],
            &columns.lengths[2],
            &columns.bm25_texts,
        ],
    )?;
    let keys: HashMap<String, i64> = rows.iter().map(|row| (row.get(1), row.get(0))).collect();
    let mut terms = TermColumns::default();
    for new in batch {
        if let Some(key) = keys.get(&new.chunk.chunk_id) {
            for field in &new.terms {
                for (term, tf) in &field.frequencies {
                    terms.push(field.field, term, *key, *tf, field.length);
                    if terms.len() == TERMS_PER_INSERT {
                        std::mem::take(&mut terms).insert(transaction)?;
                    }
                }
            }
        }
    }
    terms.insert(transaction)?;
    Ok(rows.len())
}

/// Chunk rows by COPY, which parses them faster than a multi-row insert; nothing needs their
/// keys back.
fn copy_chunks(transaction: &mut Transaction, batch: &[NewChunk]) -> Result<usize, PostgresError> {
    let mut rows = CopyRows::new();
    for new in batch {
        let chunk = &new.chunk;
        let lengths = lengths(&new.terms).map(|length| length.to_string());
        rows.text(&chunk.chunk_id)
            .text(&chunk.doc_id)
            .number(i64::from(chunk.index))
            .number(i64::from(chunk.total))
            .text(&chunk.title)
            .text(&chunk.source)
            .text(&chunk.text)
            .number(chunk.modified)
            .text(&chunk.content_hash)
            .text(&serde_json::to_string(&chunk.metadata)?)
            .text(&vector_text(&new.vector))
            .text(&format!("{{{}}}", lengths.join(",")))
            .text(&new.bm25_text);
        rows.end_row();
    }
    rows.send(
        transaction,
        "COPY chunks (chunk_id, doc_id, idx, total, title, source, text, modified, content_hash,
                      metadata, embedding, term_lengths, bm25_text) FROM STDIN",
    )
}

fn lengths(terms: &[FieldTerms]) -> [i32; FIELDS] {
    let mut lengths = [0; FIELDS];
    for field in terms {
        lengths[field.field as usize] = field.length;
    }
    lengths
}

/// Chunk rows as one array per column, for `unnest`.
#[derive(Default)]
struct ChunkColumns {
    chunk_ids: Vec<String>,
    doc_ids: Vec<String>,
    indexes: Vec<i32>,
    totals: Vec<i32>,
    titles: Vec<String>,
    sources: Vec<String>,
    texts: Vec<String>,
    modified: Vec<i64>,
    hashes: Vec<String>,
    metadata: Vec<String>,
    embeddings: Vec<String>,
    lengths: [Vec<i32>; FIELDS],
    bm25_texts: Vec<String>,
}

impl ChunkColumns {
    fn push(&mut self, new: &NewChunk) -> Result<(), PostgresError> {
        let chunk = &new.chunk;
        self.chunk_ids.push(chunk.chunk_id.clone());
        self.doc_ids.push(chunk.doc_id.clone());
        self.indexes.push(chunk.index as i32);
        self.totals.push(chunk.total as i32);
        self.titles.push(chunk.title.clone());
        self.sources.push(chunk.source.clone());
        self.texts.push(chunk.text.clone());
        self.modified.push(chunk.modified);
        self.hashes.push(chunk.content_hash.clone());
        self.metadata.push(serde_json::to_string(&chunk.metadata)?);
        self.embeddings.push(vector_text(&new.vector));
        self.bm25_texts.push(new.bm25_text.clone());
        for (column, length) in self.lengths.iter_mut().zip(lengths(&new.terms)) {
            column.push(length);
        }
        Ok(())
    }
}

/// Term rows as one array per column, for `unnest`.
#[derive(Default)]
struct TermColumns {
    fields: Vec<i16>,
    terms: Vec<String>,
    keys: Vec<i64>,
    frequencies: Vec<i32>,
    lengths: Vec<i32>,
}

impl TermColumns {
    fn len(&self) -> usize {
        self.keys.len()
    }

    fn push(&mut self, field: i16, term: &str, key: i64, tf: i32, length: i32) {
        self.fields.push(field);
        self.terms.push(term.to_string());
        self.keys.push(key);
        self.frequencies.push(tf);
        self.lengths.push(length);
    }

    fn insert(self, transaction: &mut Transaction) -> Result<(), PostgresError> {
        if self.keys.is_empty() {
            return Ok(());
        }
        transaction.execute(
            "INSERT INTO chunk_terms (field, term, key, tf, length)
             SELECT * FROM unnest($1::SMALLINT[], $2::TEXT[], $3::BIGINT[], $4::INTEGER[],
                                  $5::INTEGER[])",
            &[
                &self.fields,
                &self.terms,
                &self.keys,
                &self.frequencies,
                &self.lengths,
            ],
        )?;
        Ok(())
    }
}

/// Swaps every chunk's vector in one transaction under the write lock, rebuilding the HNSW
/// index for the new vectors' size, and adopts the configured embedder.
pub(crate) fn replace_vectors(
    client: &mut Client,
    options: &StoreOptions,
    hnsw: &HnswParams,
    vectors: &[(u64, Vec<f32>)],
) -> Result<(), PostgresError> {
    let mut transaction = locked(client)?;
    // The old index casts to the old vectors' size, which the new ones may not have.
    schema::drop_vector_indexes(&mut transaction)?;
    for batch in vectors.chunks(CHUNKS_PER_INSERT) {
        let keys: Vec<i64> = batch.iter().map(|(key, _)| *key as i64).collect();
        let embeddings: Vec<String> = batch.iter().map(|(_, v)| vector_text(v)).collect();
        transaction.execute(
            "UPDATE chunks SET embedding = u.embedding::vector
             FROM unnest($1::BIGINT[], $2::TEXT[]) AS u(key, embedding)
             WHERE chunks.key = u.key",
            &[&keys, &embeddings],
        )?;
    }
    record_embedder(&mut transaction, options)?;
    schema::ensure_vector_index(&mut transaction, options.dimension, hnsw)?;
    transaction.commit()?;
    Ok(())
}
