//! Post-hoc attribution: when a model answers without citing (small local models often drop the
//! `[n]` markers), an answer sentence is credited to the source it shares the most words with.

use shiori_analysis::text::terms;
use shiori_core::Source;

/// A sentence is credited to a source only when they share at least this many terms and this
/// share of the sentence's terms, so that filler sentences stay uncited.
const MIN_SHARED_TERMS: usize = 2;
const MIN_SHARED_FRACTION: f32 = 0.3;

/// The number of the source `sentence` draws its words from, if it shares enough of them with
/// one.
pub fn credit(sentence: &str, sources: &[Source]) -> Option<usize> {
    let sentence_terms = terms(sentence);
    let (number, shared) = sources
        .iter()
        .map(|s| terms(&format!("{} {}", s.title, s.text)))
        .enumerate()
        .map(|(i, source)| (i + 1, sentence_terms.intersection(&source).count()))
        .max_by_key(|&(number, shared)| (shared, std::cmp::Reverse(number)))?;
    (shared >= MIN_SHARED_TERMS
        && shared as f32 >= MIN_SHARED_FRACTION * sentence_terms.len() as f32)
        .then_some(number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::source;

    #[test]
    fn credits_a_sentence_to_the_source_it_draws_on() {
        let sources = [
            source("Plans", "Business costs $29 per user per month."),
            source(
                "Limits",
                "The API allows 600 requests per minute on the Business plan.",
            ),
        ];
        assert_eq!(
            credit(
                "The Business plan allows 600 API requests per minute.",
                &sources
            ),
            Some(2)
        );
        assert_eq!(credit("Thanks for asking!", &sources), None);
    }

    #[test]
    fn japanese_sentences_are_matched_by_character_bigrams() {
        let sources = [
            source("VPN", "VPN は社内ポータルから設定します。"),
            source("休暇", "有給休暇は年間20日付与されます。"),
        ];
        assert_eq!(credit("有給休暇は年間20日です。", &sources), Some(2));
    }

    #[test]
    fn an_unrelated_answer_gets_no_citation() {
        let sources = [source("Plans", "Business costs $29 per user per month.")];
        assert_eq!(credit("I like turtles.", &sources), None);
    }
}
