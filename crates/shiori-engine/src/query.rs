//! A request's question and retrieval settings, made typed and checked once: every surface (CLI,
//! HTTP, OpenAI, MCP) translates its transport into a [`Question`] and [`RetrievalOverrides`],
//! and [`Engine::retrieval`](crate::Engine::retrieval) layers the overrides over `[retrieval]`
//! and checks the result. Nothing past this point checks them again.

use crate::EngineError;
use serde::Deserialize;
use shiori_core::{FusionKind, Refusal, RetrievalConfig, RetrievalMode};

/// Longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 2_000;
/// Most chunks a question may retrieve.
pub const MAX_TOP_K: usize = 50;

/// A question that is neither empty nor longer than [`MAX_QUESTION_CHARS`]; only
/// [`Question::new`] makes one, so what the engine is handed was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question(String);

impl Question {
    pub fn new(text: impl Into<String>) -> Result<Question, EngineError> {
        let text = text.into();
        if text.trim().is_empty() {
            return Err(invalid("the question is empty".to_string()));
        }
        if text.chars().count() > MAX_QUESTION_CHARS {
            return Err(invalid(format!(
                "the question is longer than {MAX_QUESTION_CHARS} characters"
            )));
        }
        Ok(Question(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What one request may change of `[retrieval]`; `None` keeps the configured value. Surfaces
/// fill the fields their transport offers (an HTTP body deserialises into it directly).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrievalOverrides {
    pub mode: Option<RetrievalMode>,
    pub top_k: Option<usize>,
    pub fusion: Option<FusionKind>,
    pub rrf_k: Option<f32>,
    pub alpha: Option<f32>,
    pub bm25_weight: Option<f32>,
    pub normalised_bm25_weight: Option<f32>,
    /// `balanced`, `answer_rate:R` or `cosine:T`.
    pub refusal: Option<Refusal>,
    /// A cosine cut: the same as `refusal: cosine:T`, and not given with it.
    pub threshold: Option<f32>,
    /// Search the first project filter, then its related projects.
    pub two_stage: Option<bool>,
}

impl RetrievalOverrides {
    /// `base` with these settings on top, checked: `top_k` within 1..=[`MAX_TOP_K`], a
    /// refusal in range (a cosine within −1…1, an answer rate within (0, 1]), `refusal` and
    /// `threshold` not both.
    pub(crate) fn over(&self, base: &RetrievalConfig) -> Result<RetrievalConfig, EngineError> {
        let refusal = match (self.refusal, self.threshold) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "give refusal or threshold (a cosine cut), not both".to_string(),
                ))
            }
            (refusal, threshold) => refusal.or(threshold.map(Refusal::Cosine)),
        };
        let retrieval = RetrievalConfig {
            mode: self.mode.unwrap_or(base.mode),
            top_k: self.top_k.unwrap_or(base.top_k),
            fusion: self.fusion.unwrap_or(base.fusion),
            rrf_k: self.rrf_k.unwrap_or(base.rrf_k),
            alpha: self.alpha.unwrap_or(base.alpha),
            bm25_weight: self.bm25_weight.unwrap_or(base.bm25_weight),
            normalised_bm25_weight: self
                .normalised_bm25_weight
                .unwrap_or(base.normalised_bm25_weight),
            refusal: refusal.unwrap_or(base.refusal),
            two_stage: self.two_stage.unwrap_or(base.two_stage),
            ..base.clone()
        };
        check_retrieval(&retrieval)?;
        Ok(retrieval)
    }
}

/// Rejects settings out of their ranges; `shiori.toml`'s own are checked with it at load.
pub(crate) fn check_retrieval(retrieval: &RetrievalConfig) -> Result<(), EngineError> {
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

fn invalid(message: String) -> EngineError {
    EngineError::Invalid(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_questions_out_of_range() {
        assert!(Question::new("vpn?").is_ok());
        assert!(Question::new("  ").is_err());
        assert!(Question::new("x".repeat(MAX_QUESTION_CHARS + 1)).is_err());
    }

    #[test]
    fn rejects_settings_out_of_range() {
        let base = RetrievalConfig::default();
        assert!(RetrievalOverrides::default().over(&base).is_ok());
        for (top_k, refusal) in [
            (0, Refusal::Cosine(0.5)),
            (1_000_000, Refusal::Balanced),
            (5, Refusal::Cosine(f32::NAN)),
            (5, Refusal::Cosine(5.0)),
            (5, Refusal::Cosine(f32::INFINITY)),
            (5, Refusal::AnswerRate(0.0)),
            (5, Refusal::AnswerRate(1.01)),
        ] {
            let bad = RetrievalOverrides {
                top_k: Some(top_k),
                refusal: Some(refusal),
                ..RetrievalOverrides::default()
            };
            let error = bad.over(&base).unwrap_err();
            assert!(matches!(error, EngineError::Invalid(_)), "{error}");
        }
    }

    #[test]
    fn overrides_only_what_they_name() {
        let base = RetrievalConfig::default();
        let overrides: RetrievalOverrides =
            serde_json::from_value(serde_json::json!({"top_k": 3, "mode": "bm25"})).unwrap();
        let merged = overrides.over(&base).unwrap();
        assert_eq!((merged.top_k, merged.mode), (3, RetrievalMode::Bm25));
        assert_eq!(merged.refusal, base.refusal);
        assert_eq!(merged.fusion, base.fusion);
        let unknown = serde_json::from_value::<RetrievalOverrides>(serde_json::json!({"k": 3}));
        assert!(unknown.is_err());
    }

    #[test]
    fn a_threshold_is_a_cosine_refusal_and_both_at_once_are_refused() {
        let base = RetrievalConfig::default();
        let refusal = |refusal, threshold| {
            RetrievalOverrides {
                refusal,
                threshold,
                ..RetrievalOverrides::default()
            }
            .over(&base)
            .map(|merged| merged.refusal)
        };
        assert_eq!(refusal(None, None).unwrap(), base.refusal);
        assert_eq!(refusal(None, Some(0.8)).unwrap(), Refusal::Cosine(0.8));
        assert_eq!(
            refusal(Some(Refusal::AnswerRate(0.9)), None).unwrap(),
            Refusal::AnswerRate(0.9)
        );
        let both = refusal(Some(Refusal::Balanced), Some(0.8)).unwrap_err();
        assert!(both.to_string().contains("not both"), "{both}");
    }
}
