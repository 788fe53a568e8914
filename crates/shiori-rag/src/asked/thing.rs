//! A thing a question asks after ("pet insurance", 「誕生日休暇」) and whether a sentence
//! names it.

use shiori_analysis::text::{each_term, stemmed_terms, terms as plain_terms};
use std::collections::HashSet;

/// A thing a question asks after, with its terms, taken once for every sentence it is looked
/// for in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Thing {
    /// As the question writes it.
    pub(crate) name: String,
    terms: HashSet<String>,
    /// Terms that may shorten a longer word: English words the stemmer leaves whole ("admin",
    /// not "interns"), of at least [`MIN_CLIPPED_LENGTH`] letters.
    clipped: HashSet<String>,
    /// The first and the last of a Japanese name's bigrams, which a sentence must hold: 誕生日休暇
    /// is not named by 「発生日休暇」, which holds three of its four bigrams.
    edges: Vec<String>,
}

impl Thing {
    /// `None` for a name without a term ("any").
    pub(crate) fn new(name: &str) -> Option<Thing> {
        Thing::called(name, name)
    }

    /// A thing called `name` that a sentence names by the terms of `words` (a part of the name).
    pub(crate) fn called(name: &str, words: &str) -> Option<Thing> {
        let terms = stemmed_terms(words);
        let clipped = plain_terms(words)
            .into_iter()
            .filter(|word| {
                word.len() >= MIN_CLIPPED_LENGTH && word.is_ascii() && terms.contains(word)
            })
            .collect();
        (!terms.is_empty()).then(|| Thing {
            name: name.to_string(),
            terms,
            clipped,
            edges: japanese_edges(words),
        })
    }

    /// Whether a sentence of `sentence_terms` names the thing: it holds more than half of the
    /// thing's terms (its words' stems, or its characters' bigrams in Japanese, where
    /// 「誕生日に休暇を」 names 誕生日休暇, with the first and the last). A word the question
    /// clips counts as held by the word it clips ("admin leave" by "administrative leave").
    pub(crate) fn is_named_by(&self, sentence_terms: &HashSet<String>) -> bool {
        let held = self
            .terms
            .iter()
            .filter(|term| {
                sentence_terms.contains(*term)
                    || (self.clipped.contains(*term)
                        && sentence_terms.iter().any(|held| held.starts_with(*term)))
            })
            .count();
        2 * held > self.terms.len() && self.edges.iter().all(|edge| sentence_terms.contains(edge))
    }
}

/// The first and the last bigram of the Japanese characters of `words` (none in English).
fn japanese_edges(words: &str) -> Vec<String> {
    let mut bigrams = Vec::new();
    each_term(words, |term| {
        if !term.is_ascii() {
            bigrams.push(term.to_string());
        }
    });
    match (bigrams.first(), bigrams.last()) {
        (Some(first), Some(last)) if first != last => vec![first.clone(), last.clone()],
        (Some(only), _) => vec![only.clone()],
        _ => Vec::new(),
    }
}

/// Shorter words are whole words more often than clipped ones ("pet" is not "petition").
const MIN_CLIPPED_LENGTH: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_names_a_thing_by_most_of_its_terms() {
        let named = |sentence: &str, thing: &str| {
            Thing::new(thing).is_some_and(|thing| thing.is_named_by(&stemmed_terms(sentence)))
        };
        assert!(named("誕生日には特別休暇を1日与える。", "誕生日休暇"));
        assert!(!named("年次有給休暇は10日とする。", "誕生日休暇"));
        assert!(!named("休暇開始日は休暇事由の発生日とする。", "誕生日休暇"));
        assert!(named(
            "TTS does not currently have a Mac Loaner Program.",
            "mac loaner program"
        ));
        assert!(!named(
            "GSA offers health insurance plans.",
            "pet insurance"
        ));
        assert!(named(
            "You are entitled to 5 days of administrative leave.",
            "admin leave"
        ));
        assert!(!named("Sign the petition.", "pet"));
        assert!(!named("Use the internet.", "interns"));
    }
}
