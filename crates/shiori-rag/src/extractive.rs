use shiori_core::{Answer, Hit, Source, Timings};

/// What a refusal says instead of an answer.
pub const REFUSAL_TEXT: &str = "No relevant documents were found for this question.";

/// How relevant the best chunk is: the best dense cosine similarity of the query. Fused or
/// BM25 scores have no fixed scale, so they never decide a refusal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Relevance {
    pub best_dense: Option<f32>,
    pub threshold: f32,
}

impl Relevance {
    /// True when the question should be refused: no hits, no dense evidence, or too weak.
    pub fn refuses(&self, hits: &[Hit]) -> bool {
        hits.is_empty() || self.best_dense.is_none_or(|cosine| cosine < self.threshold)
    }
}

/// Answers with the text of the best hit; every hit becomes a source.
pub fn extractive_answer(hits: &[Hit], relevance: Relevance, timings: Timings) -> Answer {
    let refused = relevance.refuses(hits);
    let answer = match hits.first() {
        Some(best) if !refused => best.chunk.text.clone(),
        _ => REFUSAL_TEXT.to_string(),
    };
    Answer {
        answer,
        refused,
        sources: hits.iter().map(Source::from).collect(),
        timings_ms: timings,
        ..Answer::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::hit;

    #[test]
    fn answers_with_the_best_chunk_above_the_threshold() {
        let hits = [hit("best", 0.8), hit("second", 0.6)];
        let relevance = Relevance {
            best_dense: Some(0.8),
            threshold: 0.5,
        };
        let answer = extractive_answer(&hits, relevance, Timings::default());
        assert!(!answer.refused);
        assert_eq!(answer.answer, "best");
        assert_eq!(answer.sources.len(), 2);
    }

    #[test]
    fn refuses_below_the_threshold_or_without_dense_evidence() {
        let hits = [hit("weak", 0.3)];
        for best_dense in [Some(0.3), None] {
            let relevance = Relevance {
                best_dense,
                threshold: 0.5,
            };
            let answer = extractive_answer(&hits, relevance, Timings::default());
            assert!(answer.refused);
            assert_eq!(answer.answer, REFUSAL_TEXT);
        }
        let nothing = Relevance {
            best_dense: Some(0.9),
            threshold: 0.5,
        };
        assert!(extractive_answer(&[], nothing, Timings::default()).refused);
    }
}
