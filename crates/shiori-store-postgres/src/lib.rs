//! The scale-out store: Shiori's files, documents and chunks in PostgreSQL as the source of
//! truth, their vectors in a pgvector HNSW index, and BM25 keyword search in SQL over the terms
//! Shiori's own analyzers cut (so Japanese ranks as in the embedded store). Writers serialise on
//! an advisory lock and skip files whose content hash is already stored, so several indexers
//! (processes or machines) may run at once; readers never wait. The schema is versioned and
//! migrated by `shiori init`.

mod bm25;
mod conversations;
mod filters;
mod read;
mod schema;
mod terms;
#[cfg(feature = "test-server")]
pub mod test_server;
mod write;

pub use conversations::PostgresConversations;

use bm25::ReaderStatistics;
use postgres::{Client, GenericClient, NoTls};
use shiori_analysis::JapaneseTokenization;
use shiori_core::{Access, Chunk, Filters};
use shiori_store::{
    ApplyReport, DocumentStore, FileChange, FileRecord, StoreError, StoreOptions, StoreStats,
    StoredFile,
};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard};
use terms::Analyzers;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum PostgresError {
    #[error("invalid PostgreSQL URL {url}: {source}")]
    Url {
        url: String,
        source: postgres::Error,
    },
    #[error("cannot connect to PostgreSQL at {url}: {source}")]
    Connect {
        url: String,
        source: postgres::Error,
    },
    #[error("PostgreSQL: {0}")]
    Query(#[from] postgres::Error),
    #[error(
        "the PostgreSQL schema is at version {found} but this build needs {expected}: \
         run `shiori init` to migrate it"
    )]
    SchemaBehind { found: i64, expected: i64 },
    #[error(
        "the PostgreSQL schema is at version {found}, newer than this build knows ({expected}); \
         upgrade shiori"
    )]
    SchemaAhead { found: i64, expected: i64 },
    #[error(
        "this store's keyword terms were cut by the {stored} analyzer but {requested} is \
         configured; use the same Japanese dictionary as the store's other writers"
    )]
    AnalyzerMismatch { stored: String, requested: String },
    #[error("stored metadata is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the store's connection lock was poisoned by a panic in another thread")]
    Poisoned,
}

impl From<PostgresError> for StoreError {
    fn from(error: PostgresError) -> StoreError {
        StoreError::Database(Box::new(error))
    }
}

/// pgvector HNSW parameters: graph degree and build beam (fixed when the index is built), and
/// the search beam (per session; at least the number of candidates a query asks for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HnswParams {
    pub m: u32,
    pub ef_construction: u32,
    pub ef_search: u32,
}

impl Default for HnswParams {
    fn default() -> Self {
        HnswParams {
            m: 16,
            ef_construction: 128,
            ef_search: 100,
        }
    }
}

/// Where the database is and how to index vectors in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// `postgres://user@host:port/db` (key-value connection strings work too).
    pub url: String,
    /// Kept out of the URL so it can come from the environment.
    pub password: Option<String>,
    pub hnsw: HnswParams,
}

/// Applies the schema migrations the database lacks; returns the versions applied.
pub fn migrate(options: &PostgresOptions) -> Result<Vec<i64>, PostgresError> {
    let mut client = connect(options)?;
    schema::migrate(&mut client)
}

/// The schema version this build reads and writes.
pub fn schema_version() -> i64 {
    schema::LATEST
}

fn connect(options: &PostgresOptions) -> Result<Client, PostgresError> {
    let mut config: postgres::Config =
        options.url.parse().map_err(|source| PostgresError::Url {
            url: redacted(&options.url),
            source,
        })?;
    if let Some(password) = &options.password {
        config.password(password);
    }
    let mut client = config
        .connect(NoTls)
        .map_err(|source| PostgresError::Connect {
            url: redacted(&options.url),
            source,
        })?;
    client.batch_execute(&format!(
        "SET hnsw.ef_search = {}; SET hnsw.iterative_scan = relaxed_order;",
        options.hnsw.ef_search
    ))?;
    Ok(client)
}

/// The URL without a password in it, for messages.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((user_info, host)) if user_info.contains(':') => {
            let user = user_info.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}")
        }
        _ => url.to_string(),
    }
}

/// A reader's BM25 statistics (`None`: it reads every chunk) and the write generation they
/// describe.
type ComputedStatistics = (String, Option<ReaderStatistics>);

/// A Shiori store in a PostgreSQL database with pgvector.
pub struct PostgresStore {
    client: Mutex<Client>,
    analyzers: Analyzers,
    options: StoreOptions,
    analyzer_name: &'static str,
    hnsw: HnswParams,
    /// Each set of readable groups' BM25 statistics, with the write generation they describe
    /// (any process's write moves it on).
    readers: Mutex<HashMap<BTreeSet<String>, ComputedStatistics>>,
}

