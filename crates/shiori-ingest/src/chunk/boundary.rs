//! Where text may be cut: sentence ends and word starts, as byte offsets.

/// Punctuation that ends a sentence only when followed by whitespace, the end, or CJK text
/// (so "3.14" and "e.g.x" stay whole, while "了解!次へ" still splits).
const LATIN_ENDS: &[char] = &['.', '!', '?'];

/// Punctuation that ends a sentence wherever it appears.
const CJK_ENDS: &[char] = &['。', '！', '？', '｡'];

/// Closing quotes and brackets that belong to the sentence they follow: `「はい。」` ends after `」`.
const CLOSERS: &[char] = &[
    '"', '\'', ')', ']', '}', '」', '』', '）', '】', '〕', '〉', '》', '”', '’',
];

/// Byte offsets just past each sentence end and each line break, ascending.
pub(super) fn sentence_ends(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        if c == '\n' {
            ends.push(index + 1);
            continue;
        }
        let latin = LATIN_ENDS.contains(&c);
        if !latin && !CJK_ENDS.contains(&c) {
            continue;
        }
        let mut end = index + c.len_utf8();
        // Runs like "?!", "..." or `。」` end where the run ends.
        while let Some(&(next_index, next)) = chars.peek() {
            if !(LATIN_ENDS.contains(&next) || CJK_ENDS.contains(&next) || CLOSERS.contains(&next))
            {
                break;
            }
            end = next_index + next.len_utf8();
            chars.next();
        }
        let followed_by = text[end..].chars().next();
        if !latin || followed_by.is_none_or(|next| next.is_whitespace() || is_cjk(next)) {
            ends.push(end);
        }
    }
    ends
}

/// Whether a chunk may end at byte `cut` of `text`: not just after a line that introduces what
/// follows it (`Our goals when reviewing code are to:`, `手順は次のとおり：`), which says nothing
/// without the list below; a chunk that ended there left its list to the next one, whose
/// answer then read without its question.
pub(super) fn may_end_at(text: &str, cut: usize) -> bool {
    !text[..cut].trim_end().ends_with([':', '：'])
}

/// Byte offsets where a word starts after whitespace, ascending.
pub(super) fn word_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut after_space = false;
    for (index, c) in text.char_indices() {
        let space = c.is_whitespace();
        if after_space && !space {
            starts.push(index);
        }
        after_space = space;
    }
    starts
}

/// Scripts written without spaces between sentences.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}'   // Hiragana, Katakana
        | '\u{3400}'..='\u{4dbf}' // CJK Extension A
        | '\u{4e00}'..='\u{9fff}' // CJK Unified Ideographs
        | '\u{ac00}'..='\u{d7af}' // Hangul syllables
        | '\u{f900}'..='\u{faff}' // CJK Compatibility Ideographs
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, offsets: &[usize]) -> Vec<String> {
        let mut start = 0;
        let mut parts: Vec<String> = offsets
            .iter()
            .map(|&end| {
                let part = text[start..end].to_owned();
                start = end;
                part
            })
            .collect();
        parts.push(text[start..].to_owned());
        parts
    }

    #[test]
    fn latin_sentences_need_a_space_after_the_stop() {
        let text = "Pi is 3.14. Really?! Yes... ok";
        assert_eq!(
            cut(text, &sentence_ends(text)),
            ["Pi is 3.14.", " Really?!", " Yes...", " ok"]
        );
    }

    #[test]
    fn japanese_sentences_end_at_maru_with_closing_quotes() {
        let text = "彼は「はい。」と言った。次へ!終わり";
        assert_eq!(
            cut(text, &sentence_ends(text)),
            ["彼は「はい。」", "と言った。", "次へ!", "終わり"]
        );
    }

    #[test]
    fn line_breaks_are_ends_too() {
        let text = "a\nb.\n\nc";
        assert_eq!(sentence_ends(text), [2, 4, 5, 6]);
    }

    #[test]
    fn a_chunk_never_ends_on_the_line_introducing_a_list() {
        let text = "Our goals are to:\n\n- expose bugs\n- share knowledge";
        let ends: Vec<usize> = sentence_ends(text)
            .into_iter()
            .filter(|&cut| may_end_at(text, cut))
            .collect();
        assert_eq!(
            cut(text, &ends),
            ["Our goals are to:\n\n- expose bugs\n", "- share knowledge"]
        );
        assert!(!may_end_at(
            "手順は次のとおり：\n1. 申請",
            "手順は次のとおり：\n".len()
        ));
    }

    #[test]
    fn words_start_after_whitespace() {
        assert_eq!(word_starts("ab  cd\ne "), [4, 7]);
    }
}
