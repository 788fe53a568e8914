//! Conversations of the data directory: started with an unguessable id, read, listed, deleted;
//! [`Engine::answer`] appends their turns.

use crate::{Engine, EngineError};
use shiori_core::{Conversation, ConversationId, ConversationSummary, Turn};
use std::time::{SystemTime, UNIX_EPOCH};

/// Turns one conversation keeps: a follow-up past them is refused, so a client cannot grow one
/// conversation (and every later answer's read of it) without end.
pub const MAX_TURNS: usize = 500;
/// Conversations one owner keeps: starting one more forgets the least recently continued.
pub const MAX_CONVERSATIONS: usize = 1_000;

impl Engine {
    /// Starts an empty conversation owned by `owner` (an API key's name; `None` for the
    /// machine's owner); its id comes from the operating system's random source.
    /// Past [`MAX_CONVERSATIONS`], the owner's least recently continued ones are forgotten.
    pub fn start_conversation(&self, owner: Option<&str>) -> Result<ConversationId, EngineError> {
        let kept = self.conversations.conversations(owner)?;
        for forgotten in kept.iter().skip(MAX_CONVERSATIONS - 1) {
            self.conversations
                .delete_conversation(&forgotten.id, owner)?;
        }
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

    /// A conversation a question may continue: `owner`'s, with fewer than [`MAX_TURNS`] turns.
    pub fn conversation_to_continue(
        &self,
        id: &ConversationId,
        owner: Option<&str>,
    ) -> Result<Conversation, EngineError> {
        let conversation = self.conversation(id, owner)?;
        if conversation.turns.len() >= MAX_TURNS {
            return Err(EngineError::ConversationFull(id.clone()));
        }
        Ok(conversation)
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
