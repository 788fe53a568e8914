use crate::{score_ranking, Dataset, RankingScores};
use serde::Serialize;
use shiori_core::{Refusal, RelevanceSignals};
use shiori_ingest::normalize;

/// What the engine returned for one query.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOutcome {
    /// Document ids of the returned chunks, best first.
    pub ranked_doc_ids: Vec<String>,
    /// The score of each entry of `ranked_doc_ids`.
    pub ranked_scores: Vec<f32>,
    /// Text of the best chunk.
    pub top_text: Option<String>,
    pub refused: bool,
    /// Best dense cosine, for sweeping the refusal threshold afterwards.
    pub best_dense: Option<f32>,
    /// The relevance signals the refusal was decided from, for fitting the refusal model.
    pub signals: Option<RelevanceSignals>,
    pub latency_ms: f64,
}

/// The evaluator's summary; key names are part of the CLI's JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    pub dataset: String,
    pub queries: usize,
    pub scored_queries: usize,
    #[serde(rename = "ndcg@10")]
    pub ndcg_at_10: f64,
    #[serde(rename = "recall@10")]
    pub recall_at_10: f64,
    #[serde(rename = "precision@10")]
    pub precision_at_10: f64,
    #[serde(rename = "mrr@10")]
    pub mrr_at_10: f64,
    #[serde(rename = "hit@1")]
    pub hit_at_1: f64,
    #[serde(rename = "hit@5")]
    pub hit_at_5: f64,
    #[serde(rename = "hit@10")]
    pub hit_at_10: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_answer_accuracy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_in_top1: Option<f64>,
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
}

/// Answer rate and refusal accuracy at one threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SweepRow {
    pub threshold: f32,
    pub answer_rate: f64,
    pub no_answer_accuracy: f64,
}

pub(crate) fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    if count == 0 {
        0.0
    } else {
        sum / count as f64
    }
}

/// The value at rank round(fraction · (n − 1)) of `sorted` (0 when it is empty).
pub(crate) fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (fraction * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Scores outcomes (one per dataset query, same order) into a report.
pub fn evaluate(dataset: &Dataset, outcomes: &[QueryOutcome]) -> EvalReport {
    let pairs: Vec<_> = dataset.queries.iter().zip(outcomes).collect();
    let scored: Vec<RankingScores> = pairs
        .iter()
        .filter(|(query, _)| query.answerable)
        .map(|(query, outcome)| score_ranking(&outcome.ranked_doc_ids, &query.relevant))
        .collect();
    let unanswerable = pairs.iter().filter(|(q, _)| !q.answerable).count();
    let (no_answer_accuracy, answer_rate) = if unanswerable > 0 {
        (
            Some(mean(
                pairs
                    .iter()
                    .filter(|(q, _)| !q.answerable)
                    .map(|(_, o)| f64::from(u8::from(o.refused))),
            )),
            Some(mean(
                pairs
                    .iter()
                    .filter(|(q, _)| q.answerable)
                    .map(|(_, o)| f64::from(u8::from(!o.refused))),
            )),
        )
    } else {
        (None, None)
    };
    let with_answers: Vec<_> = pairs
        .iter()
        .filter(|(q, _)| q.answerable && !q.answers.is_empty())
        .collect();
    let answer_in_top1 = (!with_answers.is_empty()).then(|| {
        mean(with_answers.iter().map(|(query, outcome)| {
            let top = outcome
                .top_text
                .as_deref()
                .map(normalize)
                .unwrap_or_default();
            let found = query.answers.iter().any(|a| {
                let answer = normalize(a);
                !answer.is_empty() && top.contains(&answer)
            });
            f64::from(u8::from(found))
        }))
    });
    let mut latencies: Vec<f64> = outcomes.iter().map(|o| o.latency_ms).collect();
    latencies.sort_by(f64::total_cmp);
    EvalReport {
        dataset: dataset.name.clone(),
        queries: outcomes.len(),
        scored_queries: scored.len(),
        ndcg_at_10: mean(scored.iter().map(|s| s.ndcg)),
        recall_at_10: mean(scored.iter().map(|s| s.recall)),
        precision_at_10: mean(scored.iter().map(|s| s.precision)),
        mrr_at_10: mean(scored.iter().map(|s| s.reciprocal_rank)),
        hit_at_1: mean(scored.iter().map(|s| s.hit_at_1)),
        hit_at_5: mean(scored.iter().map(|s| s.hit_at_5)),
        hit_at_10: mean(scored.iter().map(|s| s.hit_at_10)),
        no_answer_accuracy,
        answer_rate,
        answer_in_top1,
        latency_p50_ms: percentile(&latencies, 0.50),
        latency_p95_ms: percentile(&latencies, 0.95),
    }
}

/// Thresholds a sweep tries: every 0.05 up to 0.70, then every 0.01, because the cosines of
/// e5-style embedders crowd into 0.75–0.95 and the useful thresholds lie there.
pub fn sweep_grid() -> Vec<f32> {
    (0..14)
        .map(|i| i as f32 * 0.05)
        .chain((70..=100).map(|i| i as f32 * 0.01))
        .collect()
}

/// Recomputes refusals at each threshold from the recorded best dense cosines.
pub fn sweep_thresholds(
    dataset: &Dataset,
    outcomes: &[QueryOutcome],
    thresholds: &[f32],
) -> Vec<SweepRow> {
    thresholds
        .iter()
        .map(|&threshold| {
            let (answer_rate, no_answer_accuracy) = refusal_rates(dataset, outcomes, |o| {
                o.ranked_doc_ids.is_empty() || o.best_dense.is_none_or(|c| c < threshold)
            });
            SweepRow {
                threshold,
                answer_rate,
                no_answer_accuracy,
            }
        })
        .collect()
}

/// Answer rate and no-answer accuracy with one refusal target.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TargetRow {
    pub refusal: Refusal,
    pub answer_rate: f64,
    pub no_answer_accuracy: f64,
}

