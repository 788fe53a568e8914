//! Sentences packed into chunks that fit the embedding model's token limit, counted with the
//! model's own tokenizer.

use super::boundary::sentence_ends;
use super::recursive;

/// Counts the tokens the model reads for a chunk's whole embedding input.
pub(super) type CountTokens<'a> = dyn Fn(&str) -> usize + 'a;

/// Pieces whose embedding input (`input(piece)`: title, prefix and special tokens added) is at
/// most `budget` tokens. Sentences are packed greedily; a sentence too long alone is cut at
/// lines, words and characters until its parts fit. A piece can only exceed the budget when a
/// single character does.
pub(super) fn split(text: &str, budget: usize, count: &CountTokens<'_>) -> Vec<String> {
    let overhead = count("");
    let room = budget.saturating_sub(overhead).max(1);
    let mut units: Vec<(&str, usize)> = Vec::new();
    for sentence in sentences(text) {
        let tokens = count(sentence).saturating_sub(overhead);
        if tokens <= room {
            units.push((sentence, tokens));
        } else {
            units.extend(cut_to_fit(sentence, room, overhead, count));
        }
    }

    let mut pieces = Vec::new();
    let mut start = 0;
    while start < units.len() {
        // Token counts of parts add up to about the count of the whole; each pack is checked
        // with a real count and shrunk when the estimate was short.
        let mut end = start + 1;
        let mut used = units[start].1;
        while end < units.len() && used + units[end].1 <= room {
            used += units[end].1;
            end += 1;
        }
        let mut piece = join(text, &units[start..end]);
        while end > start + 1 && count(piece) > budget {
            end -= 1;
            piece = join(text, &units[start..end]);
        }
        pieces.push(piece.to_owned());
        start = end;
    }
    pieces
}

/// Sentences (and lines) of `text`, trimmed, as slices of it.
pub(super) fn sentences(text: &str) -> Vec<&str> {
    let mut start = 0;
    let mut found = Vec::new();
    for end in sentence_ends(text).into_iter().chain([text.len()]) {
        let sentence = text[start..end].trim();
        if !sentence.is_empty() {
            found.push(sentence);
        }
        start = end;
    }
    found
}

/// The text from the first unit's start to the last unit's end (units are slices of `text`).
fn join<'t>(text: &'t str, units: &[(&'t str, usize)]) -> &'t str {
    let start = offset_in(text, units[0].0);
    let last = units[units.len() - 1].0;
    let end = offset_in(text, last) + last.len();
    &text[start..end]
}

fn offset_in(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

/// Parts of an over-long sentence that each fit `room` tokens: cut to a char size in proportion
/// to the overshoot, halving the size for any part that still does not fit.
fn cut_to_fit<'t>(
    sentence: &'t str,
    room: usize,
    overhead: usize,
    count: &CountTokens<'_>,
) -> Vec<(&'t str, usize)> {
    let tokens = count(sentence).saturating_sub(overhead);
    if tokens <= room {
        return vec![(sentence, tokens)];
    }
    let chars = sentence.chars().count();
    if chars <= 1 {
        return vec![(sentence, tokens)];
    }
    let max_chars = (chars * room / tokens).clamp(1, chars / 2);
    // The parts come back trimmed and in order: find each one after the previous.
    let mut from = 0;
    let mut parts = Vec::new();
    for part in recursive::split(sentence, max_chars) {
        let Some(offset) = sentence[from..].find(part.as_str()) else {
            continue;
        };
        let start = from + offset;
        from = start + part.len();
        parts.extend(cut_to_fit(&sentence[start..from], room, overhead, count));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two special tokens plus one per whitespace-separated word.
    fn words(text: &str) -> usize {
        2 + text.split_whitespace().count()
    }

    #[test]
    fn packs_sentences_up_to_the_budget() {
        let text = "One two three. Four five six. Seven eight. Nine ten eleven twelve.";
        let pieces = split(text, 2 + 6, &words);
        assert_eq!(
            pieces,
            [
                "One two three. Four five six.",
                "Seven eight. Nine ten eleven twelve."
            ]
        );
        assert!(pieces.iter().all(|p| words(p) <= 8));
    }

    #[test]
    fn cuts_a_sentence_longer_than_the_budget() {
        let text = "a b c d e f g h i j k l m n o p q r s t.";
        let pieces = split(text, 2 + 5, &words);
        assert!(pieces.len() >= 4, "{pieces:?}");
        assert!(pieces.iter().all(|p| words(p) <= 7), "{pieces:?}");
        assert_eq!(pieces.join(" "), text);
    }

    #[test]
    fn a_short_estimate_is_corrected_by_a_real_count() {
        // Joining adds a token per boundary here, so parts under-count the whole.
        let count = |text: &str| words(text) + text.matches(". ").count() * 3;
        let pieces = split("aa bb. cc dd. ee ff.", 2 + 4, &count);
        assert!(pieces.iter().all(|p| count(p) <= 6), "{pieces:?}");
        assert_eq!(pieces.len(), 3);
    }

    #[test]
    fn japanese_sentences_pack_by_token_count() {
        let chars = |text: &str| 2 + text.chars().count();
        let text = "今日は晴れです。明日は雨です。週末は曇り。";
        assert_eq!(
            split(text, 2 + 15, &chars),
            ["今日は晴れです。明日は雨です。", "週末は曇り。"]
        );
    }
}
