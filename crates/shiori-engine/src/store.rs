//! The configured store backend: opening it, migrating its schema (`shiori init`), and moving
//! an embedded store into PostgreSQL without re-embedding (`shiori migrate`).

use crate::{Config, EngineError, Progress, StoreConfig, StoreKind};
use serde::Serialize;
use shiori_analysis::JapaneseTokenization;
use shiori_core::Filters;
use shiori_models::assets::ShioriHome;
use shiori_store::{ConversationStore, DocumentStore, FileChange, StoreOptions};
use shiori_store_embedded::{stored_embedder, EmbeddedStore, SqliteConversations};
use shiori_store_postgres::{PostgresConversations, PostgresOptions, PostgresStore};
use std::path::Path;
use std::time::Instant;

/// Files copied per transaction by a migration.
const FILES_PER_MIGRATION_BATCH: usize = 64;

pub(crate) fn open_store(
    data_dir: &Path,
    config: &StoreConfig,
    options: StoreOptions,
    japanese: JapaneseTokenization,
) -> Result<Box<dyn DocumentStore>, EngineError> {
    Ok(match config.kind {
        StoreKind::Embedded => Box::new(EmbeddedStore::open(data_dir, options, japanese)?),
        StoreKind::Postgres => Box::new(PostgresStore::open(
            &config.postgres(None)?,
            options,
            japanese,
        )?),
    })
}

/// The configured backend's conversations, on a connection of their own.
pub(crate) fn open_conversations(
    data_dir: &Path,
    config: &StoreConfig,
) -> Result<Box<dyn ConversationStore>, EngineError> {
    Ok(match config.kind {
        StoreKind::Embedded => Box::new(SqliteConversations::open(data_dir)?),
        StoreKind::Postgres => Box::new(PostgresConversations::open(&config.postgres(None)?)?),
    })
}

/// The size of the configured database (PostgreSQL only: the embedded store is the data
/// directory).
pub fn database_bytes(config: &Config) -> Result<Option<u64>, EngineError> {
    match config.store.kind {
        StoreKind::Embedded => Ok(None),
        StoreKind::Postgres => Ok(Some(shiori_store_postgres::database_bytes(
            &config.store.postgres(None)?,
        )?)),
    }
}

/// What `shiori init` did to the configured store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoreInit {
    pub kind: StoreKind,
    /// The schema version the database is at now (PostgreSQL only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<i64>,
    pub migrations_applied: Vec<i64>,
    /// Where BM25 runs (PostgreSQL only: pg_textsearch, or SQL with what to install).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword_index: Option<String>,
}

/// Brings the configured store's schema up to date. The embedded store creates its own tables
/// when opened, so only a database needs this.
pub fn init_store(config: &Config) -> Result<StoreInit, EngineError> {
    match config.store.kind {
        StoreKind::Embedded => Ok(StoreInit {
            kind: StoreKind::Embedded,
            schema_version: None,
            migrations_applied: Vec::new(),
            keyword_index: None,
        }),
        StoreKind::Postgres => {
            let migrated = shiori_store_postgres::migrate(&config.store.postgres(None)?)?;
            Ok(StoreInit {
                kind: StoreKind::Postgres,
                schema_version: Some(shiori_store_postgres::schema_version()),
                migrations_applied: migrated.applied,
                keyword_index: Some(migrated.keyword_index),
            })
        }
    }
}

/// What `shiori migrate` copied.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MigrationReport {
    pub embedder: String,
    pub files: usize,
    pub chunks_added: usize,
    /// Conversations that got turns (or were created) in the database.
    pub conversations: usize,
    pub elapsed_ms: f64,
    /// Where the database runs BM25 (pg_textsearch, or SQL with what to install).
    pub keyword_index: String,
}

/// Copies every file, document, chunk and vector of the embedded store in `from` into the
/// PostgreSQL database `to` (migrating its schema first). Files whose content the database
/// already holds are left as they are, so a migration can be re-run or resumed.
pub fn migrate_store(
    from: &Path,
    to: &PostgresOptions,
    home: &ShioriHome,
    progress: &dyn Progress,
) -> Result<MigrationReport, EngineError> {
    let started = Instant::now();
    // The analyzers decide the keyword terms; the ones the engine would open the store with.
    let japanese = JapaneseTokenization::load(Some(&home.ipadic_dictionary()))?;
    let (embedder_id, dimension) = stored_embedder(from)?.ok_or_else(|| {
        EngineError::Invalid(format!(
            "{} holds no embedded store to migrate",
            from.display()
        ))
    })?;
    let options = || StoreOptions {
        embedder_id: embedder_id.clone(),
        dimension,
        reembed: false,
    };
    let source = EmbeddedStore::open(from, options(), japanese.clone())?;
    let migrated = shiori_store_postgres::migrate(to)?;
    let mut target = PostgresStore::open(to, options(), japanese)?;
    target.lock_for_writing()?;
    let paths = source.file_paths(&Filters::default())?;
    let mut report = MigrationReport {
        embedder: embedder_id.clone(),
        keyword_index: migrated.keyword_index,
        ..MigrationReport::default()
    };
    progress.start("copying files", paths.len() as u64);
    for batch in paths.chunks(FILES_PER_MIGRATION_BATCH) {
        let mut changes = Vec::with_capacity(batch.len());
        for path in batch {
            if let Some(stored) = source.stored_file(path)? {
                changes.push(FileChange::from(stored));
            }
        }
        report.files += changes.len();
        report.chunks_added += target.apply(changes)?.chunks_added;
        progress.advance(batch.len() as u64);
    }
    progress.finish();
    target.commit()?;
    report.conversations = copy_conversations(
        &SqliteConversations::open(from)?,
        &PostgresConversations::open(to)?,
    )?;
    report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// Copies the turns `to` lacks of every conversation in `from`, so an interrupted copy resumes
/// where it stopped; returns how many conversations changed.
fn copy_conversations(
    from: &dyn ConversationStore,
    to: &dyn ConversationStore,
) -> Result<usize, EngineError> {
    let mut changed = 0;
    for summary in from.conversations(None)? {
        let Some(conversation) = from.conversation(&summary.id, None)? else {
            continue;
        };
        let copied = match to.conversation(&summary.id, None)? {
            Some(existing) => existing.turns.len(),
            None => {
                let owner = conversation.owner.as_deref();
                to.create_conversation(&summary.id, owner, conversation.created_ms)?;
                changed += usize::from(conversation.turns.is_empty());
                0
            }
        };
        for turn in conversation.turns.iter().skip(copied) {
            to.append_turn(&summary.id, turn)?;
        }
        changed += usize::from(conversation.turns.len() > copied);
    }
    Ok(changed)
}
