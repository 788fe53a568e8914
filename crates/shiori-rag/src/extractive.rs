//! The answer no model writes: the sentences of the best sources that answer the question,
//! cited and marked in their source, or a refusal when nothing retrieved is relevant enough.

use crate::meaning::Meaning;
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

/// What a refusal says: nothing relevant enough was found, or the sources found are on the
/// question's topic but none states the kind of thing it asks for, or names what it asks after
/// (a thing it asks whether there is, the case it asks an amount for).
pub(crate) fn refusal_text(reason: &NotQuoted) -> String {
    match reason {
        NotQuoted::Nothing => REFUSAL_TEXT.to_string(),
        NotQuoted::NotStated(wanted) => format!(
            "The documents found do not state {} for this question.",
            wanted.described()
        ),
        NotQuoted::NotMentioned(thing) => {
            format!("The documents found do not mention {thing}.")
        }
    }
}

/// The sentences of `sources` (best first) that answer `question`, followed by the `[n]` of
/// their source.
pub(crate) fn quote(
    question: &str,
    sources: &[Source],
    meaning: Option<&Meaning>,
) -> Result<Quoted, NotQuoted> {
    let (sentences, index, citation) = quote_one(question, sources, meaning)?;
    Ok(Quoted {
        text: format!("{sentences} [{}]", index + 1),
        citations: vec![citation],
    })
}

/// One ask of a question ([`crate::asks`]) with what its own retrieval found.
#[derive(Clone)]
pub(crate) struct Ask<'a> {
    pub question: &'a str,
    /// The question's meaning, when an embedder weighs the candidates.
    pub meaning: Option<&'a Meaning<'a>>,
    pub sources: Vec<Source>,
    /// The retrieval's verdict: nothing found is relevant enough to quote.
    pub refused: bool,
}

