//! The SQLite tables that are the source of truth: files, documents, chunks (with vectors), meta.

use crate::{Counts, SqliteError};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction};
use shiori_core::{Chunk, Document, Filters};
use shiori_store::{FileRecord, StoreError};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

const SCHEMA_VERSION: &str = "1";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    modified INTEGER NOT NULL, -- nanoseconds since the Unix epoch
    indexed_at INTEGER NOT NULL -- when the file was read, nanoseconds
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    file_path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    modified INTEGER NOT NULL,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_by_file ON documents(file_path);
CREATE TABLE IF NOT EXISTS chunks (
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    total INTEGER NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    text TEXT NOT NULL,
    modified INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    metadata TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks(doc_id);
";

/// A chunk as read back for rebuilding the derived indexes.
pub(crate) struct StoredChunk {
    pub key: u64,
    pub title: String,
    pub text: String,
    pub vector: Vec<f32>,
}

pub(crate) fn open(path: &Path) -> Result<Connection, SqliteError> {
    let connection = Connection::open(path)?;
    connection.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;
         PRAGMA busy_timeout = 5000;",
    )?;
    connection.execute_batch(SCHEMA)?;
    match get_meta(&connection, "schema_version")? {
        None => set_meta(&connection, "schema_version", SCHEMA_VERSION)?,
        Some(version) if version != SCHEMA_VERSION => {
            return Err(SqliteError::Store(StoreError::SchemaVersion {
                found: version,
                expected: SCHEMA_VERSION.to_string(),
            }))
        }
        Some(_) => {}
    }
    Ok(connection)
}

/// A connection that only reads, and never holds a transaction open: each read sees the
/// latest commit.
pub(crate) fn open_read_only(path: &Path) -> Result<Connection, SqliteError> {
    let connection = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    connection.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(connection)
}

/// Adds one to the counter under `key` (absent: 0).
pub(crate) fn count_commit(connection: &Connection, key: &str) -> Result<(), SqliteError> {
    connection.execute(
        "INSERT INTO meta (key, value) VALUES (?1, '1')
         ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        [key],
    )?;
    Ok(())
}

pub(crate) fn get_meta(connection: &Connection, key: &str) -> Result<Option<String>, SqliteError> {
    Ok(connection
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| {
            row.get(0)
        })
        .optional()?)
}

