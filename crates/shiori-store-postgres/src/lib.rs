//! The scale-out store: Shiori's files, documents and chunks in PostgreSQL as the source of
//! truth, their vectors in a pgvector HNSW index, and BM25 keyword search in SQL over the terms
//! Shiori's own analyzers cut (so Japanese ranks as in the embedded store). Writers serialise on
//! an advisory lock and skip files whose content hash is already stored, so several indexers
//! (processes or machines) may run at once; readers never wait. The schema is versioned and
//! migrated by `shiori init`.

mod bm25;
mod conversations;
mod copy_rows;
mod endpoints;
mod filters;
mod pool;
mod read;
mod schema;
mod terms;
#[cfg(feature = "test-server")]
pub mod test_server;
mod textsearch;
mod tls;
mod token_text;
mod write;

pub use conversations::PostgresConversations;
pub use tls::{SslMode, TlsOptions};

use bm25::ReaderStatistics;
use endpoints::Endpoints;
use postgres::{Client, GenericClient};
use shiori_analysis::JapaneseTokenization;
use shiori_core::{Access, Chunk, Filters};
use shiori_store::{
    ApplyReport, DocumentStore, FileChange, FileRecord, StoreError, StoreOptions, StoreStats,
    StoredFile,
};
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;
use terms::Analyzers;
use textsearch::KeywordIndex;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum PostgresError {
    #[error("invalid PostgreSQL URL {url}: {source}")]
    Url {
        url: String,
        source: postgres::Error,
    },
    #[error("cannot connect to PostgreSQL at {url}: {}", with_causes(source))]
    Connect {
        url: String,
        source: postgres::Error,
    },
    #[error("PostgreSQL: {0}")]
    Query(#[from] postgres::Error),
    #[error("every connection to PostgreSQL at {url} is busy: {source}")]
    Exhausted { url: String, source: r2d2::Error },
    #[error("no connection to PostgreSQL at {url} in time: {source}")]
    NoConnection { url: String, source: r2d2::Error },
    #[error("TLS to PostgreSQL, {what}: {source}")]
    Tls {
        what: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(
        "TLS to PostgreSQL: sslmode {0:?} needs sslrootcert, the PEM file of the server's \
         certificate authority"
    )]
    TlsNeedsRootCert(SslMode),
    #[error("cannot start the replica health thread: {0}")]
    Thread(std::io::Error),
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
    #[error(
        "this store's BM25 index is pg_textsearch's, and this database no longer has the \
         extension: install pg_textsearch (in shared_preload_libraries) and run shiori init"
    )]
    TextSearchMissing,
    #[error("COPY to PostgreSQL: {0}")]
    Copy(std::io::Error),
    #[error("stored metadata is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the store's connection lock was poisoned by a panic in another thread")]
    Poisoned,
}

impl PostgresError {
    /// Whether the database could not be reached or did not answer in time, rather than
    /// refusing the statement: worth running again elsewhere or later.
    pub fn is_unavailable(&self) -> bool {
        match self {
            PostgresError::Connect { .. }
            | PostgresError::Exhausted { .. }
            | PostgresError::NoConnection { .. } => true,
            PostgresError::Query(error) => query_unavailable(error),
            _ => false,
        }
    }
}

/// A closed or broken connection, or a server that cannot serve now: shutting down or
/// starting (57P0x), out of connections (53300), a statement cancelled by the time limit or
/// by a standby's recovery (57014, 40001), a connection failure (class 08).
fn query_unavailable(error: &postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    match error.code() {
        Some(code) => {
            let code = code.code();
            code.starts_with("08")
                || code.starts_with("57P")
                || ["53300", "57014", "40001"].contains(&code)
        }
        None => {
            std::error::Error::source(error).is_some_and(|source| source.is::<std::io::Error>())
        }
    }
}

impl From<PostgresError> for StoreError {
    fn from(error: PostgresError) -> StoreError {
        if error.is_unavailable() {
            StoreError::Unavailable(Box::new(error))
        } else {
            StoreError::Database(Box::new(error))
        }
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

/// Where the database and its read replicas are, how to connect, and how to index vectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// The primary: `postgres://user@host:port/db` (key-value connection strings work too).
    pub url: String,
    /// Streaming replicas that serve reads (same user, database and password).
    pub replica_urls: Vec<String>,
    /// Kept out of the URL so it can come from the environment.
    pub password: Option<String>,
    pub hnsw: HnswParams,
    pub tls: TlsOptions,
    /// Connections per database address (the primary, each replica) in one store.
    pub pool_size: u32,
    /// Longest wait for a connection, new or from the pool.
    pub connect_timeout: Duration,
    /// Longest a read may run (writes have none: their length grows with the batch).
    pub statement_timeout: Duration,
    /// A replica whose replay is further behind the primary is skipped.
    pub max_replica_lag: Duration,
}

impl PostgresOptions {
    /// `url` with the defaults a server on a private network needs.
    pub fn new(url: &str) -> PostgresOptions {
        PostgresOptions {
            url: url.to_string(),
            replica_urls: Vec::new(),
            password: None,
            hnsw: HnswParams::default(),
            tls: TlsOptions::default(),
            pool_size: 8,
            connect_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(30),
            max_replica_lag: Duration::from_secs(10),
        }
    }
}

/// What `shiori init` did to a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The schema versions applied.
    pub applied: Vec<i64>,
    /// Where BM25 runs now (pg_textsearch or SQL), and when in SQL, what to install.
    pub keyword_index: String,
}