/// Each ask answered from its own sources and cited by its source's place among the sources of
/// all the asks (each source once, in the order the asks found them), which are returned too.
pub(crate) fn quote_each(asks: &[Ask<'_>]) -> (Vec<Result<Quoted, NotQuoted>>, Vec<Source>) {
    let mut merged: Vec<Source> = Vec::new();
    let mut answers = Vec::with_capacity(asks.len());
    for ask in asks {
        let places: Vec<usize> = ask
            .sources
            .iter()
            .map(|source| place_in(&mut merged, source))
            .collect();
        let quoted = if ask.refused || ask.sources.is_empty() {
            Err(NotQuoted::Nothing)
        } else {
            quote_one(ask.question, &ask.sources, ask.meaning).map(
                |(sentences, index, mut citation)| {
                    citation.number = places[index] + 1;
                    Quoted {
                        text: format!("{sentences} [{}]", citation.number),
                        citations: vec![citation],
                    }
                },
            )
        };
        answers.push(quoted);
    }
    (answers, merged)
}

/// The answers of the asks that have one, in order and each once, as one answer (a source cited
/// by two asks is one citation with the quotes of both); when none has, the first ask's reason.
pub(crate) fn joined(answers: Vec<Result<Quoted, NotQuoted>>) -> Result<Quoted, NotQuoted> {
    let mut texts = Vec::new();
    let mut citations: Vec<Citation> = Vec::new();
    let mut first_reason = None;
    for answer in answers {
        match answer {
            // Two asks answered by the same sentences ("how much is it at A and at B" where one
            // table has both) say them once.
            Ok(quoted) if texts.contains(&quoted.text) => {}
            Ok(quoted) => {
                texts.push(quoted.text);
                for citation in quoted.citations {
                    match citations
                        .iter_mut()
                        .find(|known| known.number == citation.number)
                    {
                        Some(known) => known.quotes.extend(citation.quotes),
                        None => citations.push(citation),
                    }
                }
            }
            Err(reason) => {
                first_reason.get_or_insert(reason);
            }
        }
    }
    if texts.is_empty() {
        return Err(first_reason.unwrap_or(NotQuoted::Nothing));
    }
    Ok(Quoted {
        text: texts.join(" "),
        citations,
    })
}

/// The place of `source` in `merged`, added at the end when it is not there yet.
fn place_in(merged: &mut Vec<Source>, source: &Source) -> usize {
    match merged
        .iter()
        .position(|known| known.chunk_id == source.chunk_id)
    {
        Some(place) => place,
        None => {
            merged.push(source.clone());
            merged.len() - 1
        }
    }
}

/// The quoted sentences of `question`'s answer in `sources`, the index of their source and its
/// citation (numbered by its place in `sources`, marked with the quotes).
fn quote_one(
    question: &str,
    sources: &[Source],
    meaning: Option<&Meaning>,
) -> Result<(String, usize, Citation), NotQuoted> {
    let extracted = extract(question, sources, meaning)?;
    let source = &sources[extracted.source];
    let sentences: Vec<&str> = extracted
        .quotes
        .iter()
        .map(|range| &source.text[range.clone()])
        .collect();
    let mut citation = Citation::of(extracted.source + 1, source);
    citation.quotes = extracted
        .quotes
        .into_iter()
        .map(|range| Quote::of_bytes(&source.text, range))
        .collect();
    Ok((sentences.join(" "), extracted.source, citation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::source;

    #[test]
    fn cites_and_marks_the_quoted_sentences() {
        let sources = [
            source(
                "福利厚生",
                "入社日に10日付与されます。有給休暇は年間20日です。",
            ),
            source("Plans", "Business costs $29 per user per month."),
        ];
        let quoted = quote("有給休暇について教えてください", &sources, None).unwrap();
        assert_eq!(
            quoted.text,
            "入社日に10日付与されます。 有給休暇は年間20日です。 [1]"
        );
        assert_eq!(quoted.citations.len(), 1);
        let citation = &quoted.citations[0];
        assert_eq!((citation.number, citation.doc_id.as_str()), (1, "福利厚生"));
        // Characters, not bytes: the page marks them by character.
        assert_eq!(
            citation.quotes,
            [Quote { start: 0, end: 14 }, Quote { start: 14, end: 27 }]
        );
        let counted = quote("有給休暇は年間何日ですか？", &sources, None).unwrap();
        assert_eq!(
            counted.text, "有給休暇は年間20日です。 [1]",
            "the sentence that states the number asked for, alone"
        );
        let marked: String = sources[0].text.chars().skip(14).take(13).collect();
        assert_eq!(marked, "有給休暇は年間20日です。");
    }

    #[test]
    fn each_ask_quotes_its_own_sources_cited_among_all_of_them() {
        let leave = source(
            "Leave",
            "You can carry over at most 240 hours of annual leave.",
        );
        let credit = source("Credit", "You may keep at most 24 credit hours banked.");
        let asks = [
            Ask {
                meaning: None,
                question: "what is the cap on carrying over annual leave",
                sources: vec![leave.clone(), credit.clone()],
                refused: false,
            },
            Ask {
                meaning: None,
                question: "how many credit hours can I keep banked?",
                sources: vec![credit.clone(), leave.clone()],
                refused: false,
            },
            Ask {
                meaning: None,
                question: "which floor is the office on?",
                sources: vec![source("Office", "The office is on floor 35.")],
                refused: true,
            },
        ];
        let (answers, sources) = quote_each(&asks);
        let titles: Vec<&str> = sources.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(titles, ["Leave", "Credit", "Office"]);
        assert!(
            matches!(answers[2], Err(NotQuoted::Nothing)),
            "a refused ask"
        );
        let answer = joined(answers).unwrap();
        assert_eq!(
            answer.text,
            "You can carry over at most 240 hours of annual leave. [1] \
             You may keep at most 24 credit hours banked. [2]"
        );
        let numbers: Vec<usize> = answer.citations.iter().map(|c| c.number).collect();
        assert_eq!(numbers, [1, 2]);
        assert_eq!(answer.citations[1].doc_id, "Credit");
        let twice = quote_each(&[asks[0].clone(), asks[0].clone()]).0;
        let once = joined(twice).unwrap();
        assert_eq!(
            once.text,
            "You can carry over at most 240 hours of annual leave. [1]"
        );
        assert_eq!(once.citations[0].quotes.len(), 1);
        let none = quote_each(&asks[2..]).0;
        assert!(matches!(joined(none), Err(NotQuoted::Nothing)));
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