pub(crate) fn set_meta(connection: &Connection, key: &str, value: &str) -> Result<(), SqliteError> {
    connection.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

pub(crate) fn count(connection: &Connection, table: &str) -> Result<u64, SqliteError> {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    Ok(connection.query_row(&sql, [], |row| row.get::<_, i64>(0))? as u64)
}

const FILE_COLUMNS: &str = "path, content_hash, size, modified, indexed_at";

fn file_from_row(row: &rusqlite::Row) -> rusqlite::Result<FileRecord> {
    Ok(FileRecord {
        path: row.get(0)?,
        content_hash: row.get(1)?,
        size: row.get::<_, i64>(2)? as u64,
        modified_ns: row.get(3)?,
        read_at_ns: row.get(4)?,
    })
}

/// Every stored file's record, by path.
pub(crate) fn file_records(
    connection: &Connection,
) -> Result<HashMap<String, FileRecord>, SqliteError> {
    let mut statement = connection.prepare(&format!("SELECT {FILE_COLUMNS} FROM files"))?;
    let records = statement
        .query_map([], file_from_row)?
        .map(|record| record.map(|r| (r.path.clone(), r)))
        .collect::<Result<_, _>>()?;
    Ok(records)
}

pub(crate) fn file_record(
    connection: &Connection,
    path: &str,
) -> Result<Option<FileRecord>, SqliteError> {
    Ok(connection
        .query_row(
            &format!("SELECT {FILE_COLUMNS} FROM files WHERE path = ?1"),
            [path],
            file_from_row,
        )
        .optional()?)
}

/// Indexed file paths, sorted; with filters, those holding a chunk the filters accept.
pub(crate) fn file_paths(
    connection: &Connection,
    filters: &Filters,
) -> Result<Vec<String>, SqliteError> {
    let (condition, values) = condition(filters)?;
    let sql = if filters.is_empty() {
        "SELECT path FROM files ORDER BY path".to_string()
    } else {
        format!(
            "SELECT DISTINCT file_path FROM documents
             WHERE doc_id IN (SELECT doc_id FROM chunks WHERE {condition}) ORDER BY file_path"
        )
    };
    let mut statement = connection.prepare(&sql)?;
    let paths = statement
        .query_map(rusqlite::params_from_iter(values), |row| row.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(paths)
}

/// Deletes a file with its documents and chunks; returns the removed chunk keys.
pub(crate) fn delete_file(transaction: &Transaction, path: &str) -> Result<Vec<u64>, SqliteError> {
    let keys = {
        let mut statement = transaction.prepare_cached(
            "SELECT c.key FROM chunks c JOIN documents d ON c.doc_id = d.doc_id
             WHERE d.file_path = ?1",
        )?;
        let keys = statement
            .query_map([path], |row| row.get::<_, i64>(0))?
            .map(|key| key.map(|k| k as u64))
            .collect::<Result<Vec<u64>, _>>()?;
        keys
    };
    transaction.execute("DELETE FROM files WHERE path = ?1", [path])?;
    Ok(keys)
}

pub(crate) fn insert_file(transaction: &Transaction, file: &FileRecord) -> Result<(), SqliteError> {
    transaction.execute(
        "INSERT INTO files (path, content_hash, size, modified, indexed_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            file.path,
            file.content_hash,
            file.size as i64,
            file.modified_ns,
            file.read_at_ns
        ],
    )?;
    Ok(())
}

/// Records new stamps for a file whose content is unchanged.
pub(crate) fn touch_file(transaction: &Transaction, file: &FileRecord) -> Result<(), SqliteError> {
    update_file(
        transaction,
        file,
        "UPDATE files SET size = ?2, modified = ?3, indexed_at = ?4
         WHERE path = ?1 AND content_hash = ?5",
    )
}

/// Records the real hash and stamps of a file written in parts.
pub(crate) fn seal_file(transaction: &Transaction, file: &FileRecord) -> Result<(), SqliteError> {
    update_file(
        transaction,
        file,
        "UPDATE files SET content_hash = ?5, size = ?2, modified = ?3, indexed_at = ?4
         WHERE path = ?1",
    )
}

/// Runs `sql` with the file's path, size, stamps and hash as ?1 to ?5.
fn update_file(transaction: &Transaction, file: &FileRecord, sql: &str) -> Result<(), SqliteError> {
    transaction.execute(
        sql,
        params![
            file.path,
            file.size as i64,
            file.modified_ns,
            file.read_at_ns,
            file.content_hash
        ],
    )?;
    Ok(())
}

/// The file that already holds `doc_id`, if any.
pub(crate) fn document_owner(
    transaction: &Transaction,
    doc_id: &str,
) -> Result<Option<String>, SqliteError> {
    Ok(transaction
        .query_row(
            "SELECT file_path FROM documents WHERE doc_id = ?1",
            [doc_id],
            |row| row.get(0),
        )
        .optional()?)
}

pub(crate) fn insert_document(
    transaction: &Transaction,
    file_path: &str,
    document: &Document,
) -> Result<(), SqliteError> {
    transaction
        .prepare_cached(
            "INSERT INTO documents (doc_id, file_path, title, source, modified, metadata)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            document.doc_id,
            file_path,
            document.title,
            document.source,
            document.modified,
            serde_json::to_string(&document.metadata)?,
        ])?;
    Ok(())
}

