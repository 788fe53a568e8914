//! Versioned schema migrations, applied in order under an advisory lock by `shiori init`, and
//! the HNSW index, whose vector size is the embedder's.

use crate::{HnswParams, PostgresError};
use postgres::{Client, GenericClient};

/// Serialises migrations and index creation between processes.
const MIGRATION_LOCK: i64 = 0x5348_494f_5249_0001;
/// Serialises writers: each apply transaction holds it, so two indexers never interleave.
pub(crate) const WRITE_LOCK: i64 = 0x5348_494f_5249_0002;

/// Migration `n` (1-based) is `MIGRATIONS[n - 1]`; applied ones are never edited, only added to.
const MIGRATIONS: &[&str] = &[
    // 1: files, documents and chunks are the source of truth; `chunk_terms` holds each chunk's
    // analyzer terms with their frequency and the field length, so BM25 runs in SQL;
    // `keyword_stats` keeps per-field chunk counts and total lengths for BM25's averages. Term
    // rows carry no foreign key (a check per row doubled insert time); writers delete them with
    // their chunks.
    "CREATE EXTENSION IF NOT EXISTS vector;
     CREATE TABLE shiori_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE files (
         path TEXT PRIMARY KEY,
         content_hash TEXT NOT NULL,
         size BIGINT NOT NULL,
         modified_ns BIGINT NOT NULL,
         read_at_ns BIGINT NOT NULL
     );
     CREATE TABLE documents (
         doc_id TEXT PRIMARY KEY,
         file_path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
         title TEXT NOT NULL,
         source TEXT NOT NULL,
         modified BIGINT NOT NULL,
         metadata JSONB NOT NULL
     );
     CREATE INDEX documents_by_file ON documents(file_path);
     CREATE TABLE chunks (
         key BIGSERIAL PRIMARY KEY,
         chunk_id TEXT NOT NULL UNIQUE,
         doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
         idx INTEGER NOT NULL,
         total INTEGER NOT NULL,
         title TEXT NOT NULL,
         source TEXT NOT NULL,
         text TEXT NOT NULL,
         modified BIGINT NOT NULL,
         content_hash TEXT NOT NULL,
         metadata JSONB NOT NULL,
         embedding vector NOT NULL,
         term_lengths INTEGER[] NOT NULL
     );
     CREATE INDEX chunks_by_doc ON chunks(doc_id);
     CREATE INDEX chunks_by_source ON chunks(source text_pattern_ops);
     CREATE INDEX chunks_by_modified ON chunks(modified);
     CREATE INDEX chunks_by_metadata ON chunks USING gin (metadata jsonb_path_ops);
     CREATE TABLE chunk_terms (
         field SMALLINT NOT NULL,
         term TEXT NOT NULL,
         key BIGINT NOT NULL,
         tf INTEGER NOT NULL,
         length INTEGER NOT NULL,
         PRIMARY KEY (field, term, key)
     );
     CREATE INDEX chunk_terms_by_key ON chunk_terms(key);
     CREATE TABLE keyword_stats (
         field SMALLINT PRIMARY KEY,
         chunks BIGINT NOT NULL,
         total_length BIGINT NOT NULL
     );
     INSERT INTO keyword_stats VALUES (0, 0, 0), (1, 0, 0), (2, 0, 0);",
    // 2: conversations and their turns, in order; a turn's sources are kept as JSON.
    "CREATE TABLE conversations (
         id TEXT PRIMARY KEY,
         created_ms BIGINT NOT NULL,
         updated_ms BIGINT NOT NULL
     );
     CREATE INDEX conversations_by_updated ON conversations(updated_ms);
     CREATE TABLE conversation_turns (
         conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
         position INTEGER NOT NULL,
         question TEXT NOT NULL,
         answer TEXT NOT NULL,
         refused BOOLEAN NOT NULL,
         sources JSONB NOT NULL,
         at_ms BIGINT NOT NULL,
         PRIMARY KEY (conversation_id, position)
     );",
    // 3: a conversation's owner, the API key that started it (NULL: the machine's owner).
    "ALTER TABLE conversations ADD COLUMN owner TEXT;
     CREATE INDEX conversations_by_owner ON conversations(owner, updated_ms);",
    // 4: each term's document frequency per group set (a chunk's `groups`, '' for everyone's),
    // kept by every write, so BM25 weighs a common term without counting its postings, for the
    // whole store or for one reader.
    "CREATE TABLE term_df (
         field SMALLINT NOT NULL,
         term TEXT NOT NULL,
         groups TEXT NOT NULL,
         df BIGINT NOT NULL,
         PRIMARY KEY (field, term, groups)
     );
     INSERT INTO term_df
     SELECT t.field, t.term, COALESCE(c.metadata->>'groups', ''), COUNT(*)
     FROM chunk_terms t JOIN chunks c ON c.key = t.key
     GROUP BY 1, 2, 3;",
    // 5: each chunk's terms as one text of words the `simple` text-search configuration keeps
    // whole (`token_text.rs`: a letter for field and spelling, then the term or the hex of its
    // UTF-8), which a pg_textsearch BM25 index parses and candidates are re-scored from; filled
    // here from the term rows, with the same encoding.
    "ALTER TABLE chunks ADD COLUMN bm25_text TEXT NOT NULL DEFAULT '';
     UPDATE chunks c SET bm25_text = w.text
     FROM (SELECT key, string_agg(repeat(
               CASE WHEN term ~ '^[a-z0-9]+$' THEN (ARRAY['e', 'j', 'm'])[field + 1] || term
                    ELSE (ARRAY['x', 'y', 'z'])[field + 1]
                         || encode(convert_to(term, 'UTF8'), 'hex') END || ' ', tf), '') AS text
           FROM chunk_terms GROUP BY key) w
     WHERE w.key = c.key;",
];

