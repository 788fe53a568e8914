use super::boundary::{may_end_at, sentence_ends, word_starts};

/// Separators from coarsest to finest; text is cut at the coarsest one that makes pieces fit.
#[derive(Debug, Clone, Copy)]
enum Level {
    Paragraph,
    Line,
    Sentence,
    Word,
    Char,
}

impl Level {
    fn finer(self) -> Level {
        match self {
            Level::Paragraph => Level::Line,
            Level::Line => Level::Sentence,
            Level::Sentence => Level::Word,
            Level::Word | Level::Char => Level::Char,
        }
    }

    /// Byte offsets where `text` may be cut at this level; the separator stays with the piece
    /// before it, so the pieces concatenate back to `text`. Paragraphs, lines and sentences
    /// are not cut after a line introducing what follows ([`may_end_at`]).
    fn cuts(self, text: &str) -> Vec<usize> {
        let mut cuts = match self {
            Level::Paragraph => text.match_indices("\n\n").map(|(i, _)| i + 2).collect(),
            Level::Line => text.match_indices('\n').map(|(i, _)| i + 1).collect(),
            Level::Sentence => sentence_ends(text),
            Level::Word => word_starts(text),
            Level::Char => text.char_indices().map(|(i, _)| i).skip(1).collect(),
        };
        if matches!(self, Level::Paragraph | Level::Line | Level::Sentence) {
            cuts.retain(|&cut| may_end_at(text, cut));
        }
        cuts
    }
}

/// Pieces of at most `max` chars, cut at paragraphs, then lines, sentences, words and finally
/// characters, with adjacent small pieces merged back up to `max`.
pub(super) fn split(text: &str, max: usize) -> Vec<String> {
    spans(text, 0, text.len(), max, Level::Paragraph)
        .into_iter()
        .map(|span| text[span.start..span.end].trim())
        .filter(|piece| !piece.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A run of `text` by byte range, with its length in chars.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    chars: usize,
}

/// Spans of at most `max` chars tiling `text[start..end]`. Oversized parts are cut at finer
/// levels, and the results merged at this level too, so that e.g. a header line can join the
/// first sentence of the long paragraph below it.
fn spans(text: &str, start: usize, end: usize, max: usize, level: Level) -> Vec<Span> {
    let slice = &text[start..end];
    let chars = slice.chars().count();
    if chars <= max {
        return vec![Span { start, end, chars }];
    }
    let mut merged: Vec<Span> = Vec::new();
    let mut part_start = start;
    for cut in level
        .cuts(slice)
        .into_iter()
        .map(|cut| start + cut)
        .chain([end])
    {
        if cut == part_start {
            continue;
        }
        for span in spans(text, part_start, cut, max, level.finer()) {
            match merged.last_mut() {
                Some(last) if last.chars + span.chars <= max => {
                    last.end = span.end;
                    last.chars += span.chars;
                }
                _ => merged.push(span),
            }
        }
        part_start = cut;
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_paragraphs_that_fit_together() {
        let text = "First para.\n\nSecond para.\n\nThird paragraph is longer.";
        assert_eq!(
            split(text, 30),
            ["First para.\n\nSecond para.", "Third paragraph is longer."]
        );
    }

    #[test]
    fn falls_back_to_lines_sentences_words_and_chars() {
        let text = "line one\nline two is here\n\nA sentence. Another one here. abcdefghijklmnop";
        let pieces = split(text, 15);
        assert_eq!(
            pieces,
            [
                "line one",
                "line two is",
                "here",
                "A sentence.",
                "Another one",
                "here.",
                "abcdefghijklmno",
                "p",
            ]
        );
        assert!(pieces.iter().all(|p| p.chars().count() <= 15));
    }

    #[test]
    fn a_list_stays_with_the_line_introducing_it() {
        let text = "Code reviews matter.\n\nOur goals when reviewing code are to:\n\n- Expose bugs\n- Share knowledge";
        assert_eq!(
            split(text, 60),
            [
                "Code reviews matter.",
                "Our goals when reviewing code are to:\n\n- Expose bugs",
                "- Share knowledge"
            ]
        );
    }

    #[test]
    fn japanese_splits_at_maru() {
        let text = "今日は晴れです。明日は雨が降るでしょう。週末は曇り。";
        assert_eq!(
            split(text, 14),
            [
                "今日は晴れです。",
                "明日は雨が降るでしょう。",
                "週末は曇り。"
            ]
        );
        assert_eq!(
            split(text, 20),
            ["今日は晴れです。明日は雨が降るでしょう。", "週末は曇り。"]
        );
    }
}
