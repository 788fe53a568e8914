//! Queries: file records, chunks, filters, and the dense search.

use crate::filters::{self, Param};
use crate::PostgresError;
use pgvector::Vector;
use postgres::{GenericClient, Row};
use shiori_core::{Chunk, Document, Filters};
use shiori_store::{FileRecord, StoredFile};
use std::collections::HashMap;

pub(crate) fn count(client: &mut impl GenericClient, table: &str) -> Result<u64, PostgresError> {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    Ok(client.query_one(&sql, &[])?.get::<_, i64>(0) as u64)
}

/// Whether the store holds no chunk (without counting them).
pub(crate) fn is_empty(client: &mut impl GenericClient) -> Result<bool, PostgresError> {
    Ok(client
        .query_one("SELECT NOT EXISTS (SELECT 1 FROM chunks)", &[])?
        .get(0))
}

/// How many files, documents and chunks have a chunk that `filters` accepts.
pub(crate) fn counts_matching(
    client: &mut impl GenericClient,
    filters: &Filters,
) -> Result<[u64; 3], PostgresError> {
    let mut params: Vec<Param> = Vec::new();
    let condition = filters::condition(filters, &mut params);
    let sql = format!(
        "SELECT COUNT(DISTINCT d.file_path), COUNT(DISTINCT c.doc_id), COUNT(*)
         FROM chunks c JOIN documents d ON d.doc_id = c.doc_id WHERE {condition}"
    );
    let row = client.query_one(&sql, &filters::refs(&params))?;
    Ok([0, 1, 2].map(|column| row.get::<_, i64>(column) as u64))
}

pub(crate) fn meta(
    client: &mut impl GenericClient,
    key: &str,
) -> Result<Option<String>, PostgresError> {
    Ok(client
        .query_opt("SELECT value FROM shiori_meta WHERE key = $1", &[&key])?
        .map(|row| row.get(0)))
}

const FILE_COLUMNS: &str = "path, content_hash, size, modified_ns, read_at_ns";

fn file_from_row(row: &Row) -> FileRecord {
    FileRecord {
        path: row.get(0),
        content_hash: row.get(1),
        size: row.get::<_, i64>(2) as u64,
        modified_ns: row.get(3),
        read_at_ns: row.get(4),
    }
}

/// Every stored file's record, by path.
pub(crate) fn file_records(
    client: &mut impl GenericClient,
) -> Result<HashMap<String, FileRecord>, PostgresError> {
    Ok(client
        .query(&format!("SELECT {FILE_COLUMNS} FROM files"), &[])?
        .iter()
        .map(|row| {
            let record = file_from_row(row);
            (record.path.clone(), record)
        })
        .collect())
}

pub(crate) fn file_record(
    client: &mut impl GenericClient,
    path: &str,
) -> Result<Option<FileRecord>, PostgresError> {
    Ok(client
        .query_opt(
            &format!("SELECT {FILE_COLUMNS} FROM files WHERE path = $1"),
            &[&path],
        )?
        .as_ref()
        .map(file_from_row))
}

pub(crate) fn file_project(
    client: &mut impl GenericClient,
    path: &str,
) -> Result<Option<String>, PostgresError> {
    Ok(client
        .query_opt(
            "SELECT metadata->>'project' FROM documents WHERE file_path = $1 LIMIT 1",
            &[&path],
        )?
        .and_then(|row| row.get(0)))
}

pub(crate) fn file_paths(
    client: &mut impl GenericClient,
    filters: &Filters,
) -> Result<Vec<String>, PostgresError> {
    let mut params: Vec<Param> = Vec::new();
    let condition = filters::condition(filters, &mut params);
    let sql = if filters.is_empty() {
        "SELECT path FROM files ORDER BY path".to_string()
    } else {
        format!(
            "SELECT DISTINCT d.file_path FROM documents d JOIN chunks c ON c.doc_id = d.doc_id
             WHERE {condition} ORDER BY d.file_path"
        )
    };
    Ok(client
        .query(&sql, &filters::refs(&params))?
        .iter()
        .map(|row| row.get(0))
        .collect())
}

const CHUNK_COLUMNS: &str = "c.key, c.chunk_id, c.doc_id, c.idx, c.total, c.title, c.source, \
                             c.text, c.modified, c.content_hash, c.metadata::TEXT";

fn chunk_from_row(row: &Row) -> Result<(u64, Chunk), PostgresError> {
    let metadata: String = row.get(10);
    Ok((
        row.get::<_, i64>(0) as u64,
        Chunk {
            chunk_id: row.get(1),
            doc_id: row.get(2),
            index: row.get::<_, i32>(3) as u32,
            total: row.get::<_, i32>(4) as u32,
            title: row.get(5),
            source: row.get(6),
            text: row.get(7),
            modified: row.get(8),
            content_hash: row.get(9),
            metadata: serde_json::from_str(&metadata)?,
        },
    ))
}

pub(crate) fn chunks_by_keys(
    client: &mut impl GenericClient,
    keys: &[u64],
) -> Result<Vec<(u64, Chunk)>, PostgresError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let wanted: Vec<i64> = keys.iter().map(|k| *k as i64).collect();
    let sql = format!("SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.key = ANY($1)");
    let mut found: HashMap<u64, Chunk> = client
        .query(&sql, &[&wanted])?
        .iter()
        .map(chunk_from_row)
        .collect::<Result<_, _>>()?;
    Ok(keys
        .iter()
        .filter_map(|key| found.remove(key).map(|chunk| (*key, chunk)))
        .collect())
}

