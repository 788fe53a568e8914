//! Short extractive answers: the sentences of the best source that answer the question. A
//! sentence scores the question terms it contains, each weighted by how rare it is among the
//! source's sentences (an inverse document frequency over this answer's own candidates, so a
//! word every sentence shares counts for little). The best sentence is always quoted; the next
//! best join it, in reading order, while the answer stays within what a reader takes in at a
//! glance ([`ANSWER_COLUMNS`]) — a Japanese answer often needs the sentence next to the one
//! that restates the question ("…場合がある。このような梅雨を空梅雨という。").

use shiori_analysis::text::{sentence_ranges, terms};
use shiori_core::Source;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// The length an extracted answer stays within, in display columns (a CJK character takes two):
/// two lines of a terminal, 150 Japanese characters or about fifty English words.
pub(crate) const ANSWER_COLUMNS: usize = 300;

/// An answer made of sentences quoted from one source.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Extracted {
    /// The index of the quoted source.
    pub source: usize,
    /// The quoted sentences' byte ranges in the source's text, in reading order.
    pub quotes: Vec<Range<usize>>,
}

struct Candidate {
    range: Range<usize>,
    terms: HashSet<String>,
}

/// The sentences of the best of `sources` that answer `question`, or `None` when it has no
/// text. Only the retriever's best source is read: it ranked whole chunks with both retrievers,
/// which a sentence's shared words cannot overrule (quoting from the top three answered 1.1
/// points less of jsquad-valid than from the best alone).
pub(crate) fn extract(question: &str, sources: &[Source]) -> Option<Extracted> {
    let text = &sources.first()?.text;
    let candidates: Vec<Candidate> = sentence_ranges(text)
        .into_iter()
        .map(|range| Candidate {
            terms: terms(&text[range.clone()]),
            range,
        })
        .collect();
    let weights = rarity(&candidates);
    // A follow-up comes first, the questions before it after (one per line): the new question
    // decides, the earlier ones only break its ties.
    let newest = terms(question.lines().next().unwrap_or_default());
    let all = terms(question);
    let score = |asked: &HashSet<String>, candidate: &Candidate| -> f64 {
        asked
            .iter()
            .filter(|term| candidate.terms.contains(*term))
            .map(|term| weights.get(term.as_str()).copied().unwrap_or(0.0))
            .sum()
    };
    let scores: Vec<(f64, f64)> = candidates
        .iter()
        .map(|candidate| (score(&newest, candidate), score(&all, candidate)))
        .collect();
    let mut ranked: Vec<usize> = (0..candidates.len()).collect();
    // Stable: among equal scores the earlier sentence stays first.
    ranked.sort_by(|&a, &b| {
        let ((a_newest, a_all), (b_newest, b_all)) = (scores[a], scores[b]);
        b_newest.total_cmp(&a_newest).then(b_all.total_cmp(&a_all))
    });
    let mut chosen: Vec<usize> = Vec::new();
    let mut used = 0;
    for index in ranked {
        let columns = columns(&text[candidates[index].range.clone()]);
        if chosen.is_empty() || used + columns <= ANSWER_COLUMNS {
            chosen.push(index);
            used += columns;
        }
    }
    chosen.sort_unstable();
    let quotes: Vec<Range<usize>> = chosen
        .into_iter()
        .map(|index| candidates[index].range.clone())
        .collect();
    (!quotes.is_empty()).then_some(Extracted { source: 0, quotes })
}

/// Each term's weight: ln(1 + n / sentences containing it), over the `n` candidates.
fn rarity(candidates: &[Candidate]) -> HashMap<&str, f64> {
    let mut containing: HashMap<&str, usize> = HashMap::new();
    for candidate in candidates {
        for term in &candidate.terms {
            *containing.entry(term.as_str()).or_default() += 1;
        }
    }
    let n = candidates.len() as f64;
    containing
        .into_iter()
        .map(|(term, count)| (term, (1.0 + n / count as f64).ln()))
        .collect()
}

/// Display columns: East Asian wide and full-width characters take two, the rest one.
fn columns(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '\u{1100}'..='\u{115f}'
            | '\u{2e80}'..='\u{a4cf}'
            | '\u{ac00}'..='\u{d7a3}'
            | '\u{f900}'..='\u{faff}'
            | '\u{fe30}'..='\u{fe4f}'
            | '\u{ff00}'..='\u{ff60}'
            | '\u{ffe0}'..='\u{ffe6}' => 2,
            _ => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::source;

    fn quoted(question: &str, sources: &[Source]) -> Vec<String> {
        let found = extract(question, sources).unwrap();
        let text = &sources[found.source].text;
        found
            .quotes
            .into_iter()
            .map(|range| text[range].to_string())
            .collect()
    }

    #[test]
    fn quotes_the_sentence_that_holds_the_asked_terms_first() {
        let long = "word ".repeat(50);
        let sources = [source(
            "API rate limits",
            &format!(
                "The REST API allows 600 requests per minute on the Business plan. {long}. \
                 Starter plan keys are limited to 100 requests per minute."
            ),
        )];
        assert_eq!(
            quoted("What about the Starter plan rate limit?", &sources),
            [
                "The REST API allows 600 requests per minute on the Business plan.",
                "Starter plan keys are limited to 100 requests per minute."
            ],
            "within the budget, in reading order, the filler left out"
        );
    }

    #[test]
    fn the_best_sentence_is_quoted_even_when_it_alone_is_long() {
        let long = format!("Starter plan {}.", "limits ".repeat(60));
        let sources = [source("limits", &format!("{long} Business is 600."))];
        assert_eq!(quoted("Starter plan limits?", &sources), [long.as_str()]);
    }

    #[test]
    fn a_japanese_answer_takes_the_sentence_after_the_one_that_restates_the_question() {
        let sources = [source(
            "梅雨",
            "梅雨の期間中ほとんど雨が降らない場合がある。このような梅雨のことを空梅雨という。",
        )];
        assert_eq!(
            quoted("梅雨の期間中ほとんど雨が降らない場合を何と呼ぶ？", &sources),
            [
                "梅雨の期間中ほとんど雨が降らない場合がある。",
                "このような梅雨のことを空梅雨という。"
            ]
        );
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(columns("梅雨 ab"), 7);
        assert_eq!(columns("ＡＢ"), 4);
    }

    #[test]
    fn no_text_no_answer() {
        assert!(extract("anything?", &[source("empty", "  ")]).is_none());
        assert!(extract("anything?", &[]).is_none());
    }
}
