//! Answer quality against gold answers: whether an answer contains a gold span, SQuAD-style
//! token F1, how often it answers and refuses, whether its citations point at relevant
//! documents, and how long and how slow the answers are.

use crate::report::{mean, percentile};
use crate::{Dataset, EvalQuery};
use serde::Serialize;
use shiori_analysis::is_japanese_char;
use shiori_core::Answer;
use shiori_ingest::normalize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What one query's answer was, as the evaluator keeps it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerOutcome {
    pub text: String,
    pub refused: bool,
    /// The documents its `[n]` citations point at, each once, in citation order.
    pub cited_doc_ids: Vec<String>,
    /// It came from a fallback pipeline rather than the one asked for.
    pub degraded: bool,
    /// Wall-clock time of the whole answer.
    pub latency_ms: f64,
    pub first_token_ms: Option<f64>,
}

impl AnswerOutcome {
    pub fn new(answer: &Answer, latency_ms: f64) -> AnswerOutcome {
        let mut seen = HashSet::new();
        AnswerOutcome {
            text: answer.answer.clone(),
            refused: answer.refused,
            cited_doc_ids: answer
                .citations
                .iter()
                .filter(|citation| seen.insert(citation.doc_id.as_str()))
                .map(|citation| citation.doc_id.clone())
                .collect(),
            degraded: answer.degraded.is_some(),
            latency_ms,
            first_token_ms: answer.timings_ms.first_token_ms,
        }
    }
}

/// One answer scored against its query; the report averages these, so a `--per-query` line
/// and the report always agree.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AnswerScore {
    /// Whether the answer contains a gold span; `None` for a query without gold answers.
    pub correct: Option<bool>,
    /// Token F1 against the best-matching gold span; `None` without gold answers.
    pub f1: Option<f64>,
    /// The share of cited documents that are relevant; `None` for a refusal, an answer
    /// without citations or a query without relevance judgements.
    pub citation_precision: Option<f64>,
    /// Characters of the answer with its citation markers removed and whitespace collapsed.
    pub length_chars: usize,
}

/// Scores `outcome` against `query`'s gold answers and relevant documents. A refusal is never
/// correct and scores F1 0.
pub fn score_answer(query: &EvalQuery, outcome: &AnswerOutcome) -> AnswerScore {
    let answer = comparable(&outcome.text);
    let gold = query.answerable && !(query.answers.is_empty() && query.answer_parts.is_empty());
    let correct = gold.then(|| !outcome.refused && states_gold(&answer, query));
    let f1 = gold.then(|| match outcome.refused {
        true => 0.0,
        false => best_f1(&answer, &gold_spans(query)),
    });
    AnswerScore {
        correct,
        f1,
        citation_precision: citation_precision(query, outcome),
        length_chars: answer.chars().count(),
    }
}

/// Whether `answer` states a gold answer and every part a question of several parts asks for.
fn states_gold(answer: &str, query: &EvalQuery) -> bool {
    let whole = query.answers.is_empty() || contains_gold_span(answer, &query.answers);
    whole
        && query
            .answer_parts
            .iter()
            .all(|part| contains_gold_span(answer, part))
}

/// The spans F1 is taken against: the gold answers, or the parts' first alternatives joined.
fn gold_spans(query: &EvalQuery) -> Vec<String> {
    if !query.answers.is_empty() {
        return query.answers.clone();
    }
    let firsts: Vec<&str> = query
        .answer_parts
        .iter()
        .filter_map(|part| part.first().map(String::as_str))
        .collect();
    vec![firsts.join(" ")]
}

fn contains_gold_span(answer: &str, gold: &[String]) -> bool {
    gold.iter().any(|span| {
        let span = comparable(span);
        !span.is_empty() && answer.contains(&span)
    })
}

fn best_f1(answer: &str, gold: &[String]) -> f64 {
    gold.iter()
        .map(|span| token_f1(answer, &comparable(span)))
        .fold(0.0, f64::max)
}

fn citation_precision(query: &EvalQuery, outcome: &AnswerOutcome) -> Option<f64> {
    if outcome.refused || outcome.cited_doc_ids.is_empty() || query.relevant.is_empty() {
        return None;
    }
    let relevant = outcome
        .cited_doc_ids
        .iter()
        .filter(|id| query.relevant.get(*id).is_some_and(|grade| *grade > 0))
        .count();
    Some(relevant as f64 / outcome.cited_doc_ids.len() as f64)
}

