//! Words to text: low-confidence words dropped, lines of a paragraph joined, and no space where
//! Japanese is written without one.

/// One word as Tesseract read it, and where it stands in the page's layout.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    pub text: String,
    /// 0–100.
    pub confidence: f32,
    pub starts_paragraph: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PageText {
    pub text: String,
    pub mean_confidence: f32,
    pub words_kept: usize,
    pub words_dropped: usize,
}

/// The page's text: paragraphs on their own lines, the lines within one joined (a line break
/// inside a Japanese sentence would split its words for search). Two words are separated by a
/// space unless one side is Japanese and the other Japanese, punctuation or a digit.
pub(crate) fn assemble(words: &[Word], min_confidence: f32) -> PageText {
    let found: Vec<&Word> = words.iter().filter(|w| !w.text.trim().is_empty()).collect();
    let mean_confidence = if found.is_empty() {
        0.0
    } else {
        found.iter().map(|w| w.confidence).sum::<f32>() / found.len() as f32
    };
    let mut text = String::new();
    let mut kept = 0;
    let mut paragraph_pending = false;
    for word in &found {
        paragraph_pending |= word.starts_paragraph;
        if word.confidence < min_confidence {
            continue;
        }
        let next = word.text.trim();
        if let Some(last) = text.chars().last() {
            if paragraph_pending {
                text.push('\n');
            } else if needs_space(last, next) {
                text.push(' ');
            }
        }
        paragraph_pending = false;
        text.push_str(next);
        kept += 1;
    }
    PageText {
        text,
        mean_confidence,
        words_kept: kept,
        words_dropped: found.len() - kept,
    }
}

fn needs_space(last: char, next: &str) -> bool {
    let Some(first) = next.chars().next() else {
        return false;
    };
    let tight = |a: char, b: char| {
        is_japanese(a) && (is_japanese(b) || is_punctuation(b) || b.is_ascii_digit())
    };
    !(tight(last, first) || tight(first, last))
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || matches!(c, '\u{2010}'..='\u{206f}')
}

/// Scripts and marks written without spaces between words: kana, kanji, and the CJK and
/// full-width punctuation around them.
fn is_japanese(c: char) -> bool {
    matches!(c,
        '\u{3000}'..='\u{303f}'     // CJK symbols and punctuation (、。「」)
        | '\u{3040}'..='\u{30ff}'   // hiragana, katakana
        | '\u{31f0}'..='\u{31ff}'   // katakana phonetic extensions
        | '\u{3400}'..='\u{4dbf}'   // CJK extension A
        | '\u{4e00}'..='\u{9fff}'   // CJK unified ideographs
        | '\u{f900}'..='\u{faff}'   // CJK compatibility ideographs
        | '\u{ff00}'..='\u{ffef}'   // full-width and half-width forms
        | '\u{20000}'..='\u{2ffff}' // CJK extensions B–F
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, confidence: f32, starts_paragraph: bool) -> Word {
        Word {
            text: text.to_owned(),
            confidence,
            starts_paragraph,
        }
    }

    fn words(texts: &[&str]) -> Vec<Word> {
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| word(text, 90.0, i == 0))
            .collect()
    }

    #[test]
    fn japanese_words_are_joined_without_the_spaces_tesseract_puts_between_them() {
        let page = assemble(
            &words(&["梅雨入り", "や", "入梅", "(にゅうばい)", "といい、"]),
            0.0,
        );
        assert_eq!(page.text, "梅雨入りや入梅(にゅうばい)といい、");
    }

    #[test]
    fn latin_words_keep_their_spaces_also_next_to_japanese() {
        let page = assemble(
            &words(&["Revenue", "grew", "12%", "in", "東京", "Q3."]),
            0.0,
        );
        assert_eq!(page.text, "Revenue grew 12% in 東京 Q3.");
    }

    #[test]
    fn paragraphs_start_new_lines_even_when_their_first_word_is_dropped() {
        let page = assemble(
            &[
                word("First", 90.0, true),
                word("paragraph.", 90.0, false),
                word("~~", 10.0, true),
                word("Second", 90.0, false),
                word("one.", 90.0, false),
            ],
            30.0,
        );
        assert_eq!(page.text, "First paragraph.\nSecond one.");
        assert_eq!((page.words_kept, page.words_dropped), (4, 1));
        assert_eq!(page.mean_confidence, 74.0);
    }

    #[test]
    fn a_page_without_words_is_empty_with_zero_confidence() {
        let page = assemble(&[word(" ", 95.0, true)], 30.0);
        assert_eq!(page.text, "");
        assert_eq!(page.mean_confidence, 0.0);
        assert_eq!((page.words_kept, page.words_dropped), (0, 0));
    }
}
