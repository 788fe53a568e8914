//! Post-hoc attribution: when a model answers without citing (small local models often drop the
//! `[n]` markers), each answer sentence is credited to the source it shares the most words with.

use crate::text::terms;
use shiori_core::Source;
use std::collections::HashSet;

/// A sentence is credited to a source only when they share at least this many terms and this
/// share of the sentence's terms, so that filler sentences stay uncited.
const MIN_SHARED_TERMS: usize = 2;
const MIN_SHARED_FRACTION: f32 = 0.3;

/// `answer` with ` [n]` after every sentence whose words come from source `n`, and the numbers
/// used, in order of first use.
pub fn attribute(answer: &str, sources: &[Source]) -> (String, Vec<usize>) {
    let source_terms: Vec<HashSet<String>> = sources
        .iter()
        .map(|s| terms(&format!("{} {}", s.title, s.text)))
        .collect();
    let mut out = String::with_capacity(answer.len() + 16);
    let mut used = Vec::new();
    for sentence in answer.split_inclusive(['.', '!', '?', '。', '！', '？', '\n']) {
        out.push_str(sentence);
        let sentence_terms = terms(sentence);
        let best = source_terms
            .iter()
            .enumerate()
            .map(|(i, source)| (i + 1, sentence_terms.intersection(source).count()))
            .max_by_key(|&(number, shared)| (shared, std::cmp::Reverse(number)));
        let Some((number, shared)) = best else {
            continue;
        };
        if shared >= MIN_SHARED_TERMS
            && shared as f32 >= MIN_SHARED_FRACTION * sentence_terms.len() as f32
        {
            let trailing = sentence.len() - sentence.trim_end().len();
            out.truncate(out.len() - trailing);
            out.push_str(&format!(" [{number}]"));
            out.push_str(&sentence[sentence.len() - trailing..]);
            if !used.contains(&number) {
                used.push(number);
            }
        }
    }
    (out, used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::source;

    #[test]
    fn credits_each_sentence_to_the_source_it_draws_on() {
        let sources = [
            source("Plans", "Business costs $29 per user per month."),
            source(
                "Limits",
                "The API allows 600 requests per minute on the Business plan.",
            ),
        ];
        let (answer, used) = attribute(
            "The Business plan allows 600 API requests per minute. Thanks for asking!",
            &sources,
        );
        assert_eq!(
            answer,
            "The Business plan allows 600 API requests per minute. [2] Thanks for asking!"
        );
        assert_eq!(used, vec![2]);
    }

    #[test]
    fn japanese_sentences_are_matched_by_character_bigrams() {
        let sources = [
            source("VPN", "VPN は社内ポータルから設定します。"),
            source("休暇", "有給休暇は年間20日付与されます。"),
        ];
        let (answer, used) = attribute("有給休暇は年間20日です。", &sources);
        assert_eq!(answer, "有給休暇は年間20日です。 [2]");
        assert_eq!(used, vec![2]);
    }

    #[test]
    fn an_unrelated_answer_gets_no_citation() {
        let sources = [source("Plans", "Business costs $29 per user per month.")];
        let (answer, used) = attribute("I like turtles.", &sources);
        assert_eq!(answer, "I like turtles.");
        assert!(used.is_empty());
    }
}
