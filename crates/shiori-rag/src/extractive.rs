//! The answer no model writes: the sentences of the best sources that answer the question,
//! cited and marked in their source, or a refusal when nothing retrieved is relevant enough.

use crate::asked::Asked;
use crate::sentences::{extract, NotQuoted};
use shiori_core::{Citation, Hit, Quote, RelevanceVerdict, Source};

/// What a refusal says instead of an answer.
pub const REFUSAL_TEXT: &str = "No relevant documents were found for this question.";

/// True when the question should be refused: no hits, or the retriever's verdict says nothing
/// among them is relevant enough.
pub fn refuses(hits: &[Hit], verdict: &RelevanceVerdict) -> bool {
    hits.is_empty() || verdict.refused
}

/// An extracted answer: its text with `[n]` markers, and the citations (with the quoted
/// passages) they point at; `None` when nothing can be quoted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quoted {
    pub text: String,
    pub citations: Vec<Citation>,
}

/// What a refusal says when the sources found are on the question's topic but none states the
/// kind of thing it asks for.
pub(crate) fn not_stated_text(wanted: Asked) -> String {
    format!(
        "The documents found do not state {} for this question.",
        wanted.described()
    )
}

/// The sentences of `sources` (best first) that answer `question`, followed by the `[n]` of
/// their source.
pub(crate) fn quote(question: &str, sources: &[Source]) -> Result<Quoted, NotQuoted> {
    let extracted = extract(question, sources)?;
    let source = &sources[extracted.source];
    let number = extracted.source + 1;
    let sentences: Vec<&str> = extracted
        .quotes
        .iter()
        .map(|range| &source.text[range.clone()])
        .collect();
    let mut citation = Citation::of(number, source);
    citation.quotes = extracted
        .quotes
        .into_iter()
        .map(|range| Quote::of_bytes(&source.text, range))
        .collect();
    Ok(Quoted {
        text: format!("{} [{number}]", sentences.join(" ")),
        citations: vec![citation],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::source;

    #[test]
    fn cites_and_marks_the_quoted_sentences() {
        let sources = [
            source("休暇", "入社日に10日付与されます。有給休暇は年間20日です。"),
            source("Plans", "Business costs $29 per user per month."),
        ];
        let quoted = quote("有給休暇について教えてください", &sources).unwrap();
        assert_eq!(
            quoted.text,
            "入社日に10日付与されます。 有給休暇は年間20日です。 [1]"
        );
        assert_eq!(quoted.citations.len(), 1);
        let citation = &quoted.citations[0];
        assert_eq!((citation.number, citation.doc_id.as_str()), (1, "休暇"));
        // Characters, not bytes: the page marks them by character.
        assert_eq!(
            citation.quotes,
            [Quote { start: 0, end: 14 }, Quote { start: 14, end: 27 }]
        );
        let counted = quote("有給休暇は年間何日ですか？", &sources).unwrap();
        assert_eq!(
            counted.text, "有給休暇は年間20日です。 [1]",
            "the sentence that states the number asked for, alone"
        );
        let marked: String = sources[0].text.chars().skip(14).take(13).collect();
        assert_eq!(marked, "有給休暇は年間20日です。");
    }

    #[test]
    fn refuses_without_hits_or_when_the_verdict_says_so() {
        let refused = RelevanceVerdict {
            refused: true,
            reason: String::new(),
        };
        assert!(refuses(&[crate::test_support::hit("weak", 0.3)], &refused));
        let relevant = RelevanceVerdict {
            refused: false,
            reason: String::new(),
        };
        assert!(refuses(&[], &relevant));
        assert!(!refuses(
            &[crate::test_support::hit("good", 0.9)],
            &relevant
        ));
    }
}