pub(crate) fn insert_chunk(
    transaction: &Transaction,
    chunk: &Chunk,
    vector: &[f32],
) -> Result<u64, SqliteError> {
    transaction
        .prepare_cached(
            "INSERT INTO chunks (chunk_id, doc_id, idx, total, title, source, text, modified,
                                 content_hash, metadata, vector)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?
        .execute(params![
            chunk.chunk_id,
            chunk.doc_id,
            chunk.index,
            chunk.total,
            chunk.title,
            chunk.source,
            chunk.text,
            chunk.modified,
            chunk.content_hash,
            serde_json::to_string(&chunk.metadata)?,
            vector_to_blob(vector),
        ])?;
    Ok(transaction.last_insert_rowid() as u64)
}

/// The first byte of a vector stored as half-precision floats. Such a blob has an odd length,
/// which no blob of the earlier form (plain little-endian f32) has, so both read back.
const HALF_PRECISION: u8 = 1;

/// Half the bytes of f32; a unit vector's cosines move by well under 1e-3.
fn vector_to_blob(vector: &[f32]) -> Vec<u8> {
    let mut blob = Vec::with_capacity(1 + 2 * vector.len());
    blob.push(HALF_PRECISION);
    for value in vector {
        blob.extend(half::f16::from_f32(*value).to_le_bytes());
    }
    blob
}

fn blob_to_vector(blob: &[u8]) -> Vec<f32> {
    match blob.split_first() {
        Some((&HALF_PRECISION, halves)) if blob.len() % 2 == 1 => halves
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        _ => blob
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    }
}

const CHUNK_COLUMNS: &str =
    "key, chunk_id, doc_id, idx, total, title, source, text, modified, content_hash, metadata";

fn chunk_from_row(row: &rusqlite::Row) -> rusqlite::Result<(u64, Chunk)> {
    let metadata: String = row.get(10)?;
    Ok((
        row.get::<_, i64>(0)? as u64,
        Chunk {
            chunk_id: row.get(1)?,
            doc_id: row.get(2)?,
            index: row.get(3)?,
            total: row.get(4)?,
            title: row.get(5)?,
            source: row.get(6)?,
            text: row.get(7)?,
            modified: row.get(8)?,
            content_hash: row.get(9)?,
            // Written by this module from a BTreeMap; an unreadable value only loses metadata.
            metadata: serde_json::from_str::<BTreeMap<String, String>>(&metadata)
                .unwrap_or_default(),
        },
    ))
}

/// Chunks by key, in the order of `keys`; keys no longer stored are skipped.
pub(crate) fn chunks_by_keys(
    connection: &Connection,
    keys: &[u64],
) -> Result<Vec<(u64, Chunk)>, SqliteError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders = vec!["?"; keys.len()].join(",");
    let sql = format!("SELECT {CHUNK_COLUMNS} FROM chunks WHERE key IN ({placeholders})");
    let mut statement = connection.prepare(&sql)?;
    let mut found: BTreeMap<u64, Chunk> = statement
        .query_map(
            rusqlite::params_from_iter(keys.iter().map(|k| *k as i64)),
            chunk_from_row,
        )?
        .collect::<Result<_, _>>()?;
    Ok(keys
        .iter()
        .filter_map(|key| found.remove(key).map(|chunk| (*key, chunk)))
        .collect())
}

/// Chunks of one document, in order.
pub(crate) fn chunks_of_document(
    connection: &Connection,
    doc_id: &str,
) -> Result<Vec<Chunk>, SqliteError> {
    let sql = format!("SELECT {CHUNK_COLUMNS} FROM chunks WHERE doc_id = ?1 ORDER BY idx");
    let mut statement = connection.prepare(&sql)?;
    let chunks = statement
        .query_map([doc_id], chunk_from_row)?
        .map(|row| row.map(|(_, chunk)| chunk))
        .collect::<Result<_, _>>()?;
    Ok(chunks)
}

/// The metadata key naming the project a document was indexed through.
pub(crate) const PROJECT_KEY: &str = "project";

/// The project a stored file's documents were indexed through, if any.
pub(crate) fn file_project(
    connection: &Connection,
    path: &str,
) -> Result<Option<String>, SqliteError> {
    let project = connection
        .query_row(
            &format!(
                "SELECT json_extract(metadata, '$.{PROJECT_KEY}') FROM documents
                 WHERE file_path = ?1 LIMIT 1"
            ),
            [path],
            |row| row.get::<_, Option<String>>(0),
        )
        .optional()?;
    Ok(project.flatten())
}