/// The schema version this build reads and writes.
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

pub(crate) fn current_version(client: &mut impl GenericClient) -> Result<i64, PostgresError> {
    let exists: bool = client
        .query_one("SELECT to_regclass('shiori_migrations') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(client
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM shiori_migrations",
            &[],
        )?
        .get(0))
}

/// Applies the migrations the database lacks, in one transaction; returns their versions.
pub(crate) fn migrate(client: &mut Client) -> Result<Vec<i64>, PostgresError> {
    let mut transaction = client.transaction()?;
    transaction.batch_execute("SET LOCAL statement_timeout = 0")?;
    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    transaction.batch_execute(
        "CREATE TABLE IF NOT EXISTS shiori_migrations (
             version BIGINT PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )?;
    let current = current_version(&mut transaction)?;
    if current > LATEST {
        return Err(PostgresError::SchemaAhead {
            found: current,
            expected: LATEST,
        });
    }
    let mut applied = Vec::new();
    for (version, sql) in (1..).zip(MIGRATIONS).skip(current as usize) {
        transaction.batch_execute(sql)?;
        transaction.execute(
            "INSERT INTO shiori_migrations (version) VALUES ($1)",
            &[&version],
        )?;
        applied.push(version);
    }
    transaction.commit()?;
    Ok(applied)
}

/// Refuses a database whose schema is not the one this build knows.
pub(crate) fn check_version(client: &mut impl GenericClient) -> Result<(), PostgresError> {
    match current_version(client)? {
        found if found < LATEST => Err(PostgresError::SchemaBehind {
            found,
            expected: LATEST,
        }),
        found if found > LATEST => Err(PostgresError::SchemaAhead {
            found,
            expected: LATEST,
        }),
        _ => Ok(()),
    }
}

fn vector_indexes(client: &mut impl GenericClient) -> Result<Vec<String>, PostgresError> {
    Ok(client
        .query(
            "SELECT indexname::TEXT FROM pg_indexes
             WHERE tablename = 'chunks' AND indexname LIKE 'chunks_embedding_hnsw_%'",
            &[],
        )?
        .iter()
        .map(|row| row.get(0))
        .collect())
}

pub(crate) fn has_vector_index(
    client: &mut impl GenericClient,
    dimension: usize,
) -> Result<bool, PostgresError> {
    Ok(vector_indexes(client)?.contains(&vector_index_name(dimension)))
}

fn vector_index_name(dimension: usize) -> String {
    format!("chunks_embedding_hnsw_{dimension}")
}

/// Drops every HNSW index, before vectors of another size replace the stored ones.
pub(crate) fn drop_vector_indexes(client: &mut impl GenericClient) -> Result<(), PostgresError> {
    for name in vector_indexes(client)? {
        client.batch_execute(&format!("DROP INDEX IF EXISTS {name}"))?;
    }
    Ok(())
}

/// The cosine HNSW index over `embedding` cast to `dimension` (an expression index, since the
/// column's size is the embedder's). HNSW indexes of other sizes are dropped: a store opened
/// with another embedder is empty or has just been re-embedded. Call inside a transaction.
pub(crate) fn ensure_vector_index(
    client: &mut impl GenericClient,
    dimension: usize,
    hnsw: &HnswParams,
) -> Result<(), PostgresError> {
    client.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    let name = vector_index_name(dimension);
    let existing = vector_indexes(client)?;
    for other in existing.iter().filter(|other| **other != name) {
        client.batch_execute(&format!("DROP INDEX IF EXISTS {other}"))?;
    }
    if !existing.contains(&name) {
        client.batch_execute(&format!(
            "CREATE INDEX {name} ON chunks
             USING hnsw ((embedding::vector({dimension})) vector_cosine_ops)
             WITH (m = {}, ef_construction = {})",
            hnsw.m, hnsw.ef_construction
        ))?;
    }
    Ok(())
}
