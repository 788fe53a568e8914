use shiori_core::{Answer, Hit, RelevanceVerdict, Source, Timings};

/// What a refusal says instead of an answer.
pub const REFUSAL_TEXT: &str = "No relevant documents were found for this question.";

/// True when the question should be refused: no hits, or the retriever's verdict says nothing
/// among them is relevant enough.
pub fn refuses(hits: &[Hit], verdict: &RelevanceVerdict) -> bool {
    hits.is_empty() || verdict.refused
}

/// Answers with the text of the best hit; every hit becomes a source.
pub fn extractive_answer(hits: &[Hit], verdict: &RelevanceVerdict, timings: Timings) -> Answer {
    let refused = refuses(hits, verdict);
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

    fn verdict(refused: bool) -> RelevanceVerdict {
        RelevanceVerdict {
            refused,
            reason: String::new(),
        }
    }

    #[test]
    fn answers_with_the_best_chunk_when_it_is_relevant() {
        let hits = [hit("best", 0.8), hit("second", 0.6)];
        let answer = extractive_answer(&hits, &verdict(false), Timings::default());
        assert!(!answer.refused);
        assert_eq!(answer.answer, "best");
        assert_eq!(answer.sources.len(), 2);
    }

    #[test]
    fn refuses_what_the_verdict_refuses_or_without_hits() {
        let hits = [hit("weak", 0.3)];
        let answer = extractive_answer(&hits, &verdict(true), Timings::default());
        assert!(answer.refused);
        assert_eq!(answer.answer, REFUSAL_TEXT);
        assert_eq!(answer.sources.len(), 1);
        assert!(extractive_answer(&[], &verdict(false), Timings::default()).refused);
    }
}
