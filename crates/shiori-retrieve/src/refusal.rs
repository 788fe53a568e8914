//! The refusal decision: a calibrated logistic model over the relevance signals where the
//! embedder has one, a raw cosine cut otherwise.

use crate::calibration::RefusalModel;
use crate::refusal_model::E5_SMALL;
use shiori_core::{Refusal, RelevanceSignals, RelevanceVerdict};

/// The calibrated models that ship in the binary.
const MODELS: [&RefusalModel; 1] = [&E5_SMALL];

/// The cosine cut of an embedder without a calibrated model. all-MiniLM-L6-v2's cosines sit far
/// lower than e5's; other embedders keep the cut that was once everyone's default.
pub fn default_cosine(embedder: &str) -> f32 {
    if embedder == "sentence-transformers/all-MiniLM-L6-v2" {
        0.45
    } else {
        0.855
    }
}

/// Decides whether to refuse from `signals` (`None`: the dense retriever found nothing) under
/// `refusal`, with the model of `embedder` when it has one.
pub fn decide(
    signals: Option<&RelevanceSignals>,
    refusal: Refusal,
    embedder: &str,
) -> RelevanceVerdict {
    let Some(signals) = signals else {
        return RelevanceVerdict {
            refused: true,
            reason: "no dense candidates".to_string(),
        };
    };
    let model = MODELS.into_iter().find(|model| model.embedder == embedder);
    let (score, cut, rule) = match (refusal, model) {
        (Refusal::Cosine(cut), _) => (signals.best_cosine, cut, format!("cosine cut {cut}")),
        (Refusal::Balanced, Some(model)) => (
            model.log_odds(signals),
            model.balanced_cut,
            format!("calibrated model, {refusal}"),
        ),
        (Refusal::AnswerRate(rate), Some(model)) => (
            model.log_odds(signals),
            model.answer_rate_cut(rate),
            format!("calibrated model, {refusal}"),
        ),
        (_, None) => {
            let cut = default_cosine(embedder);
            let rule =
                format!("{refusal}: no calibrated model for this embedder, cosine cut {cut}");
            (signals.best_cosine, cut, rule)
        }
    };
    let refused = score < cut;
    RelevanceVerdict {
        refused,
        reason: format!(
            "{rule}: score {score:.3} {} cut {cut:.3}; {}",
            if refused { "<" } else { "≥" },
            describe(signals)
        ),
    }
}

