//! Conversations of the data directory: started with an unguessable id, read, listed, deleted;
//! [`Engine::answer`] appends their turns.

use crate::{Engine, EngineError};
use shiori_core::{Conversation, ConversationId, ConversationSummary, Turn};
use std::time::{SystemTime, UNIX_EPOCH};

impl Engine {
    /// Starts an empty conversation owned by `owner` (an API key's name; `None` for the
    /// machine's owner); its id comes from the operating system's random source.
    pub fn start_conversation(&self, owner: Option<&str>) -> Result<ConversationId, EngineError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(EngineError::Random)?;
        let id = ConversationId::from_random(bytes);
        self.conversations
            .create_conversation(&id, owner, now_ms())?;
        Ok(id)
    }

    /// A conversation with all its turns, oldest first; another key's is unknown to `owner`.
    pub fn conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<Conversation, EngineError> {
        self.conversations
            .conversation(id, owner)?
            .ok_or_else(|| EngineError::UnknownConversation(id.clone()))
    }

    /// Every conversation `owner` may see, most recently updated first.
    pub fn conversations(
        &self,
        owner: Option<&str>,
    ) -> Result<Vec<ConversationSummary>, EngineError> {
        Ok(self.conversations.conversations(owner)?)
    }

    pub fn delete_conversation(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<(), EngineError> {
        match self.conversations.delete_conversation(id, owner)? {
            true => Ok(()),
            false => Err(EngineError::UnknownConversation(id.clone())),
        }
    }

    /// Appends a turn; the conversation may have been deleted while it was answered.
    pub(crate) fn record_turn(&self, id: &ConversationId, turn: &Turn) -> Result<(), EngineError> {
        match self.conversations.append_turn(id, turn)? {
            true => Ok(()),
            false => Err(EngineError::UnknownConversation(id.clone())),
        }
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64)
}
