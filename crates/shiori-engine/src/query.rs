//! The bounds of a question and its retrieval settings: every surface (CLI, HTTP) checks a query
//! here, once, before it runs.

use crate::EngineError;
use shiori_core::{Refusal, RetrievalConfig};

/// Longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 2_000;
/// Most chunks a question may retrieve.
pub const MAX_TOP_K: usize = 50;

/// Rejects an empty or overlong question and retrieval settings out of their ranges.
pub fn check_query(question: &str, retrieval: &RetrievalConfig) -> Result<(), EngineError> {
    if question.trim().is_empty() {
        return Err(invalid("the question is empty".to_string()));
    }
    if question.chars().count() > MAX_QUESTION_CHARS {
        return Err(invalid(format!(
            "the question is longer than {MAX_QUESTION_CHARS} characters"
        )));
    }
    check_retrieval(retrieval)
}

/// Rejects `top_k` outside 1..=[`MAX_TOP_K`] and a refusal setting out of range (a cosine
/// outside −1…1, an answer rate outside (0, 1]).
pub fn check_retrieval(retrieval: &RetrievalConfig) -> Result<(), EngineError> {
    if !(1..=MAX_TOP_K).contains(&retrieval.top_k) {
        return Err(invalid(format!(
            "top_k must be between 1 and {MAX_TOP_K}, got {}",
            retrieval.top_k
        )));
    }
    retrieval
        .refusal
        .checked()
        .map(|_| ())
        .map_err(|e| invalid(e.to_string()))
}

/// The refusal a command line or request asks for: `refusal` (`balanced`, `answer_rate:R`,
/// `cosine:T`) or the older `threshold` (a cosine cut), not both; `None` keeps the configured
/// one. [`check_retrieval`] checks the range.
pub fn refusal_override(
    refusal: Option<Refusal>,
    threshold: Option<f32>,
) -> Result<Option<Refusal>, EngineError> {
    match (refusal, threshold) {
        (Some(_), Some(_)) => Err(invalid(
            "give refusal or threshold (a cosine cut), not both".to_string(),
        )),
        (refusal, threshold) => Ok(refusal.or(threshold.map(Refusal::Cosine))),
    }
}

fn invalid(message: String) -> EngineError {
    EngineError::Invalid(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_what_is_out_of_range() {
        let ok = RetrievalConfig::default();
        assert!(check_query("vpn?", &ok).is_ok());
        assert!(check_query("  ", &ok).is_err());
        assert!(check_query(&"x".repeat(MAX_QUESTION_CHARS + 1), &ok).is_err());
        for (top_k, refusal) in [
            (0, Refusal::Cosine(0.5)),
            (1_000_000, Refusal::Balanced),
            (5, Refusal::Cosine(f32::NAN)),
            (5, Refusal::Cosine(5.0)),
            (5, Refusal::Cosine(f32::INFINITY)),
            (5, Refusal::AnswerRate(0.0)),
            (5, Refusal::AnswerRate(1.01)),
        ] {
            let bad = RetrievalConfig {
                top_k,
                refusal,
                ..RetrievalConfig::default()
            };
            let error = check_query("vpn?", &bad).unwrap_err();
            assert!(matches!(error, EngineError::Invalid(_)), "{error}");
        }
    }

    #[test]
    fn a_threshold_is_a_cosine_refusal_and_both_at_once_are_refused() {
        assert_eq!(refusal_override(None, None).unwrap(), None);
        assert_eq!(
            refusal_override(None, Some(0.8)).unwrap(),
            Some(Refusal::Cosine(0.8))
        );
        assert_eq!(
            refusal_override(Some(Refusal::AnswerRate(0.9)), None).unwrap(),
            Some(Refusal::AnswerRate(0.9))
        );
        let both = refusal_override(Some(Refusal::Balanced), Some(0.8)).unwrap_err();
        assert!(both.to_string().contains("not both"), "{both}");
    }
}