impl PostgresStore {
    /// Connects and checks that the schema is current and that the store was built with the
    /// configured embedder and analyzers (an empty store adopts them).
    pub fn open(
        postgres: &PostgresOptions,
        options: StoreOptions,
        japanese: JapaneseTokenization,
    ) -> Result<PostgresStore, StoreError> {
        let mut client = connect(postgres)?;
        schema::check_version(&mut client)?;
        let analyzer_name = shiori_analysis::japanese_analyzer_name(&japanese);
        // Checked without writing first, so a store that is set up opens on a read replica.
        if !setup_needed(&mut client, &options, analyzer_name)? {
            return Ok(PostgresStore::new(
                client,
                options,
                &japanese,
                postgres.hnsw,
            ));
        }
        let mut transaction = client.transaction().map_err(PostgresError::from)?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&schema::WRITE_LOCK])
            .map_err(PostgresError::from)?;
        // Another writer may have changed things since the check.
        setup_needed(&mut transaction, &options, analyzer_name)?;
        if read::count(&mut transaction, "chunks")? == 0 {
            write::record_embedder(&mut transaction, &options)?;
        }
        write::set_meta(&mut transaction, "japanese_analyzer", analyzer_name)?;
        if !options.reembed {
            schema::ensure_vector_index(&mut transaction, options.dimension, &postgres.hnsw)?;
        }
        transaction.commit().map_err(PostgresError::from)?;
        Ok(PostgresStore::new(
            client,
            options,
            &japanese,
            postgres.hnsw,
        ))
    }

    fn new(
        client: Client,
        options: StoreOptions,
        japanese: &JapaneseTokenization,
        hnsw: HnswParams,
    ) -> PostgresStore {
        PostgresStore {
            client: Mutex::new(client),
            analyzers: Analyzers::new(japanese),
            options,
            analyzer_name: shiori_analysis::japanese_analyzer_name(japanese),
            hnsw,
            readers: Mutex::new(HashMap::new()),
        }
    }

    fn client(&self) -> Result<MutexGuard<'_, Client>, PostgresError> {
        self.client.lock().map_err(|_| PostgresError::Poisoned)
    }

    /// The statistics BM25 scores the searches of a reader limited to `access` with: its own
    /// when some chunk is hidden from it, so hidden chunks do not move its scores; computed
    /// once per write generation and set of groups.
    fn reader_statistics(
        &self,
        client: &mut Client,
        access: &Access,
    ) -> Result<Option<ReaderStatistics>, PostgresError> {
        let Some(groups) = access.groups() else {
            return Ok(None);
        };
        let generation = read::meta(client, write::GENERATION)?.unwrap_or_default();
        let cache = || self.readers.lock().map_err(|_| PostgresError::Poisoned);
        if let Some((computed_on, statistics)) = cache()?.get(groups) {
            if *computed_on == generation {
                return Ok(statistics.clone());
            }
        }
        let only_access = Filters {
            access: access.clone(),
            ..Filters::default()
        };
        let statistics = ReaderStatistics::of(client, only_access)?;
        cache()?.insert(groups.clone(), (generation, statistics.clone()));
        Ok(statistics)
    }
}

/// Refuses a store built with another embedder (unless re-embedding) or other analyzers; says
/// whether the store still has to record its embedder or analyzer, or build its vector index.
fn setup_needed(
    client: &mut impl GenericClient,
    options: &StoreOptions,
    analyzer_name: &str,
) -> Result<bool, StoreError> {
    let chunks = read::count(client, "chunks")?;
    let stored_embedder = read::meta(client, "embedder")?;
    let stored_analyzer = read::meta(client, "japanese_analyzer")?;
    if chunks > 0 {
        if let Some(stored) = stored_embedder
            .as_ref()
            .filter(|s| **s != options.embedder_id)
        {
            if !options.reembed {
                return Err(StoreError::EmbedderMismatch {
                    stored: stored.clone(),
                    requested: options.embedder_id.clone(),
                });
            }
        }
        if let Some(stored) = stored_analyzer.as_ref().filter(|s| *s != analyzer_name) {
            return Err(PostgresError::AnalyzerMismatch {
                stored: stored.clone(),
                requested: analyzer_name.to_string(),
            }
            .into());
        }
    }
    let index_missing = !options.reembed && !schema::has_vector_index(client, options.dimension)?;
    Ok(
        stored_embedder.as_deref() != Some(options.embedder_id.as_str()) && chunks == 0
            || stored_analyzer.as_deref() != Some(analyzer_name)
            || index_missing,
    )
}

