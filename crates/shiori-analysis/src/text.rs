//! Words and sentences of chunks, answers and questions, in Japanese and English alike: the
//! terms that attribution, sentence extraction and the refusal's sentence coverage compare,
//! and where sentences begin and end.

use crate::script::is_japanese_char;
use std::collections::HashSet;
use std::ops::Range;

/// Lower-cased words of two or more letters or digits other than English function words (a
/// number without its thousands separators), and character bigrams of CJK runs (which have no
/// spaces to split on).
pub fn terms(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    each_term(text, |term| {
        if !out.contains(term) {
            out.insert(term.to_string());
        }
    });
    out
}

/// [`terms`] with English words reduced to their Snowball stems, as BM25's English analyzer
/// reduces them: "laptops" and "laptop", "accepted" and "accepts" are one term.
pub fn stemmed_terms(text: &str) -> HashSet<String> {
    let stemmer = frostem::Stemmer::new(frostem::Algorithm::English);
    let mut out = HashSet::new();
    each_term(text, |term| {
        let stem = match term.is_ascii() {
            true => stemmer.stem(term),
            false => std::borrow::Cow::Borrowed(term),
        };
        if !out.contains(stem.as_ref()) {
            out.insert(stem.into_owned());
        }
    });
    out
}

/// Calls `visit` with each of [`terms`]' terms of `text` as it is read, repeats included,
/// allocating only two reused buffers.
pub fn each_term(text: &str, mut visit: impl FnMut(&str)) {
    let mut word = String::new();
    let mut bigram = String::new();
    let mut previous_cjk: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        // A thousands separator keeps a number whole: "$2,500" is the "2500" a table states.
        let grouping = c == ',' && word.ends_with(|d: char| d.is_ascii_digit());
        if grouping && chars.peek().is_some_and(char::is_ascii_digit) {
            continue;
        }
        if is_japanese_char(c) {
            if let Some(p) = previous_cjk {
                bigram.clear();
                bigram.push(p);
                bigram.push(c);
                visit(&bigram);
            }
            previous_cjk = Some(c);
            flush(&mut word, &mut visit);
        } else {
            previous_cjk = None;
            if c.is_alphanumeric() {
                word.extend(c.to_lowercase());
            } else {
                flush(&mut word, &mut visit);
            }
        }
    }
    flush(&mut word, &mut visit);
}

fn flush(word: &mut String, visit: &mut impl FnMut(&str)) {
    if word.chars().count() >= 2 && !STOP_WORDS.contains(&word.as_str()) {
        visit(word);
    }
    word.clear();
}

/// English function words: they say how a question is asked, not what it asks about.
const STOP_WORDS: [&str; 48] = [
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "can", "did", "do", "does", "for",
    "from", "has", "have", "how", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "our", "that", "the", "their", "there", "this", "to", "was", "we", "were", "what", "when",
    "where", "which", "who", "why", "will", "with", "you", "your",
];

/// Ends a sentence wherever it stands.
fn is_full_stop(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '!' | '?' | '\n')
}

/// Whether the `!` or `?` at `index` is part of a word, not its sentence's end: a letter or a
/// digit follows it at once, as in a chat command (`!ic page`), a brand (`Yahoo!Japan`) or a
/// URL's query (`?id=3`).
fn inside_a_word(text: &str, index: usize, c: char) -> bool {
    matches!(c, '!' | '?')
        && text[index + c.len_utf8()..]
            .chars()
            .next()
            .is_some_and(|next| next.is_ascii_alphanumeric())
}

/// Closing quotes and brackets that belong to the sentence they follow (`「…。」`).
fn is_closing(c: char) -> bool {
    matches!(c, '」' | '』' | '）' | ')' | '"' | '\'' | '”' | '’' | ']')
}

/// Words whose `.` abbreviates them rather than ending a sentence (lower-cased, without the
/// final dot). Words with inner dots (`U.S.`, `e.g.`, `a.m.`) and single letters (initials)
/// are abbreviations without being listed.
const ABBREVIATIONS: [&str; 15] = [
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "inc", "ltd", "co", "corp", "dept",
    "approx",
];

/// Abbreviations only before a number (`No. 5`, `Vol. 2`): elsewhere the word ends a sentence
/// as often as not ("The answer is no.").
const NUMBER_ABBREVIATIONS: [&str; 5] = ["no", "nos", "vol", "fig", "ext"];

/// Whether the `.` at byte `dot` of `text` ends a sentence: it must be followed by whitespace
/// or the end (so `1.5` and `example.com` stay whole), the next sentence must not start in
/// lower case (`e.g. the`), and the word it closes must not be an abbreviation (`Jr.`, `U.S.`)
/// or the number of a list item at the start of a line (`1. Open Settings`).
fn dot_ends_sentence(text: &str, dot: usize) -> bool {
    let after = &text[dot + 1..];
    if after.starts_with(|c: char| !c.is_whitespace()) {
        return false;
    }
    if after.trim_start().starts_with(char::is_lowercase) {
        return false;
    }
    let before = &text[..dot];
    let word_start = before
        .rfind(|c: char| c.is_whitespace() || c == '(' || c == '"')
        .map_or(0, |at| {
            at + before[at..].chars().next().map_or(1, char::len_utf8)
        });
    let word = &before[word_start..];
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    let lower = word.to_lowercase();
    let before_number = after.trim_start().starts_with(|c: char| c.is_ascii_digit());
    let abbreviated = (letters >= 1 && word.contains('.'))
        || (letters == 1 && word.chars().count() == 1)
        || ABBREVIATIONS.contains(&lower.as_str())
        || (before_number && NUMBER_ABBREVIATIONS.contains(&lower.as_str()));
    let at_line_start = before[..word_start]
        .trim_end_matches([' ', '\t'])
        .ends_with('\n')
        || before[..word_start].trim().is_empty();
    let list_number = at_line_start && !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit());
    !(abbreviated || list_number)
}

