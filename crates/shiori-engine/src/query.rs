//! The bounds of a question and its retrieval settings: every surface (CLI, HTTP) checks a query
//! here, once, before it runs.

use crate::EngineError;
use shiori_core::RetrievalConfig;

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

/// Rejects `top_k` outside 1..=[`MAX_TOP_K`] and a threshold that is no cosine similarity.
pub fn check_retrieval(retrieval: &RetrievalConfig) -> Result<(), EngineError> {
    if !(1..=MAX_TOP_K).contains(&retrieval.top_k) {
        return Err(invalid(format!(
            "top_k must be between 1 and {MAX_TOP_K}, got {}",
            retrieval.top_k
        )));
    }
    let threshold = retrieval.threshold;
    if !threshold.is_finite() || !(-1.0..=1.0).contains(&threshold) {
        return Err(invalid(format!(
            "threshold is a cosine similarity between -1 and 1, got {threshold}"
        )));
    }
    Ok(())
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
        for (top_k, threshold) in [
            (0, 0.5),
            (1_000_000, 0.5),
            (5, f32::NAN),
            (5, 5.0),
            (5, f32::INFINITY),
        ] {
            let bad = RetrievalConfig {
                top_k,
                threshold,
                ..RetrievalConfig::default()
            };
            let error = check_query("vpn?", &bad).unwrap_err();
            assert!(matches!(error, EngineError::Invalid(_)), "{error}");
        }
    }
}
