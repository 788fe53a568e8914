//! Embedding texts on request (`shiori embed`, `/v1/embeddings`): the configured embedder, as a
//! query or as a passage, with the bounds every surface shares.

use crate::{Engine, EngineError};
use serde::Deserialize;

/// Most texts one request may embed.
pub const MAX_EMBED_INPUTS: usize = 2_048;
/// Longest text accepted, in characters (the model reads only its first tokens anyway).
pub const MAX_EMBED_CHARS: usize = 32_000;

/// How a text is embedded: models such as e5 embed questions and passages differently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedAs {
    Query,
    /// As the index embeds a chunk.
    #[default]
    Passage,
}

impl Engine {
    /// One vector per text, unit length, in order.
    pub fn embed(&self, texts: &[&str], embed_as: EmbedAs) -> Result<Vec<Vec<f32>>, EngineError> {
        check_embedding_input(texts)?;
        Ok(match embed_as {
            EmbedAs::Passage => self.embedder.embed_passages(texts)?,
            EmbedAs::Query => texts
                .iter()
                .map(|text| self.embedder.embed_query(text))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// Rejects an empty list, too many texts, and an empty or overlong text (named by position).
fn check_embedding_input(texts: &[&str]) -> Result<(), EngineError> {
    if texts.is_empty() {
        return Err(EngineError::Invalid("input: nothing to embed".into()));
    }
    if texts.len() > MAX_EMBED_INPUTS {
        return Err(EngineError::Invalid(format!(
            "input: at most {MAX_EMBED_INPUTS} texts per request, got {}",
            texts.len()
        )));
    }
    for (index, text) in texts.iter().enumerate() {
        if text.trim().is_empty() {
            return Err(EngineError::Invalid(format!("input[{index}] is empty")));
        }
        if text.chars().count() > MAX_EMBED_CHARS {
            return Err(EngineError::Invalid(format!(
                "input[{index}] is longer than {MAX_EMBED_CHARS} characters"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_text_that_cannot_be_embedded() {
        assert!(check_embedding_input(&["a", "b"]).is_ok());
        let message = |texts: &[&str]| check_embedding_input(texts).unwrap_err().to_string();
        assert!(message(&[]).contains("nothing to embed"));
        assert!(message(&["a", " "]).contains("input[1] is empty"));
        let long = "x".repeat(MAX_EMBED_CHARS + 1);
        assert!(message(&[long.as_str()]).contains("input[0] is longer"));
        let many = vec!["a"; MAX_EMBED_INPUTS + 1];
        assert!(message(&many).contains("at most 2048"));
    }
}