/// Applies the schema migrations the database lacks and creates pg_textsearch where the
/// server offers it (else BM25 stays in SQL, and `keyword_index` says what to install).
pub fn migrate(options: &PostgresOptions) -> Result<Migrated, PostgresError> {
    let mut client = pool::connect(&options.url, options)?;
    let applied = schema::migrate(&mut client)?;
    let advice = textsearch::create_extension(&mut client)?;
    let index = KeywordIndex::detect(&mut client)?;
    let keyword_index = match advice {
        Ok(()) => index.describe(),
        Err(advice) => format!("{}; {advice}", index.describe()),
    };
    Ok(Migrated {
        applied,
        keyword_index,
    })
}

/// The database's size on disk: tables, indexes (the HNSW graph, the term B-tree) and TOAST.
pub fn database_bytes(options: &PostgresOptions) -> Result<u64, PostgresError> {
    let mut client = pool::connect(&options.url, options)?;
    let bytes: i64 = client
        .query_one("SELECT pg_database_size(current_database())", &[])?
        .get(0);
    Ok(bytes as u64)
}

/// What `shiori doctor` reads of a database: the schema version it is at and the extensions
/// installed (`vector` is the one the store needs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseHealth {
    pub schema_version: i64,
    pub extensions: Vec<(String, String)>,
}

/// Connects to the primary and reads its schema version and extensions; changes nothing.
pub fn inspect(options: &PostgresOptions) -> Result<DatabaseHealth, PostgresError> {
    let mut client = pool::connect(&options.url, options)?;
    let schema_version = schema::current_version(&mut client)?;
    let extensions = client
        .query(
            "SELECT extname::TEXT, extversion FROM pg_extension ORDER BY 1",
            &[],
        )?
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    Ok(DatabaseHealth {
        schema_version,
        extensions,
    })
}

/// The schema version this build reads and writes.
pub fn schema_version() -> i64 {
    schema::LATEST
}