/// A chunk the reader may see: it names no groups, or one of the JSON array of groups bound to
/// the parameter (the stored form is comma-separated, see [`shiori_core::joined_groups`]).
const READABLE: &str = "(COALESCE(json_extract(metadata, '$.groups'), '') = ''
    OR EXISTS (SELECT 1 FROM json_each(?) AS readable
               WHERE instr(',' || json_extract(metadata, '$.groups') || ',',
                           ',' || readable.value || ',') > 0))";

/// `filters` as a condition on `chunks`, with its parameters.
fn condition(filters: &Filters) -> Result<(String, Vec<rusqlite::types::Value>), SqliteError> {
    let mut conditions = vec!["1 = 1".to_string()];
    let mut values: Vec<rusqlite::types::Value> = Vec::new();
    if !filters.doc_ids.is_empty() {
        let placeholders = vec!["?"; filters.doc_ids.len()].join(",");
        conditions.push(format!("doc_id IN ({placeholders})"));
        values.extend(filters.doc_ids.iter().cloned().map(Into::into));
    }
    if let Some(prefix) = &filters.source_prefix {
        conditions.push("substr(source, 1, length(?)) = ?".to_string());
        values.push(prefix.clone().into());
        values.push(prefix.clone().into());
    }
    for (key, value) in &filters.metadata {
        conditions.push("json_extract(metadata, ?) = ?".to_string());
        values.push(format!("$.\"{}\"", key.replace('"', "")).into());
        values.push(value.clone().into());
    }
    if !filters.projects.is_empty() {
        let placeholders = vec!["?"; filters.projects.len()].join(",");
        conditions.push(format!(
            "json_extract(metadata, '$.{PROJECT_KEY}') IN ({placeholders})"
        ));
        values.extend(filters.projects.iter().cloned().map(Into::into));
    }
    if let Some(groups) = filters.access.groups() {
        conditions.push(READABLE.to_string());
        values.push(serde_json::to_string(groups)?.into());
    }
    if let Some(after) = filters.modified_after {
        conditions.push("modified >= ?".to_string());
        values.push(after.into());
    }
    if let Some(before) = filters.modified_before {
        conditions.push("modified <= ?".to_string());
        values.push(before.into());
    }
    Ok((conditions.join(" AND "), values))
}

/// Keys of the chunks that `filters` accepts, evaluated in SQL.
pub(crate) fn keys_matching(
    connection: &Connection,
    filters: &Filters,
) -> Result<Vec<u64>, SqliteError> {
    let (condition, values) = condition(filters)?;
    let sql = format!("SELECT key FROM chunks WHERE {condition}");
    let mut statement = connection.prepare(&sql)?;
    let keys = statement
        .query_map(rusqlite::params_from_iter(values), |row| {
            row.get::<_, i64>(0)
        })?
        .map(|key| key.map(|k| k as u64))
        .collect::<Result<_, _>>()?;
    Ok(keys)
}

/// How many files, documents and chunks have a chunk that `filters` accepts.
pub(crate) fn counts_matching(
    connection: &Connection,
    filters: &Filters,
) -> Result<Counts, SqliteError> {
    let (condition, values) = condition(filters)?;
    let sql = format!(
        "SELECT COUNT(DISTINCT d.file_path), COUNT(DISTINCT c.doc_id), COUNT(*)
         FROM (SELECT doc_id FROM chunks WHERE {condition}) c
         JOIN documents d ON d.doc_id = c.doc_id"
    );
    Ok(
        connection.query_row(&sql, rusqlite::params_from_iter(values), |row| {
            Ok(Counts {
                files: row.get::<_, i64>(0)? as u64,
                documents: row.get::<_, i64>(1)? as u64,
                chunks: row.get::<_, i64>(2)? as u64,
            })
        })?,
    )
}