pub(crate) fn chunks_of_document(
    client: &mut impl GenericClient,
    doc_id: &str,
) -> Result<Vec<Chunk>, PostgresError> {
    let sql = format!("SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.doc_id = $1 ORDER BY c.idx");
    client
        .query(&sql, &[&doc_id])?
        .iter()
        .map(|row| chunk_from_row(row).map(|(_, chunk)| chunk))
        .collect()
}

pub(crate) fn stored_file(
    client: &mut impl GenericClient,
    path: &str,
) -> Result<Option<StoredFile>, PostgresError> {
    let Some(file) = file_record(client, path)? else {
        return Ok(None);
    };
    let documents = client
        .query(
            "SELECT doc_id, title, source, modified, metadata::TEXT FROM documents
             WHERE file_path = $1 ORDER BY doc_id",
            &[&path],
        )?
        .iter()
        .map(|row| {
            Ok(Document {
                doc_id: row.get(0),
                title: row.get(1),
                source: row.get(2),
                text: String::new(),
                modified: row.get(3),
                metadata: serde_json::from_str(row.get::<_, &str>(4))?,
            })
        })
        .collect::<Result<Vec<_>, PostgresError>>()?;
    let sql = format!(
        "SELECT {CHUNK_COLUMNS}, c.embedding FROM chunks c
         JOIN documents d ON d.doc_id = c.doc_id
         WHERE d.file_path = $1 ORDER BY c.doc_id, c.idx"
    );
    let chunks = client
        .query(&sql, &[&path])?
        .iter()
        .map(|row| {
            let (_, chunk) = chunk_from_row(row)?;
            Ok((chunk, row.get::<_, Vector>(11).to_vec()))
        })
        .collect::<Result<Vec<_>, PostgresError>>()?;
    Ok(Some(StoredFile {
        file,
        documents,
        chunks,
    }))
}

pub(crate) fn keys_matching(
    client: &mut impl GenericClient,
    filters: &Filters,
) -> Result<Vec<u64>, PostgresError> {
    let mut params: Vec<Param> = Vec::new();
    let condition = filters::condition(filters, &mut params);
    let sql = format!("SELECT c.key FROM chunks c WHERE {condition} ORDER BY c.key");
    Ok(client
        .query(&sql, &filters::refs(&params))?
        .iter()
        .map(|row| row.get::<_, i64>(0) as u64)
        .collect())
}

/// The `k` nearest chunks by cosine similarity through the HNSW index (iterative scans keep a
/// filtered search from coming back short).
pub(crate) fn dense_search(
    client: &mut impl GenericClient,
    dimension: usize,
    query: &[f32],
    k: usize,
    filters: &Filters,
) -> Result<Vec<(u64, f32)>, PostgresError> {
    if k == 0 {
        return Ok(Vec::new());
    }
    let mut params: Vec<Param> = vec![Box::new(Vector::from(query.to_vec())), Box::new(k as i64)];
    let condition = filters::condition(filters, &mut params);
    let distance = cosine_distance(dimension);
    let sql = format!(
        "SELECT c.key, ({distance})::REAL FROM chunks c WHERE {condition}
         ORDER BY {distance} LIMIT $2"
    );
    let rows = if filters.is_empty() {
        client.query(&sql, &filters::refs(&params))?
    } else {
        // The planner cannot estimate how many chunks a filter on JSON metadata keeps (it
        // guessed 1% for a reader who may read 90%) and would compare the query with every
        // vector; the HNSW index's iterative scan finds the filtered neighbours instead, or
        // another index when the filter has one (a document id, a source prefix).
        let mut transaction = client.transaction()?;
        transaction.batch_execute("SET LOCAL enable_seqscan = off")?;
        let rows = transaction.query(&sql, &filters::refs(&params))?;
        transaction.commit()?;
        rows
    };
    let mut hits: Vec<(u64, f32)> = rows
        .iter()
        .map(|row| (row.get::<_, i64>(0) as u64, 1.0 - row.get::<_, f32>(1)))
        .collect();
    // Iterative scans may return neighbours slightly out of order.
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(hits)
}

/// The cosine distance of a chunk's vector from the query vector, `$1`.
fn cosine_distance(dimension: usize) -> String {
    format!("c.embedding::vector({dimension}) <=> $1::vector({dimension})")
}

/// The cosine [`dense_search`] gives each of `keys` that is stored: the same expression, on
/// those rows only.
pub(crate) fn dense_scores(
    client: &mut impl GenericClient,
    dimension: usize,
    query: &[f32],
    keys: &[u64],
) -> Result<Vec<(u64, f32)>, PostgresError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let wanted: Vec<i64> = keys.iter().map(|key| *key as i64).collect();
    let sql = format!(
        "SELECT c.key, ({})::REAL FROM chunks c WHERE c.key = ANY($2)",
        cosine_distance(dimension)
    );
    Ok(client
        .query(&sql, &[&Vector::from(query.to_vec()), &wanted])?
        .iter()
        .map(|row| (row.get::<_, i64>(0) as u64, 1.0 - row.get::<_, f32>(1)))
        .collect())
}

pub(crate) fn embedding_inputs(
    client: &mut impl GenericClient,
) -> Result<Vec<(u64, String, String)>, PostgresError> {
    Ok(client
        .query(
            "SELECT key, content_hash, title, text FROM chunks ORDER BY key",
            &[],
        )?
        .iter()
        .map(|row| {
            (
                row.get::<_, i64>(0) as u64,
                row.get(1),
                shiori_core::embedding_input(row.get(2), row.get(3)),
            )
        })
        .collect())
}