/// `error` and the errors that caused it: the client's own message for a failed TLS handshake
/// or connection ("error performing TLS handshake") leaves out why.
fn with_causes(error: &postgres::Error) -> String {
    let mut message = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(error) = cause {
        message.push_str(&format!(": {error}"));
        cause = error.source();
    }
    message
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

/// A Shiori store in a PostgreSQL database with pgvector, reading from its replicas when it
/// has some.
pub struct PostgresStore {
    endpoints: Endpoints,
    analyzers: Analyzers,
    options: StoreOptions,
    analyzer_name: &'static str,
    hnsw: HnswParams,
    /// Where BM25's postings live: pg_textsearch's index, or term rows in SQL.
    keyword_index: KeywordIndex,
    /// This writer is filling an empty store: its vector and BM25 indexes are built once, at
    /// the commit.
    bulk_load: bool,
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
        let endpoints = Endpoints::open(postgres)?;
        let mut client = endpoints.primary()?;
        schema::check_version(&mut *client)?;
        let analyzer_name = shiori_analysis::japanese_analyzer_name(&japanese);
        if setup_needed(&mut *client, &options, analyzer_name)? {
            let mut transaction = write::locked(&mut client)?;
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
            endpoints.wrote()?;
        }
        let keyword_index = KeywordIndex::detect(&mut *client)?;
        adopt_keyword_index(&mut client, &keyword_index)?;
        endpoints.wrote()?;
        drop(client);
        if !keyword_index.serves_standbys() && !postgres.replica_urls.is_empty() {
            tracing::info!(
                "BM25 searches go to the primary, dense searches to the replicas: {}",
                keyword_index.describe()
            );
        }
        Ok(PostgresStore {
            endpoints,
            analyzers: Analyzers::new(&japanese),
            options,
            analyzer_name,
            hnsw: postgres.hnsw,
            keyword_index,
            bulk_load: false,
            readers: Mutex::new(HashMap::new()),
        })
    }

    /// Runs the write `work` on the primary and records its position for later reads.
    fn write<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, PostgresError>,
    ) -> Result<T, StoreError> {
        let done = work(&mut *self.endpoints.primary()?)?;
        self.endpoints.wrote()?;
        Ok(done)
    }

    /// Runs the read `work` where reads go (see [`Endpoints::read`]).
    fn read<T>(
        &self,
        work: impl Fn(&mut Client) -> Result<T, PostgresError>,
    ) -> Result<T, StoreError> {
        Ok(self.endpoints.read(work)?)
    }

    /// Runs a BM25 search where its index can answer: the primary when the replicas' copy of
    /// pg_textsearch's index is not kept (before 1.2), else where reads go.
    fn keyword_read<T>(
        &self,
        work: impl Fn(&mut Client) -> Result<T, PostgresError>,
    ) -> Result<T, StoreError> {
        if self.keyword_index.serves_standbys() {
            self.read(work)
        } else {
            Ok(work(&mut *self.endpoints.primary()?)?)
        }
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

/// Makes the store's BM25 postings match what the database offers: with pg_textsearch, its
/// index over `bm25_text` (built once, here, for a store that kept term rows so far, whose
/// rows are then dropped); without it, a store that no longer keeps term rows is refused.
fn adopt_keyword_index(client: &mut Client, index: &KeywordIndex) -> Result<(), PostgresError> {
    const KEY: &str = "keyword_index";
    let uses_textsearch = |client: &mut Client| -> Result<bool, PostgresError> {
        Ok(read::meta(client, KEY)?.as_deref() == Some("pg_textsearch"))
    };
    match index {
        KeywordIndex::Sql if uses_textsearch(client)? => Err(PostgresError::TextSearchMissing),
        KeywordIndex::Sql => Ok(()),
        KeywordIndex::TextSearch { .. } => {
            if uses_textsearch(client)? && textsearch::has_index(client)? {
                return Ok(());
            }
            let mut transaction = write::locked(client)?;
            // A bulk load builds its index at its commit; an empty store's is cheap now.
            textsearch::ensure_index(&mut transaction)?;
            transaction.batch_execute("TRUNCATE chunk_terms")?;
            write::set_meta(&mut transaction, KEY, "pg_textsearch")?;
            transaction.commit()?;
            Ok(())
        }
    }
}

/// What the indexer reads to decide its writes (file records, a file's project, a stored file,
/// the texts to re-embed) comes from the primary; what readers search and show comes from
/// where reads go.
impl DocumentStore for PostgresStore {
    /// Nothing to claim: every batch takes the advisory write lock in its own transaction, so
    /// indexers on several machines may run at once. Into an empty store, the vector index is
    /// dropped and built once at [`commit`](Self::commit) with pgvector's bulk (and parallel)
    /// build, which measured far faster than inserting every vector into the graph; a load
    /// that never commits leaves it to the next `open`.
    fn lock_for_writing(&mut self) -> Result<(), StoreError> {
        let mut client = self.endpoints.primary()?;
        if !read::is_empty(&mut *client)? {
            return Ok(());
        }
        // Checked again under the lock: another writer may have filled it meanwhile.
        let mut transaction = write::locked(&mut client)?;
        self.bulk_load = read::is_empty(&mut transaction)?;
        if self.bulk_load {
            schema::drop_vector_indexes(&mut transaction)?;
            textsearch::drop_index(&mut transaction)?;
        }
        transaction.commit().map_err(PostgresError::from)?;
        Ok(())
    }

    fn file_records(&self) -> Result<HashMap<String, FileRecord>, StoreError> {
        Ok(read::file_records(&mut *self.endpoints.primary()?)?)
    }

    fn file_project(&self, path: &str) -> Result<Option<String>, StoreError> {
        Ok(read::file_project(&mut *self.endpoints.primary()?, path)?)
    }

    fn file_paths(&self, filters: &Filters) -> Result<Vec<String>, StoreError> {
        self.read(|client| read::file_paths(client, filters))
    }

    fn stored_file(&self, path: &str) -> Result<Option<StoredFile>, StoreError> {
        Ok(read::stored_file(&mut *self.endpoints.primary()?, path)?)
    }

    /// One transaction under the write lock; a file whose content hash is already stored (by
    /// another indexer, say) only gets its new stamps.
    #[tracing::instrument(name = "store.apply", skip_all, fields(changes = changes.len()))]
    fn apply(&mut self, changes: Vec<FileChange>) -> Result<ApplyReport, StoreError> {
        self.write(|client| write::apply(client, &self.analyzers, changes, &self.keyword_index))
    }

    /// Everything is durable and searchable once `apply` returns; after a load into an empty
    /// store, the vector index is built here.
    #[tracing::instrument(name = "store.commit", skip_all)]
    fn commit(&mut self) -> Result<(), StoreError> {
        if !std::mem::take(&mut self.bulk_load) {
            return Ok(());
        }
        let (dimension, hnsw) = (self.options.dimension, self.hnsw);
        let textsearch = !self.keyword_index.keeps_term_rows();
        self.write(|client| {
            let mut transaction = write::locked(client)?;
            schema::ensure_vector_index(&mut transaction, dimension, &hnsw)?;
            if textsearch {
                textsearch::ensure_index(&mut transaction)?;
            }
            transaction.commit()?;
            Ok(())
        })
    }

    /// Nothing to pin: vectors, terms and chunks live in the same database, so every query
    /// reads one committed state and no derived index can fall behind the tables.
    fn pin_snapshot(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Nothing to count: no snapshot is pinned, so every read sees the latest commit.
    fn commits(&self) -> Result<Option<u64>, StoreError> {
        Ok(None)
    }

    #[tracing::instrument(name = "store.read_chunks", skip_all, fields(keys = keys.len()))]
    fn chunks(&self, keys: &[u64]) -> Result<Vec<(u64, Chunk)>, StoreError> {
        self.read(|client| read::chunks_by_keys(client, keys))
    }

    fn document_chunks(&self, doc_id: &str) -> Result<Vec<Chunk>, StoreError> {
        self.read(|client| read::chunks_of_document(client, doc_id))
    }

    fn keys_matching(&self, filters: &Filters) -> Result<Vec<u64>, StoreError> {
        self.read(|client| read::keys_matching(client, filters))
    }

    #[tracing::instrument(name = "store.dense_search", skip_all)]
    fn dense_search(
        &self,
        query: &[f32],
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        self.read(|client| read::dense_search(client, self.options.dimension, query, k, filters))
    }

    #[tracing::instrument(name = "store.keyword_search", skip_all)]
    fn keyword_search(
        &self,
        query: &str,
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let terms = self.analyzers.query_terms(query);
        self.keyword_read(|client| {
            let reader = self.reader_statistics(client, &filters.access)?;
            match self.keyword_index {
                KeywordIndex::Sql => {
                    bm25::keyword_search(client, &terms, k, filters, reader.as_ref())
                }
                KeywordIndex::TextSearch { .. } => {
                    textsearch::keyword_search(client, &terms, k, filters, reader.as_ref())
                }
            }
        })
    }

    fn dense_scores(&self, query: &[f32], keys: &[u64]) -> Result<Vec<(u64, f32)>, StoreError> {
        self.read(|client| read::dense_scores(client, self.options.dimension, query, keys))
    }

    fn keyword_scores(
        &self,
        query: &str,
        keys: &[u64],
        access: &Access,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let terms = self.analyzers.query_terms(query);
        // From the chunks' rows, not the index: any replica can answer.
        self.read(|client| {
            let reader = self.reader_statistics(client, access)?;
            match self.keyword_index {
                KeywordIndex::Sql => bm25::keyword_scores(client, &terms, keys, reader.as_ref()),
                KeywordIndex::TextSearch { .. } => {
                    textsearch::keyword_scores(client, &terms, keys, reader.as_ref())
                }
            }
        })
    }

    fn embedding_inputs(&self) -> Result<Vec<(u64, String, String)>, StoreError> {
        Ok(read::embedding_inputs(&mut *self.endpoints.primary()?)?)
    }

    fn replace_vectors(&mut self, vectors: &[(u64, Vec<f32>)]) -> Result<(), StoreError> {
        self.write(|client| write::replace_vectors(client, &self.options, &self.hnsw, vectors))
    }

    fn stats(&self, filters: &Filters) -> Result<StoreStats, StoreError> {
        let [files, documents, chunks] = self.read(|client| {
            if filters.is_empty() {
                Ok([
                    read::count(client, "files")?,
                    read::count(client, "documents")?,
                    read::count(client, "chunks")?,
                ])
            } else {
                read::counts_matching(client, filters)
            }
        })?;
        Ok(StoreStats {
            files,
            documents,
            chunks,
            embedder: self.options.embedder_id.clone(),
            dimension: self.options.dimension,
            japanese_analyzer: self.analyzer_name.to_string(),
            vector_index: format!(
                "pgvector-hnsw (m={}, ef_construction={}, ef_search={})",
                self.hnsw.m, self.hnsw.ef_construction, self.hnsw.ef_search
            ),
            keyword_index: self.keyword_index.describe(),
            last_rebuild: None,
            replicas: self.endpoints.replica_status(),
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