/// Every chunk with its vector, `batch` at a time, for rebuilding the derived indexes.
pub(crate) fn for_each_chunk_batch(
    connection: &Connection,
    batch: usize,
    mut visit: impl FnMut(Vec<StoredChunk>) -> Result<(), SqliteError>,
) -> Result<(), SqliteError> {
    let mut statement =
        connection.prepare("SELECT key, title, text, vector FROM chunks ORDER BY key")?;
    let mut rows = statement.query([])?;
    let mut pending = Vec::with_capacity(batch);
    while let Some(row) = rows.next()? {
        let blob: Vec<u8> = row.get(3)?;
        pending.push(StoredChunk {
            key: row.get::<_, i64>(0)? as u64,
            title: row.get(1)?,
            text: row.get(2)?,
            vector: blob_to_vector(&blob),
        });
        if pending.len() == batch {
            visit(std::mem::replace(&mut pending, Vec::with_capacity(batch)))?;
        }
    }
    if !pending.is_empty() {
        visit(pending)?;
    }
    Ok(())
}

/// `(key, content_hash, embedding input)` of every chunk, for re-embedding.
pub(crate) fn chunk_texts(
    connection: &Connection,
) -> Result<Vec<(u64, String, String)>, SqliteError> {
    let mut statement =
        connection.prepare("SELECT key, content_hash, title, text FROM chunks ORDER BY key")?;
    let rows = statement
        .query_map([], |row| {
            let title: String = row.get(2)?;
            let text: String = row.get(3)?;
            Ok((
                row.get::<_, i64>(0)? as u64,
                row.get(1)?,
                shiori_core::embedding_input(&title, &text),
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

pub(crate) fn update_vectors(
    transaction: &Transaction,
    vectors: &[(u64, Vec<f32>)],
) -> Result<(), SqliteError> {
    let mut statement =
        transaction.prepare_cached("UPDATE chunks SET vector = ?1 WHERE key = ?2")?;
    for (key, vector) in vectors {
        statement.execute(params![vector_to_blob(vector), *key as i64])?;
    }
    Ok(())
}

/// The documents stored from one file (without text, which only chunks keep).
pub(crate) fn documents_of_file(
    connection: &Connection,
    path: &str,
) -> Result<Vec<Document>, SqliteError> {
    let mut statement = connection.prepare(
        "SELECT doc_id, title, source, modified, metadata FROM documents
         WHERE file_path = ?1 ORDER BY doc_id",
    )?;
    let rows = statement
        .query_map([path], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, i64>(3)?,
                row.get::<_, String>(4)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(doc_id, title, source, modified, metadata)| {
            Ok(Document {
                doc_id,
                title,
                source,
                text: String::new(),
                modified,
                metadata: serde_json::from_str(&metadata)?,
            })
        })
        .collect()
}

/// The chunks of one document with their vectors, in order.
pub(crate) fn chunks_with_vectors(
    connection: &Connection,
    doc_id: &str,
) -> Result<Vec<(Chunk, Vec<f32>)>, SqliteError> {
    let sql = format!("SELECT {CHUNK_COLUMNS}, vector FROM chunks WHERE doc_id = ?1 ORDER BY idx");
    let mut statement = connection.prepare(&sql)?;
    let chunks = statement
        .query_map([doc_id], |row| {
            let (_, chunk) = chunk_from_row(row)?;
            let blob: Vec<u8> = row.get(11)?;
            Ok((chunk, blob_to_vector(&blob)))
        })?
        .collect::<Result<_, _>>()?;
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_stored_in_half_precision_and_older_f32_blobs_still_read() {
        let vector = [0.6f32, -0.8, 0.0, 1e-3];
        let blob = vector_to_blob(&vector);
        assert_eq!(blob.len(), 1 + 2 * vector.len());
        for (read, written) in blob_to_vector(&blob).iter().zip(vector) {
            assert!((read - written).abs() < 1e-3, "{read} vs {written}");
        }
        let older: Vec<u8> = vector.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(blob_to_vector(&older), vector);
    }
}