impl DocumentStore for PostgresStore {
    /// Nothing to claim: every batch takes the advisory write lock in its own transaction, so
    /// indexers on several machines may run at once.
    fn lock_for_writing(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    fn file_records(&self) -> Result<HashMap<String, FileRecord>, StoreError> {
        Ok(read::file_records(&mut *self.client()?)?)
    }

    fn file_project(&self, path: &str) -> Result<Option<String>, StoreError> {
        Ok(read::file_project(&mut *self.client()?, path)?)
    }

    fn file_paths(&self, filters: &Filters) -> Result<Vec<String>, StoreError> {
        Ok(read::file_paths(&mut *self.client()?, filters)?)
    }

    fn stored_file(&self, path: &str) -> Result<Option<StoredFile>, StoreError> {
        Ok(read::stored_file(&mut *self.client()?, path)?)
    }

    /// One transaction under the write lock; a file whose content hash is already stored (by
    /// another indexer, say) only gets its new stamps.
    fn apply(&mut self, changes: Vec<FileChange>) -> Result<ApplyReport, StoreError> {
        let client = self.client.get_mut().map_err(|_| PostgresError::Poisoned)?;
        Ok(write::apply(client, &self.analyzers, changes)?)
    }

    /// Everything is durable and searchable once `apply` returns.
    fn commit(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Nothing to pin: vectors, terms and chunks live in the same database, so every query
    /// reads one committed state and no derived index can fall behind the tables.
    fn pin_snapshot(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn chunks(&self, keys: &[u64]) -> Result<Vec<(u64, Chunk)>, StoreError> {
        Ok(read::chunks_by_keys(&mut *self.client()?, keys)?)
    }

    fn document_chunks(&self, doc_id: &str) -> Result<Vec<Chunk>, StoreError> {
        Ok(read::chunks_of_document(&mut *self.client()?, doc_id)?)
    }

    fn keys_matching(&self, filters: &Filters) -> Result<Vec<u64>, StoreError> {
        Ok(read::keys_matching(&mut *self.client()?, filters)?)
    }

    fn dense_search(
        &self,
        query: &[f32],
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        Ok(read::dense_search(
            &mut *self.client()?,
            self.options.dimension,
            query,
            k,
            filters,
        )?)
    }

    fn keyword_search(
        &self,
        query: &str,
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let terms = self.analyzers.query_terms(query);
        let mut client = self.client()?;
        let reader = self.reader_statistics(&mut client, &filters.access)?;
        Ok(bm25::keyword_search(
            &mut *client,
            &terms,
            k,
            filters,
            reader.as_ref(),
        )?)
    }

    fn dense_scores(&self, query: &[f32], keys: &[u64]) -> Result<Vec<(u64, f32)>, StoreError> {
        Ok(read::dense_scores(
            &mut *self.client()?,
            self.options.dimension,
            query,
            keys,
        )?)
    }

    fn keyword_scores(
        &self,
        query: &str,
        keys: &[u64],
        access: &Access,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let terms = self.analyzers.query_terms(query);
        let mut client = self.client()?;
        let reader = self.reader_statistics(&mut client, access)?;
        Ok(bm25::keyword_scores(
            &mut *client,
            &terms,
            keys,
            reader.as_ref(),
        )?)
    }

    fn embedding_inputs(&self) -> Result<Vec<(u64, String, String)>, StoreError> {
        Ok(read::embedding_inputs(&mut *self.client()?)?)
    }

    fn replace_vectors(&mut self, vectors: &[(u64, Vec<f32>)]) -> Result<(), StoreError> {
        let client = self.client.get_mut().map_err(|_| PostgresError::Poisoned)?;
        Ok(write::replace_vectors(
            client,
            &self.options,
            &self.hnsw,
            vectors,
        )?)
    }

    fn stats(&self, filters: &Filters) -> Result<StoreStats, StoreError> {
        let mut client = self.client()?;
        let [files, documents, chunks] = if filters.is_empty() {
            ["files", "documents", "chunks"].map(|table| read::count(&mut *client, table))
        } else {
            read::counts_matching(&mut *client, filters)?.map(Ok)
        };
        Ok(StoreStats {
            files: files?,
            documents: documents?,
            chunks: chunks?,
            embedder: self.options.embedder_id.clone(),
            dimension: self.options.dimension,
            japanese_analyzer: self.analyzer_name.to_string(),
            vector_index: format!(
                "pgvector-hnsw (m={}, ef_construction={}, ef_search={})",
                self.hnsw.m, self.hnsw.ef_construction, self.hnsw.ef_search
            ),
            last_rebuild: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords_in_urls() {
        assert_eq!(
            redacted("postgres://shiori:secret@db:5432/rag"),
            "postgres://shiori:***@db:5432/rag"
        );
        assert_eq!(
            redacted("postgres://shiori@db/rag"),
            "postgres://shiori@db/rag"
        );
    }
}
