//! Conversations and their turns in the data directory's SQLite database.

use crate::error::{sqlite, SqliteError};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use shiori_core::{Conversation, ConversationId, ConversationSummary, Turn};
use shiori_store::{stored_id, ConversationStore, StoreError};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    owner TEXT -- the API key's name; NULL for the machine's owner
);
CREATE TABLE IF NOT EXISTS conversation_turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    refused INTEGER NOT NULL,
    sources TEXT NOT NULL, -- JSON array of TurnSource
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, position)
);
";

/// Conversations in `shiori.sqlite`, on a connection of their own: a store that only reads
/// (pinned to a snapshot while another engine indexes) still records turns, and every append is
/// one write transaction, so a crash leaves a conversation with or without the turn, never half.
pub struct SqliteConversations {
    connection: Mutex<Connection>,
}

impl SqliteConversations {
    /// Opens the conversations of the data directory `dir` (created with its database).
    pub fn open(dir: &Path) -> Result<SqliteConversations, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
            path: dir.display().to_string(),
            source,
        })?;
        sqlite(|| {
            let connection = crate::tables::open(&dir.join(crate::TABLES_FILE))?;
            connection.execute_batch(SCHEMA)?;
            add_owner_column(&connection)?;
            Ok(SqliteConversations {
                connection: Mutex::new(connection),
            })
        })
    }

    fn connection(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        self.connection.lock().map_err(|_| StoreError::Poisoned)
    }
}

impl ConversationStore for SqliteConversations {
    fn create_conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        sqlite(|| {
            self.connection()?.execute(
            "INSERT INTO conversations (id, created_ms, updated_ms, owner) VALUES (?1, ?2, ?2, ?3)",
            params![id.as_str(), now_ms, owner],
        )?;
            Ok(())
        })
    }

    /// In an immediate transaction, so two appends to one conversation take turns.
    fn append_turn(&self, id: &ConversationId, turn: &Turn) -> Result<bool, StoreError> {
        sqlite(|| {
            let mut connection = self.connection()?;
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let turns: Option<i64> = transaction
                .query_row(
                    "SELECT (SELECT COUNT(*) FROM conversation_turns WHERE conversation_id = ?1)
                 FROM conversations WHERE id = ?1",
                    [id.as_str()],
                    |row| row.get(0),
                )
                .optional()?;
            let Some(position) = turns else {
                return Ok(false);
            };
            transaction.execute(
                "INSERT INTO conversation_turns
             (conversation_id, position, question, answer, refused, sources, at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id.as_str(),
                    position,
                    turn.question,
                    turn.answer,
                    turn.refused,
                    serde_json::to_string(&turn.sources)?,
                    turn.at_ms
                ],
            )?;
            transaction.execute(
                "UPDATE conversations SET updated_ms = MAX(updated_ms, ?2) WHERE id = ?1",
                params![id.as_str(), turn.at_ms],
            )?;
            transaction.commit()?;
            Ok(true)
        })
    }

    fn conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<Option<Conversation>, StoreError> {
        sqlite(|| {
            let connection = self.connection()?;
            let stamps: Option<(i64, i64, Option<String>)> = connection
                .query_row(
                    "SELECT created_ms, updated_ms, owner FROM conversations
                 WHERE id = ?1 AND (?2 IS NULL OR owner = ?2)",
                    params![id.as_str(), owner],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()?;
            let Some((created_ms, updated_ms, stored_owner)) = stamps else {
                return Ok(None);
            };
            let mut statement = connection.prepare(
                "SELECT question, answer, refused, sources, at_ms FROM conversation_turns
             WHERE conversation_id = ?1 ORDER BY position",
            )?;
            let rows = statement.query_map([id.as_str()], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, bool>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, i64>(4)?,
                ))
            })?;
            let mut turns = Vec::new();
            for row in rows {
                let (question, answer, refused, sources, at_ms) = row?;
                turns.push(Turn {
                    question,
                    answer,
                    refused,
                    sources: serde_json::from_str(&sources)?,
                    at_ms,
                });
            }
            Ok(Some(Conversation {
                id: id.clone(),
                created_ms,
                updated_ms,
                owner: stored_owner,
                turns,
            }))
        })
    }

    fn conversations(&self, owner: Option<&str>) -> Result<Vec<ConversationSummary>, StoreError> {
        sqlite(|| {
            let connection = self.connection()?;
            let mut statement = connection.prepare(
                "SELECT c.id, c.created_ms, c.updated_ms,
                    (SELECT COUNT(*) FROM conversation_turns t WHERE t.conversation_id = c.id),
                    COALESCE((SELECT question FROM conversation_turns t
                              WHERE t.conversation_id = c.id AND t.position = 0), '')
             FROM conversations c WHERE ?1 IS NULL OR c.owner = ?1
             ORDER BY c.updated_ms DESC, c.id",
            )?;
            let rows = statement.query_map([owner], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, String>(4)?,
                ))
            })?;
            let mut summaries = Vec::new();
            for row in rows {
                let (id, created_ms, updated_ms, turns, title) = row?;
                summaries.push(ConversationSummary {
                    id: stored_id(id)?,
                    title,
                    turns: turns as usize,
                    created_ms,
                    updated_ms,
                });
            }
            Ok(summaries)
        })
    }

    fn delete_conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<bool, StoreError> {
        sqlite(|| {
            let deleted = self.connection()?.execute(
                "DELETE FROM conversations WHERE id = ?1 AND (?2 IS NULL OR owner = ?2)",
                params![id.as_str(), owner],
            )?;
            Ok(deleted > 0)
        })
    }
}

/// Conversations kept before keys had names belong to the machine's owner.
fn add_owner_column(connection: &Connection) -> Result<(), SqliteError> {
    let has_owner: bool = connection.query_row(
        "SELECT COUNT(*) > 0 FROM pragma_table_info('conversations') WHERE name = 'owner'",
        [],
        |row| row.get(0),
    )?;
    if !has_owner {
        connection.execute_batch("ALTER TABLE conversations ADD COLUMN owner TEXT")?;
    }
    Ok(())
}