/// The targets a calibrated sweep tries: balanced, then answer rates from 0.90 to 0.99.
pub fn target_grid() -> Vec<Refusal> {
    std::iter::once(Refusal::Balanced)
        .chain((90..=99).map(|r| Refusal::AnswerRate(r as f32 / 100.0)))
        .collect()
}

/// The fraction of answerable queries answered and of unanswerable ones refused, when
/// `refuses` decides each outcome.
pub fn refusal_rates(
    dataset: &Dataset,
    outcomes: &[QueryOutcome],
    refuses: impl Fn(&QueryOutcome) -> bool,
) -> (f64, f64) {
    let pairs = dataset.queries.iter().zip(outcomes);
    let (answerable, unanswerable): (Vec<_>, Vec<_>) = pairs.partition(|(q, _)| q.answerable);
    (
        mean(
            answerable
                .iter()
                .map(|(_, o)| f64::from(u8::from(!refuses(o)))),
        ),
        mean(
            unanswerable
                .iter()
                .map(|(_, o)| f64::from(u8::from(refuses(o)))),
        ),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::EvalQuery;
    use std::collections::HashMap;

    pub(crate) fn query(id: &str, gold: Option<&str>, answers: &[&str]) -> EvalQuery {
        EvalQuery {
            id: id.to_string(),
            text: String::new(),
            relevant: gold
                .map(|g| HashMap::from([(g.to_string(), 1)]))
                .unwrap_or_default(),
            answerable: gold.is_some(),
            answers: answers.iter().map(|a| a.to_string()).collect(),
            ..EvalQuery::default()
        }
    }

    fn outcome(ranked: &[&str], top: &str, refused: bool, cosine: f32, ms: f64) -> QueryOutcome {
        QueryOutcome {
            ranked_doc_ids: ranked.iter().map(|s| s.to_string()).collect(),
            ranked_scores: (0..ranked.len()).map(|i| 1.0 / (i + 1) as f32).collect(),
            top_text: Some(top.to_string()),
            refused,
            best_dense: Some(cosine),
            signals: None,
            latency_ms: ms,
        }
    }

    fn dataset() -> Dataset {
        Dataset {
            name: "t".into(),
            corpus: "c".into(),
            queries: vec![
                query("a", Some("d1"), &["ＡＢＣ"]),
                query("b", Some("d2"), &["zzz"]),
                query("c", None, &[]),
            ],
            skipped: 0,
            files: None,
        }
    }

    #[test]
    fn report_averages_over_answerable_queries() {
        let outcomes = [
            outcome(&["d1"], "has ABC inside", false, 0.9, 1.0),
            outcome(&["d9", "d2"], "other", false, 0.8, 3.0),
            outcome(&["d1"], "x", true, 0.2, 2.0),
        ];
        let report = evaluate(&dataset(), &outcomes);
        assert_eq!(report.scored_queries, 2);
        assert!((report.mrr_at_10 - 0.75).abs() < 1e-12);
        assert_eq!(report.hit_at_1, 0.5);
        assert_eq!(report.no_answer_accuracy, Some(1.0));
        assert_eq!(report.answer_rate, Some(1.0));
        assert_eq!(
            report.answer_in_top1,
            Some(0.5),
            "NFKC makes ＡＢＣ match ABC"
        );
        assert_eq!(report.latency_p50_ms, 2.0);
        let json = serde_json::to_value(&report).unwrap();
        for key in [
            "ndcg@10",
            "recall@10",
            "precision@10",
            "mrr@10",
            "hit@1",
            "hit@5",
            "hit@10",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
    }

    #[test]
    fn sweep_trades_answers_for_refusals() {
        let outcomes = [
            outcome(&["d1"], "", false, 0.9, 1.0),
            outcome(&["d2"], "", false, 0.5, 1.0),
            outcome(&["d1"], "", false, 0.4, 1.0),
        ];
        let rows = sweep_thresholds(&dataset(), &outcomes, &[0.3, 0.45, 0.95]);
        assert_eq!(
            (rows[0].answer_rate, rows[0].no_answer_accuracy),
            (1.0, 0.0)
        );
        assert_eq!(
            (rows[1].answer_rate, rows[1].no_answer_accuracy),
            (1.0, 1.0)
        );
        assert_eq!(
            (rows[2].answer_rate, rows[2].no_answer_accuracy),
            (0.0, 1.0)
        );
    }
}
