//! A conversation: an unguessable id and its turns, each a question with the answer it got.

use crate::{Answer, Source};
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// Hex digits of a [`ConversationId`] (128 bits).
const ID_HEX_DIGITS: usize = 32;

/// A conversation's id: 128 random bits as 32 lowercase hex digits, so that knowing one
/// conversation's id tells nothing about another's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ConversationId(String);

#[derive(Debug, Error, PartialEq)]
#[error("conversation_id must be {ID_HEX_DIGITS} lowercase hex digits, got {0:?}")]
pub struct InvalidConversationId(pub String);

impl ConversationId {
    pub fn from_random(bytes: [u8; 16]) -> ConversationId {
        ConversationId(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
    }

    pub fn parse(text: &str) -> Result<ConversationId, InvalidConversationId> {
        let valid = text.len() == ID_HEX_DIGITS
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        match valid {
            true => Ok(ConversationId(text.to_string())),
            false => Err(InvalidConversationId(text.to_string())),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConversationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for ConversationId {
    type Err = InvalidConversationId;

    fn from_str(text: &str) -> Result<ConversationId, InvalidConversationId> {
        ConversationId::parse(text)
    }
}

impl TryFrom<String> for ConversationId {
    type Error = InvalidConversationId;

    fn try_from(text: String) -> Result<ConversationId, InvalidConversationId> {
        ConversationId::parse(&text)
    }
}

impl From<ConversationId> for String {
    fn from(id: ConversationId) -> String {
        id.0
    }
}

/// A source of a turn's answer, without its text (the store holds that once, in its chunks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnSource {
    pub doc_id: String,
    pub chunk_id: String,
    pub title: String,
    pub source: String,
}

impl From<&Source> for TurnSource {
    fn from(source: &Source) -> TurnSource {
        TurnSource {
            doc_id: source.doc_id.clone(),
            chunk_id: source.chunk_id.clone(),
            title: source.title.clone(),
            source: source.source.clone(),
        }
    }
}

/// One question of a conversation and the answer it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub question: String,
    pub answer: String,
    pub refused: bool,
    pub sources: Vec<TurnSource>,
    /// When the answer was given, milliseconds since the Unix epoch.
    pub at_ms: i64,
}

impl Turn {
    pub fn new(question: &str, answer: &Answer, at_ms: i64) -> Turn {
        Turn {
            question: question.to_string(),
            answer: answer.answer.clone(),
            refused: answer.refused,
            sources: answer.sources.iter().map(TurnSource::from).collect(),
            at_ms,
        }
    }
}

/// A conversation as listed: its title is its first question (empty before the first turn).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationSummary {
    pub id: ConversationId,
    pub title: String,
    pub turns: usize,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// A conversation with its turns, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    pub id: ConversationId,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// The API key that started it (its name and a fingerprint of its value and groups);
    /// `None` for the machine's owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    pub turns: Vec<Turn>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_128_bit_lowercase_hex() {
        let id = ConversationId::from_random([0xab; 16]);
        assert_eq!(id.as_str(), "ab".repeat(16));
        assert_eq!(ConversationId::parse(id.as_str()), Ok(id));
        for bad in [
            "",
            "ab",
            &"AB".repeat(16),
            &"g0".repeat(16),
            &"ab".repeat(17),
        ] {
            assert!(ConversationId::parse(bad).is_err(), "{bad}");
        }
        let parsed: Result<ConversationId, _> = serde_json::from_str("\"../etc/passwd\"");
        assert!(parsed.is_err());
    }
}
