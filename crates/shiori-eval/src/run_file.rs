use crate::{score_answer, score_ranking, AnswerOutcome, Dataset, QueryOutcome};
use serde::Serialize;
use shiori_core::RelevanceSignals;
use std::collections::HashSet;
use std::io::{self, Write};

/// One line of `--per-query`: what one query scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerQuery<'a> {
    pub query_id: &'a str,
    pub answerable: bool,
    pub refused: bool,
    /// Retrieval metrics, for queries with relevance judgements only.
    #[serde(rename = "ndcg@10", skip_serializing_if = "Option::is_none")]
    pub ndcg_at_10: Option<f64>,
    #[serde(rename = "recall@10", skip_serializing_if = "Option::is_none")]
    pub recall_at_10: Option<f64>,
    #[serde(rename = "mrr@10", skip_serializing_if = "Option::is_none")]
    pub mrr_at_10: Option<f64>,
    pub best_dense: Option<f32>,
    /// The inputs of the refusal decision (`scripts/fit-refusal.py` fits the model from them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signals: Option<RelevanceSignals>,
    pub latency_ms: f64,
    /// The query's answer, when the evaluation answered it (`--answers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<PerQueryAnswer<'a>>,
}

/// The `answer` of a `--per-query` line: the answer and how it scored (see
/// [`crate::AnswerScore`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerQueryAnswer<'a> {
    pub text: &'a str,
    pub refused: bool,
    pub correct: Option<bool>,
    pub f1: Option<f64>,
    pub cited_doc_ids: &'a [String],
    pub citation_precision: Option<f64>,
    pub length_chars: usize,
    pub degraded: bool,
    pub latency_ms: f64,
    pub first_token_ms: Option<f64>,
}

impl<'a> PerQueryAnswer<'a> {
    fn new(query: &crate::EvalQuery, outcome: &'a AnswerOutcome) -> PerQueryAnswer<'a> {
        let score = score_answer(query, outcome);
        PerQueryAnswer {
            text: &outcome.text,
            refused: outcome.refused,
            correct: score.correct,
            f1: score.f1,
            cited_doc_ids: &outcome.cited_doc_ids,
            citation_precision: score.citation_precision,
            length_chars: score.length_chars,
            degraded: outcome.degraded,
            latency_ms: outcome.latency_ms,
            first_token_ms: outcome.first_token_ms,
        }
    }
}

/// Each document once, at its best (first) rank, with the score it had there.
fn distinct_documents(outcome: &QueryOutcome) -> Vec<(&str, f32)> {
    let mut seen = HashSet::new();
    outcome
        .ranked_doc_ids
        .iter()
        .zip(&outcome.ranked_scores)
        .filter(|(id, _)| seen.insert(id.as_str()))
        .map(|(id, score)| (id.as_str(), *score))
        .collect()
}

/// Writes the ranked documents of every query as a TREC run (`qid Q0 docid rank score run`),
/// ranks from 1. Scores fall with rank, so `trec_eval` (which orders by score) sees our order
/// except among exactly tied scores.
pub fn write_trec_run(
    dataset: &Dataset,
    outcomes: &[QueryOutcome],
    run_name: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    for (query, outcome) in dataset.queries.iter().zip(outcomes) {
        for (rank, (doc_id, score)) in distinct_documents(outcome).into_iter().enumerate() {
            writeln!(
                out,
                "{} Q0 {doc_id} {} {score} {run_name}",
                query.id,
                rank + 1
            )?;
        }
    }
    Ok(())
}

/// Writes one JSON line per query with its metrics (see [`PerQuery`]); `answers` (one entry
/// per query, `None` where it was not asked) adds each answered query's answer.
pub fn write_per_query(
    dataset: &Dataset,
    outcomes: &[QueryOutcome],
    answers: &[Option<AnswerOutcome>],
    out: &mut dyn Write,
) -> io::Result<()> {
    for (index, (query, outcome)) in dataset.queries.iter().zip(outcomes).enumerate() {
        let answer = answers.get(index).and_then(Option::as_ref);
        let scores = (!query.relevant.is_empty())
            .then(|| score_ranking(&outcome.ranked_doc_ids, &query.relevant));
        let line = PerQuery {
            query_id: &query.id,
            answerable: query.answerable,
            refused: outcome.refused,
            ndcg_at_10: scores.map(|s| s.ndcg),
            recall_at_10: scores.map(|s| s.recall),
            mrr_at_10: scores.map(|s| s.reciprocal_rank),
            best_dense: outcome.best_dense,
            signals: outcome.signals,
            latency_ms: outcome.latency_ms,
            answer: answer.map(|answer| PerQueryAnswer::new(query, answer)),
        };
        serde_json::to_writer(&mut *out, &line)?;
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::query;

    fn dataset() -> Dataset {
        Dataset {
            name: "t".into(),
            corpus: "c".into(),
            queries: vec![query("q1", Some("d2"), &[]), query("q2", None, &[])],
            skipped: 0,
            files: None,
        }
    }

    fn outcome(ranked: &[(&str, f32)], refused: bool) -> QueryOutcome {
        QueryOutcome {
            ranked_doc_ids: ranked.iter().map(|(id, _)| id.to_string()).collect(),
            ranked_scores: ranked.iter().map(|(_, s)| *s).collect(),
            top_text: None,
            refused,
            best_dense: Some(0.5),
            signals: None,
            latency_ms: 2.0,
        }
    }

    #[test]
    fn run_lists_each_document_once_at_its_best_rank() {
        let outcomes = [
            outcome(&[("d1", 0.9), ("d1", 0.8), ("d2", 0.7)], false),
            outcome(&[("d3", 0.4)], true),
        ];
        let mut run = Vec::new();
        write_trec_run(&dataset(), &outcomes, "hybrid", &mut run).unwrap();
        assert_eq!(
            String::from_utf8(run).unwrap(),
            "q1 Q0 d1 1 0.9 hybrid\nq1 Q0 d2 2 0.7 hybrid\nq2 Q0 d3 1 0.4 hybrid\n"
        );
    }

    #[test]
    fn per_query_scores_judged_queries_only() {
        let outcomes = [
            outcome(&[("d1", 0.9), ("d2", 0.7)], false),
            outcome(&[("d3", 0.4)], true),
        ];
        let mut out = Vec::new();
        let answer = AnswerOutcome {
            text: "Yes [1].".into(),
            cited_doc_ids: vec!["d2".into()],
            latency_ms: 5.0,
            ..AnswerOutcome::default()
        };
        write_per_query(&dataset(), &outcomes, &[Some(answer)], &mut out).unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["query_id"], "q1");
        assert_eq!(lines[0]["mrr@10"], 0.5);
        assert!((lines[0]["ndcg@10"].as_f64().unwrap() - 1.0 / 3f64.log2()).abs() < 1e-12);
        assert_eq!(lines[1]["refused"], true);
        assert!(lines[1].get("ndcg@10").is_none());
        let answer = &lines[0]["answer"];
        assert_eq!(answer["text"], "Yes [1].");
        assert_eq!(answer["length_chars"], 4, "\"Yes.\" without its marker");
        assert_eq!(answer["citation_precision"], 1.0);
        assert_eq!(
            answer["correct"],
            serde_json::Value::Null,
            "no gold answers"
        );
        assert!(lines[1].get("answer").is_none(), "q2 was not answered");
    }
}