/// Text as answers are compared: citation markers removed, NFKC, typographic quotes as plain
/// ones (a page's `candidate’s` is a gold span's `candidate's`; NFKC keeps them apart), all
/// whitespace collapsed to single spaces, lower-cased (which only changes Latin and other cased
/// scripts).
pub fn comparable(text: &str) -> String {
    let text = normalize(&without_citation_markers(text));
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201b}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201f}' => '"',
            c => c,
        })
        .collect::<String>()
        .to_lowercase()
}

/// `text` without its `[1]`, `[1, 2]` markers, and without the spaces before them, so "24 hours
/// [1]." reads "24 hours.".
pub fn without_citation_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after
            .find(']')
            .filter(|&close| is_marker_body(&after[..close]))
        {
            Some(close) => {
                out.truncate(out.trim_end().len());
                rest = &after[close + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_marker_body(body: &str) -> bool {
    body.chars().any(|c| c.is_ascii_digit())
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == ' ')
}

/// SQuAD's token F1 between two [`comparable`] texts: characters when either holds Japanese or
/// Chinese characters (as JSQuAD's official script scores), otherwise words.
pub fn token_f1(prediction: &str, gold: &str) -> f64 {
    let by_character = prediction.chars().chain(gold.chars()).any(is_japanese_char);
    let prediction = tokens(prediction, by_character);
    let gold = tokens(gold, by_character);
    if prediction.is_empty() || gold.is_empty() {
        return f64::from(u8::from(prediction == gold));
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for token in &gold {
        *counts.entry(token).or_default() += 1;
    }
    let common = prediction
        .iter()
        .filter(|token| match counts.get_mut(token.as_str()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                true
            }
            _ => false,
        })
        .count();
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / prediction.len() as f64;
    let recall = common as f64 / gold.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

const ARTICLES: [&str; 3] = ["a", "an", "the"];

/// Punctuation is dropped as SQuAD drops it (removed, not turned into a space); words lose the
/// English articles.
fn tokens(text: &str, by_character: bool) -> Vec<String> {
    let kept: String = text
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .collect();
    if by_character {
        return kept
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(String::from)
            .collect();
    }
    kept.split_whitespace()
        .filter(|word| !ARTICLES.contains(word))
        .map(str::to_string)
        .collect()
}

/// The answer pass's summary; key names are part of the CLI's JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerReport {
    /// The pipeline asked for (answers that fell back to another are counted in `degraded`).
    pub pipeline: String,
    /// Queries answered or refused.
    pub queries: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f1: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_answer_refusal: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citation_precision: Option<f64>,
    pub degraded: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_chars_median: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_chars_p95: Option<f64>,
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_token_p50_ms: Option<f64>,
    /// The same rates per question kind, for datasets whose questions have one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_kind: BTreeMap<String, AnswerGroup>,
    /// The same rates per conversation turn (`1` opens a conversation), for datasets with
    /// scripted conversations.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_turn: BTreeMap<String, AnswerGroup>,
}

/// The answer rates of one kind of question or one conversation turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerGroup {
    pub queries: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_answer_refusal: Option<f64>,
}

type Scored<'a> = (&'a EvalQuery, &'a AnswerOutcome, AnswerScore);

fn answered<'a>(asked: &'a [Scored<'a>], answerable: bool) -> impl Iterator<Item = f64> + 'a {
    asked
        .iter()
        .filter(move |(query, _, _)| query.answerable == answerable)
        .map(|(_, outcome, _)| f64::from(u8::from(!outcome.refused)))
}

fn group(asked: &[Scored<'_>]) -> AnswerGroup {
    AnswerGroup {
        queries: asked.len(),
        accuracy: mean_of(asked.iter().filter_map(|(_, _, s)| s.correct.map(as_unit))),
        answer_rate: mean_of(answered(asked, true)),
        no_answer_refusal: mean_of(answered(asked, false).map(|answered| 1.0 - answered)),
    }
}

/// The groups of `asked` by `key`, each scored; queries without a key are left out.
fn groups_by(
    asked: &[Scored<'_>],
    key: impl Fn(&EvalQuery) -> Option<String>,
) -> BTreeMap<String, AnswerGroup> {
    let mut grouped: BTreeMap<String, Vec<Scored<'_>>> = BTreeMap::new();
    for scored in asked {
        if let Some(key) = key(scored.0) {
            grouped.entry(key).or_default().push(*scored);
        }
    }
    grouped
        .into_iter()
        .map(|(key, members)| (key, group(&members)))
        .collect()
}

/// Summarises the answers (one entry per dataset query, `None` where the query was not asked).
/// Each rate is over the queries it is defined for and absent when there are none: accuracy
/// and F1 over answerable queries with gold answers, the answer rate over answerable queries,
/// the no-answer refusal rate over unanswerable ones, citation precision over answered,
/// judged queries with citations, lengths over answers that were not refusals.
pub fn evaluate_answers(
    pipeline: &str,
    dataset: &Dataset,
    answers: &[Option<AnswerOutcome>],
) -> AnswerReport {
    let asked: Vec<Scored<'_>> = dataset
        .queries
        .iter()
        .zip(answers)
        .filter_map(|(query, outcome)| {
            let outcome = outcome.as_ref()?;
            Some((query, outcome, score_answer(query, outcome)))
        })
        .collect();
    let lengths = sorted(
        asked
            .iter()
            .filter(|(_, outcome, _)| !outcome.refused)
            .map(|(_, _, score)| score.length_chars as f64),
    );
    let latencies = sorted(asked.iter().map(|(_, outcome, _)| outcome.latency_ms));
    let first_tokens = sorted(asked.iter().filter_map(|(_, o, _)| o.first_token_ms));
    let overall = group(&asked);
    AnswerReport {
        pipeline: pipeline.to_string(),
        queries: overall.queries,
        accuracy: overall.accuracy,
        f1: mean_of(asked.iter().filter_map(|(_, _, s)| s.f1)),
        answer_rate: overall.answer_rate,
        no_answer_refusal: overall.no_answer_refusal,
        citation_precision: mean_of(asked.iter().filter_map(|(_, _, s)| s.citation_precision)),
        degraded: asked.iter().filter(|(_, o, _)| o.degraded).count(),
        length_chars_median: (!lengths.is_empty()).then(|| percentile(&lengths, 0.50)),
        length_chars_p95: (!lengths.is_empty()).then(|| percentile(&lengths, 0.95)),
        latency_p50_ms: percentile(&latencies, 0.50),
        latency_p95_ms: percentile(&latencies, 0.95),
        first_token_p50_ms: (!first_tokens.is_empty()).then(|| percentile(&first_tokens, 0.50)),
        by_kind: groups_by(&asked, |query| query.kind.clone()),
        by_turn: groups_by(&asked, |query| {
            query.turn.as_ref().map(|turn| turn.turn.to_string())
        }),
    }
}

fn as_unit(flag: bool) -> f64 {
    f64::from(u8::from(flag))
}

fn mean_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    let values: Vec<f64> = values.collect();
    (!values.is_empty()).then(|| mean(values.into_iter()))
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values
}

/// The queries (indexes into `dataset.queries`) an answer pass asks: every one, or `limit`
/// spread evenly over the set, answerable and unanswerable ones in their proportion (each
/// class keeps at least one when both exist and the limit allows), so a slow pipeline can be
/// measured on a deterministic sample.
pub fn sample_queries(dataset: &Dataset, limit: Option<usize>) -> Vec<usize> {
    let total = dataset.queries.len();
    let Some(limit) = limit.filter(|&limit| limit < total) else {
        return (0..total).collect();
    };
    let (answerable, unanswerable): (Vec<usize>, Vec<usize>) =
        (0..total).partition(|&index| dataset.queries[index].answerable);
    let unanswerable_share = unanswerable_count(limit, unanswerable.len(), total);
    let mut chosen = every_kth(&answerable, limit - unanswerable_share);
    chosen.extend(every_kth(&unanswerable, unanswerable_share));
    chosen.sort_unstable();
    chosen
}

fn unanswerable_count(limit: usize, unanswerable: usize, total: usize) -> usize {
    let proportional = (limit as f64 * unanswerable as f64 / total as f64).round() as usize;
    let answerable = total - unanswerable;
    let floor = usize::from(unanswerable > 0 && limit >= 2);
    let ceiling = limit - usize::from(answerable > 0 && limit >= 2);
    proportional.clamp(floor, ceiling).min(unanswerable)
}

/// `count` items of `items`, evenly spaced from the first.
fn every_kth(items: &[usize], count: usize) -> Vec<usize> {
    (0..count.min(items.len()))
        .map(|i| items[i * items.len() / count])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::query;

    fn outcome(
        text: &str,
        refused: bool,
        cited: &[&str],
        ms: f64,
        first: Option<f64>,
    ) -> AnswerOutcome {
        AnswerOutcome {
            text: text.to_string(),
            refused,
            cited_doc_ids: cited.iter().map(|id| id.to_string()).collect(),
            degraded: false,
            latency_ms: ms,
            first_token_ms: first,
        }
    }

    fn dataset() -> Dataset {
        Dataset {
            name: "t".into(),
            corpus: "c".into(),
            queries: vec![
                query("ja", Some("d2"), &["30分"]),
                query("en", Some("d1"), &["24 hours", "one day"]),
                query("refused", Some("d3"), &["100 GB"]),
                query("none", None, &[]),
            ],
            skipped: 0,
            files: None,
        }
    }

    #[test]
    fn a_question_of_two_parts_needs_both_and_groups_score_alone() {
        let mut two_pages = query("two", Some("d1"), &[]);
        two_pages.answer_parts = vec![vec!["20 days".into()], vec!["$500".into(), "500".into()]];
        two_pages.kind = Some("two_page".into());
        let mut follow_up = query("next", None, &[]);
        follow_up.kind = Some("unanswerable".into());
        follow_up.turn = Some(crate::ConversationTurn {
            conversation: "c".into(),
            turn: 2,
        });
        let both = outcome(
            "20 days of leave and 500 a year [1].",
            false,
            &["d1"],
            1.0,
            None,
        );
        let one = outcome("20 days of leave [1].", false, &["d1"], 1.0, None);
        assert_eq!(score_answer(&two_pages, &both).correct, Some(true));
        assert_eq!(score_answer(&two_pages, &one).correct, Some(false));
        let dataset = Dataset {
            queries: vec![two_pages, follow_up],
            ..Dataset::default()
        };
        let refused = outcome("No.", true, &[], 1.0, None);
        let report = evaluate_answers("extractive", &dataset, &[Some(one), Some(refused)]);
        assert_eq!(report.by_kind["two_page"].accuracy, Some(0.0));
        assert_eq!(report.by_kind["unanswerable"].no_answer_refusal, Some(1.0));
        assert_eq!(report.by_turn["2"].queries, 1);
        assert!(!report.by_turn.contains_key("1"));
    }

    fn answers() -> Vec<Option<AnswerOutcome>> {
        let mut english = outcome(
            "The link expires after 24 hours [2].",
            false,
            &["d1"],
            80.0,
            Some(10.0),
        );
        english.degraded = true;
        vec![
            Some(outcome(
                "リンクの有効期限は３０分です[1]。",
                false,
                &["d2", "d9"],
                120.0,
                Some(30.0),
            )),
            Some(english),
            Some(outcome(
                "No relevant documents were found for this question.",
                true,
                &[],
                40.0,
                None,
            )),
            Some(outcome(
                "It melts at 3,422 degrees.",
                false,
                &[],
                200.0,
                Some(50.0),
            )),
        ]
    }

    #[test]
    fn typographic_quotes_compare_as_plain_ones() {
        assert_eq!(
            comparable("The goal is to assess a candidate’s “rough” fit [1]."),
            comparable("the goal is to assess a candidate's \"rough\" fit.")
        );
    }

    #[test]
    fn scores_each_answer_by_hand() {
        let dataset = dataset();
        let answers = answers();
        let scores: Vec<AnswerScore> = dataset
            .queries
            .iter()
            .zip(&answers)
            .map(|(query, outcome)| score_answer(query, outcome.as_ref().unwrap()))
            .collect();
        // リンクの有効期限は30分です。: 14 letters, 3 of them (3, 0, 分) the gold's 3 → P 3/14,
        // R 1, F1 = 2·(3/14) / (3/14 + 1) = 6/17. 15 characters with the 。.
        assert_eq!(scores[0].correct, Some(true), "NFKC makes ３０ 30");
        assert!((scores[0].f1.unwrap() - 6.0 / 17.0).abs() < 1e-12);
        assert_eq!(scores[0].citation_precision, Some(0.5));
        assert_eq!(scores[0].length_chars, 15);
        // link expires after 24 hours (the article dropped): P 2/5, R 1 → F1 4/7.
        assert_eq!(scores[1].correct, Some(true));
        assert!((scores[1].f1.unwrap() - 4.0 / 7.0).abs() < 1e-12);
        assert_eq!(scores[1].citation_precision, Some(1.0));
        assert_eq!(
            scores[1].length_chars,
            "The link expires after 24 hours.".len()
        );
        assert_eq!(
            scores[2],
            AnswerScore {
                correct: Some(false),
                f1: Some(0.0),
                citation_precision: None,
                length_chars: 51,
            }
        );
        assert_eq!((scores[3].correct, scores[3].f1), (None, None));
        assert_eq!(scores[3].length_chars, 26);
    }

    #[test]
    fn report_matches_hand_computation() {
        let report = evaluate_answers("extractive", &dataset(), &answers());
        assert_eq!(report.pipeline, "extractive");
        assert_eq!(report.queries, 4);
        assert!((report.accuracy.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        let f1 = (6.0 / 17.0 + 4.0 / 7.0 + 0.0) / 3.0;
        assert!((report.f1.unwrap() - f1).abs() < 1e-12);
        assert!((report.answer_rate.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            report.no_answer_refusal,
            Some(0.0),
            "the unanswerable one answered"
        );
        assert_eq!(report.citation_precision, Some(0.75), "mean of 1/2 and 1");
        assert_eq!(report.degraded, 1);
        // Lengths of the three answers that were not refused: 15, 26, 32.
        assert_eq!(report.length_chars_median, Some(26.0));
        assert_eq!(report.length_chars_p95, Some(32.0));
        // Latencies 40, 80, 120, 200: ranks round(0.5·3) = 2 and round(0.95·3) = 3.
        assert_eq!(
            (report.latency_p50_ms, report.latency_p95_ms),
            (120.0, 200.0)
        );
        assert_eq!(report.first_token_p50_ms, Some(30.0));
    }

    #[test]
    fn unasked_queries_and_absent_classes_leave_their_rates_out() {
        let mut answers = answers();
        answers[3] = None;
        answers[2] = None;
        let report = evaluate_answers("basic", &dataset(), &answers);
        assert_eq!(report.queries, 2);
        assert_eq!(report.accuracy, Some(1.0));
        assert_eq!(report.no_answer_refusal, None);
        let json = serde_json::to_value(&report).unwrap();
        assert!(json.get("no_answer_refusal").is_none(), "{json}");
        for key in [
            "pipeline",
            "accuracy",
            "f1",
            "answer_rate",
            "citation_precision",
        ] {
            assert!(json.get(key).is_some(), "{key}: {json}");
        }
    }

    #[test]
    fn markers_go_with_the_space_before_them() {
        assert_eq!(
            without_citation_markers("24 hours [1][2]. See [note] and [1, 3]"),
            "24 hours. See [note] and"
        );
        assert_eq!(without_citation_markers("[x"), "[x");
        assert_eq!(comparable("  Ｔｈｅ\n  LINK [1] "), "the link");
    }

    #[test]
    fn f1_drops_punctuation_and_articles_and_counts_repeats_once_each() {
        assert_eq!(token_f1("the answer, is 42!", "an answer is 42"), 1.0);
        // "b b c" against "b c c": two tokens shared, P = R = 2/3.
        assert!((token_f1("b b c", "b c c") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(token_f1("東京", "大阪"), 0.0);
        assert_eq!(token_f1("!", "the"), 1.0, "both empty once normalised");
    }

    #[test]
    fn samples_spread_over_the_set_in_proportion() {
        let queries = (0..10)
            .map(|i| query(&format!("q{i}"), (i % 5 != 4).then_some("d"), &[]))
            .collect();
        let dataset = Dataset {
            name: "t".into(),
            corpus: "c".into(),
            queries,
            skipped: 0,
            files: None,
        };
        // 8 answerable (0-3, 5-8) and 2 unanswerable (4, 9); 5 of 10 → 4 + 1.
        assert_eq!(sample_queries(&dataset, Some(5)), [0, 2, 4, 5, 7]);
        assert_eq!(
            sample_queries(&dataset, Some(2)),
            [0, 4],
            "one of each class"
        );
        assert_eq!(sample_queries(&dataset, Some(1)), [0]);
        assert_eq!(sample_queries(&dataset, Some(50)).len(), 10);
        assert_eq!(sample_queries(&dataset, None).len(), 10);
    }
}
