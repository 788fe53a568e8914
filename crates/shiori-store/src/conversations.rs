//! The conversation seam: where conversations and their turns are kept.

use crate::StoreError;
use shiori_core::{Conversation, ConversationId, ConversationSummary, Turn};

/// Where conversations are kept: the embedded store's database or PostgreSQL. Each has an
/// owner, the name of the API key that started it (`None`: the machine's owner); a read or
/// delete `as` a key finds only that key's conversations, one `as` `None` finds all of them.
pub trait ConversationStore: Send + Sync {
    /// Records a conversation with no turns yet.
    fn create_conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError>;
    /// Adds `turn` after the last one, atomically; `false` when there is no such conversation.
    fn append_turn(&self, id: &ConversationId, turn: &Turn) -> Result<bool, StoreError>;
    /// A conversation with every turn, oldest first.
    fn conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<Option<Conversation>, StoreError>;
    /// Every conversation, most recently updated first.
    fn conversations(&self, owner: Option<&str>) -> Result<Vec<ConversationSummary>, StoreError>;
    /// Removes a conversation and its turns; `false` when there was none.
    fn delete_conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<bool, StoreError>;
}

/// An id read back from a store, which only ever holds valid ones.
pub fn stored_id(id: String) -> Result<ConversationId, StoreError> {
    ConversationId::parse(&id).map_err(|error| StoreError::Corrupt {
        what: "conversation id",
        source: Box::new(error),
    })
}
