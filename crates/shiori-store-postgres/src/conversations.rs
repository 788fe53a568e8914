//! Conversations in PostgreSQL (schema migration 2), on the primary: a turn one server just
//! wrote is read by the next request, whichever server takes it.

use crate::pool::{self, Connection, Pool};
use crate::{schema, PostgresError, PostgresOptions};
use shiori_core::{Conversation, ConversationId, ConversationSummary, Turn};
use shiori_store::{stored_id, ConversationStore, StoreError};

pub struct PostgresConversations {
    pool: Pool,
    options: PostgresOptions,
}

impl PostgresConversations {
    /// Connects and checks that the schema is current.
    pub fn open(options: &PostgresOptions) -> Result<PostgresConversations, PostgresError> {
        let conversations = PostgresConversations {
            pool: pool::pool(&options.url, options)?,
            options: options.clone(),
        };
        schema::check_version(&mut *conversations.client()?)?;
        Ok(conversations)
    }

    fn client(&self) -> Result<Connection, PostgresError> {
        pool::get(&self.pool, &self.options.url, &self.options)
    }

    fn append(&self, id: &ConversationId, turn: &Turn) -> Result<bool, PostgresError> {
        let mut client = self.client()?;
        let mut transaction = client.transaction()?;
        // The row lock makes two appends to one conversation take turns.
        let exists = transaction
            .query_opt(
                "SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE",
                &[&id.as_str()],
            )?
            .is_some();
        if !exists {
            return Ok(false);
        }
        let position: i64 = transaction
            .query_one(
                "SELECT COUNT(*) FROM conversation_turns WHERE conversation_id = $1",
                &[&id.as_str()],
            )?
            .get(0);
        let sources = serde_json::to_string(&turn.sources)?;
        transaction.execute(
            "INSERT INTO conversation_turns
             (conversation_id, position, question, answer, refused, sources, at_ms)
             VALUES ($1, $2, $3, $4, $5, $6::TEXT::JSONB, $7)",
            &[
                &id.as_str(),
                &(position as i32),
                &turn.question,
                &turn.answer,
                &turn.refused,
                &sources,
                &turn.at_ms,
            ],
        )?;
        transaction.execute(
            "UPDATE conversations SET updated_ms = GREATEST(updated_ms, $2) WHERE id = $1",
            &[&id.as_str(), &turn.at_ms],
        )?;
        transaction.commit()?;
        Ok(true)
    }

    fn read(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<Option<Conversation>, PostgresError> {
        let mut client = self.client()?;
        let Some(row) = client.query_opt(
            "SELECT created_ms, updated_ms, owner FROM conversations
             WHERE id = $1 AND ($2::TEXT IS NULL OR owner = $2)",
            &[&id.as_str(), &owner],
        )?
        else {
            return Ok(None);
        };
        let mut turns = Vec::new();
        for turn in client.query(
            "SELECT question, answer, refused, sources::TEXT, at_ms FROM conversation_turns
             WHERE conversation_id = $1 ORDER BY position",
            &[&id.as_str()],
        )? {
            turns.push(Turn {
                question: turn.get(0),
                answer: turn.get(1),
                refused: turn.get(2),
                sources: serde_json::from_str(turn.get(3))?,
                at_ms: turn.get(4),
            });
        }
        Ok(Some(Conversation {
            id: id.clone(),
            created_ms: row.get(0),
            updated_ms: row.get(1),
            owner: row.get(2),
            turns,
        }))
    }
}

impl ConversationStore for PostgresConversations {
    fn create_conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.client()?
            .execute(
                "INSERT INTO conversations (id, created_ms, updated_ms, owner)
                 VALUES ($1, $2, $2, $3)",
                &[&id.as_str(), &now_ms, &owner],
            )
            .map_err(PostgresError::from)?;
        Ok(())
    }

    fn append_turn(&self, id: &ConversationId, turn: &Turn) -> Result<bool, StoreError> {
        Ok(self.append(id, turn)?)
    }

    fn conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<Option<Conversation>, StoreError> {
        Ok(self.read(id, owner)?)
    }

    fn conversations(&self, owner: Option<&str>) -> Result<Vec<ConversationSummary>, StoreError> {
        let rows = self
            .client()?
            .query(
                "SELECT c.id, COALESCE(first.question, ''), c.created_ms, c.updated_ms,
                        (SELECT COUNT(*) FROM conversation_turns t WHERE t.conversation_id = c.id)
                 FROM conversations c
                 LEFT JOIN conversation_turns first
                     ON first.conversation_id = c.id AND first.position = 0
                 WHERE $1::TEXT IS NULL OR c.owner = $1
                 ORDER BY c.updated_ms DESC, c.id",
                &[&owner],
            )
            .map_err(PostgresError::from)?;
        rows.iter()
            .map(|row| {
                Ok(ConversationSummary {
                    id: stored_id(row.get(0))?,
                    title: row.get(1),
                    created_ms: row.get(2),
                    updated_ms: row.get(3),
                    turns: row.get::<_, i64>(4) as usize,
                })
            })
            .collect()
    }

    fn delete_conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<bool, StoreError> {
        let deleted = self
            .client()?
            .execute(
                "DELETE FROM conversations WHERE id = $1 AND ($2::TEXT IS NULL OR owner = $2)",
                &[&id.as_str(), &owner],
            )
            .map_err(PostgresError::from)?;
        Ok(deleted > 0)
    }
}