fn describe(s: &RelevanceSignals) -> String {
    format!(
        "best cosine {:.3}, margin {:.3}, cosine z {:.2}, BM25 z {:.2}, BM25 over mean {:.2}, \
         BM25 gap {:.2}, agreement {:.2}, query length {:.2}, Japanese {}, sentence coverage {:.2}, \
         cross-language {}",
        s.best_cosine,
        s.cosine_margin,
        s.cosine_z,
        s.bm25_z,
        s.bm25_relative,
        s.bm25_gap,
        s.agreement,
        s.query_length,
        s.japanese,
        s.sentence_coverage,
        s.cross_language
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Signals at the model's means: the log-odds are the bias.
    fn average() -> RelevanceSignals {
        let m = E5_SMALL.means;
        RelevanceSignals {
            best_cosine: m[0],
            cosine_margin: m[1],
            cosine_z: m[2],
            bm25_z: 4.0,
            bm25_relative: m[3],
            bm25_gap: m[4],
            agreement: m[5],
            query_length: 3.0,
            japanese: m[6],
            sentence_coverage: m[7],
            ..RelevanceSignals::default()
        }
    }

    #[test]
    fn the_log_odds_grow_with_the_cosine_a_clear_lexical_match_and_a_covering_sentence() {
        let base = average();
        assert!((E5_SMALL.log_odds(&base) - E5_SMALL.bias).abs() < 1e-4);
        let weaker = RelevanceSignals {
            best_cosine: base.best_cosine - 0.05,
            bm25_gap: base.bm25_gap - 0.2,
            ..base
        };
        assert!(E5_SMALL.log_odds(&weaker) < E5_SMALL.log_odds(&base));
        let covered = RelevanceSignals {
            sentence_coverage: base.sentence_coverage + 0.3,
            ..base
        };
        assert!(E5_SMALL.log_odds(&covered) > E5_SMALL.log_odds(&base));
    }

    #[test]
    fn across_languages_the_words_are_missing_and_the_cosine_still_counts() {
        let english_over_japanese = RelevanceSignals {
            best_cosine: 0.83,
            bm25_relative: 0.2,
            bm25_gap: 0.0,
            agreement: 0.0,
            japanese: 0.0,
            sentence_coverage: 0.0,
            ..average()
        };
        assert!(E5_SMALL.log_odds(&english_over_japanese) < E5_SMALL.balanced_cut);
        let across = RelevanceSignals {
            cross_language: 1.0,
            ..english_over_japanese
        };
        assert!(E5_SMALL.log_odds(&across) > E5_SMALL.balanced_cut);
        let off_topic = RelevanceSignals {
            best_cosine: 0.75,
            ..across
        };
        assert!(E5_SMALL.log_odds(&off_topic) < E5_SMALL.balanced_cut);
    }

    #[test]
    fn answer_rate_cuts_fall_as_the_target_rises_and_hit_the_percentiles() {
        let table = E5_SMALL.answerable_percentiles;
        assert!((E5_SMALL.answer_rate_cut(0.95) - table[5]).abs() < 1e-4);
        assert!((E5_SMALL.answer_rate_cut(1.0) - table[0]).abs() < 1e-6);
        let between = E5_SMALL.answer_rate_cut(0.955);
        assert!(table[4] < between && between < table[5], "{between}");
        assert!(E5_SMALL.answer_rate_cut(0.99) < E5_SMALL.answer_rate_cut(0.90));
        assert!(table.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn the_verdict_explains_the_rule_the_score_and_the_cut() {
        let signals = average();
        let verdict = decide(Some(&signals), Refusal::Balanced, E5_SMALL.embedder);
        assert_eq!(
            verdict.refused,
            E5_SMALL.log_odds(&signals) < E5_SMALL.balanced_cut
        );
        for part in [
            "calibrated model, balanced",
            "score",
            "cut",
            "best cosine",
            "BM25 z",
        ] {
            assert!(verdict.reason.contains(part), "{part}: {}", verdict.reason);
        }
        let strict = decide(Some(&signals), Refusal::AnswerRate(0.01), E5_SMALL.embedder);
        assert!(strict.refused, "{}", strict.reason);
        let lenient = decide(Some(&signals), Refusal::AnswerRate(1.0), E5_SMALL.embedder);
        assert!(!lenient.refused, "{}", lenient.reason);
    }

    #[test]
    fn a_cosine_cut_or_an_uncalibrated_embedder_compares_the_best_cosine() {
        let signals = RelevanceSignals {
            best_cosine: 0.5,
            ..average()
        };
        assert!(decide(Some(&signals), Refusal::Cosine(0.6), E5_SMALL.embedder).refused);
        assert!(!decide(Some(&signals), Refusal::Cosine(0.4), E5_SMALL.embedder).refused);
        let minilm = "sentence-transformers/all-MiniLM-L6-v2";
        let fallback = decide(Some(&signals), Refusal::Balanced, minilm);
        assert!(!fallback.refused, "0.5 clears MiniLM's 0.45");
        assert!(
            fallback.reason.contains("no calibrated model") && fallback.reason.contains("0.45"),
            "{}",
            fallback.reason
        );
        assert!(decide(Some(&signals), Refusal::Balanced, "some-api-model").refused);
        let nothing = decide(None, Refusal::Cosine(-1.0), minilm);
        assert!(nothing.refused);
    }
}