/// The byte ranges of `text`'s sentences, trimmed of surrounding whitespace, empty ones left
/// out. A sentence ends at `。！？!?` or a line break, and at a `.` that [`dot_ends_sentence`];
/// closing quotes and brackets stay with it.
pub fn sentence_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        let ends = (is_full_stop(c) && !inside_a_word(text, index, c))
            || (c == '.' && dot_ends_sentence(text, index));
        if !ends {
            continue;
        }
        let mut end = index + c.len_utf8();
        while let Some(&(at, closing)) = chars.peek() {
            if !is_closing(closing) {
                break;
            }
            end = at + closing.len_utf8();
            chars.next();
        }
        push_trimmed(text, start..end, &mut ranges);
        start = end;
    }
    push_trimmed(text, start..text.len(), &mut ranges);
    ranges
}

fn push_trimmed(text: &str, range: Range<usize>, ranges: &mut Vec<Range<usize>>) {
    let piece = &text[range.clone()];
    let leading = piece.len() - piece.trim_start().len();
    let trailing = piece.len() - piece.trim_end().len();
    if leading + trailing < piece.len() {
        ranges.push(range.start + leading..range.end - trailing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(text: &str) -> Vec<&str> {
        sentence_ranges(text)
            .into_iter()
            .map(|range| &text[range])
            .collect()
    }

    #[test]
    fn stemmed_terms_make_one_term_of_a_words_forms_and_keep_japanese_bigrams() {
        let stems = stemmed_terms("Laptops are replaced; payments accepted. 有給休暇");
        for stem in [
            "laptop", "replac", "payment", "accept", "有給", "給休", "休暇",
        ] {
            assert!(stems.contains(stem), "{stem}: {stems:?}");
        }
        assert_eq!(stemmed_terms("laptop"), stemmed_terms("laptops"));
    }

    #[test]
    fn splits_english_at_stops_followed_by_space() {
        assert_eq!(
            sentences("Plans cost $29.50 per user. See example.com for more!  Done"),
            [
                "Plans cost $29.50 per user.",
                "See example.com for more!",
                "Done"
            ]
        );
    }

    #[test]
    fn abbreviations_initials_and_list_numbers_end_no_sentence() {
        assert_eq!(
            sentences(
                "Offices in the U.S. and Japan. Ask Dr. Sato, e.g. by mail. J. Smith Jr. agreed.\n\
                 1. Open Settings.\n2. Save.\nCosts $3.50 vs. $4. See No. 5. The answer is no. Done."
            ),
            [
                "Offices in the U.S. and Japan.",
                "Ask Dr. Sato, e.g. by mail.",
                "J. Smith Jr. agreed.",
                "1. Open Settings.",
                "2. Save.",
                "Costs $3.50 vs. $4.",
                "See No. 5.",
                "The answer is no.",
                "Done."
            ]
        );
    }

    #[test]
    fn splits_japanese_and_keeps_closing_quotes() {
        assert_eq!(
            sentences("梅雨は雨季の一種である。「入梅」と呼ぶ。」\n北海道には梅雨がない"),
            [
                "梅雨は雨季の一種である。",
                "「入梅」と呼ぶ。」",
                "北海道には梅雨がない"
            ]
        );
    }

    #[test]
    fn a_mark_inside_a_word_ends_no_sentence() {
        assert_eq!(
            sentences("Slackコマンド!ic page を使用して通知します。ない! 聞いてみましょう。See ?id=3 now? Yes"),
            [
                "Slackコマンド!ic page を使用して通知します。",
                "ない!",
                "聞いてみましょう。",
                "See ?id=3 now?",
                "Yes"
            ]
        );
    }

    #[test]
    fn blank_text_has_no_sentences() {
        assert!(sentence_ranges("  \n ").is_empty());
        assert!(sentence_ranges("").is_empty());
    }

    #[test]
    fn each_term_visits_terms_in_reading_order_with_repeats() {
        let mut seen = Vec::new();
        each_term("API limits: the API の上限", |term| {
            seen.push(term.to_string())
        });
        assert_eq!(seen, ["api", "limits", "api", "の上", "上限"]);
    }

    #[test]
    fn a_number_keeps_its_thousands_separators_out_of_its_term() {
        let numbers = terms("$2,500, then 2500 and 1,5 or 3, 4");
        for number in ["2500", "15"] {
            assert!(numbers.contains(number), "{number}: {numbers:?}");
        }
        assert!(!numbers.contains("500"), "{numbers:?}");
    }

    #[test]
    fn terms_are_words_and_cjk_bigrams() {
        let found = terms("What is the API の上限は 600 requests");
        let expected: HashSet<String> = ["api", "の上", "上限", "限は", "600", "requests"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(found, expected);
    }
}
