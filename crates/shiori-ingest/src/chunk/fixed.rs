use super::boundary::{may_end_at, sentence_ends, word_starts};

/// Windows of at most `max` chars; consecutive windows share about `overlap` chars. A window
/// ends at the last sentence end past its middle (else the last word start, else anywhere),
/// and the next one starts at the first sentence (else word) start inside the overlap. A window
/// does not end on a line introducing what follows ([`may_end_at`]).
pub(super) fn split(text: &str, max: usize, overlap: usize) -> Vec<String> {
    // Char index -> byte offset, so that sizes count chars while slicing stays on boundaries.
    let offsets: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let total = offsets.len() - 1;
    let to_char = |byte: usize| offsets.partition_point(|&o| o < byte);
    let sentences: Vec<usize> = sentence_ends(text)
        .into_iter()
        .filter(|&cut| may_end_at(text, cut))
        .map(to_char)
        .collect();
    let words: Vec<usize> = word_starts(text).into_iter().map(to_char).collect();
    // Every window ends past its middle, so an overlap of at most half a window always advances.
    let overlap = overlap.min(max / 2);

    let mut pieces = Vec::new();
    let mut start = 0;
    while start < total {
        let limit = (start + max).min(total);
        let end = if limit == total {
            total
        } else {
            let middle = start + max / 2;
            last_within(&sentences, middle, limit)
                .or_else(|| last_within(&words, middle, limit))
                .unwrap_or(limit)
        };
        let piece = text[offsets[start]..offsets[end]].trim();
        if !piece.is_empty() {
            pieces.push(piece.to_owned());
        }
        if end == total {
            break;
        }
        let back = end - overlap;
        start = first_within(&sentences, back, end)
            .or_else(|| first_within(&words, back, end))
            .unwrap_or(back);
    }
    pieces
}

/// The largest position in `(after, up_to]`.
fn last_within(sorted: &[usize], after: usize, up_to: usize) -> Option<usize> {
    let index = sorted.partition_point(|&p| p <= up_to);
    sorted[..index].last().copied().filter(|&p| p > after)
}

/// The smallest position in `[from, before)`.
fn first_within(sorted: &[usize], from: usize, before: usize) -> Option<usize> {
    let index = sorted.partition_point(|&p| p < from);
    sorted.get(index).copied().filter(|&p| p < before)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &str) -> usize {
        text.chars().count()
    }

    #[test]
    fn short_text_is_one_piece() {
        assert_eq!(split("  Hello world.  ", 100, 10), ["Hello world."]);
        assert!(split("   ", 100, 10).is_empty());
    }

    #[test]
    fn windows_end_at_sentence_ends() {
        let text = "One two three. Four five six. Seven eight nine. Ten eleven twelve.";
        let pieces = split(text, 32, 0);
        assert_eq!(
            pieces,
            [
                "One two three. Four five six.",
                "Seven eight nine.",
                "Ten eleven twelve."
            ]
        );
    }

    #[test]
    fn overlap_restarts_at_a_sentence_inside_it() {
        let text = "Alpha beta. Gamma delta. Epsilon zeta. Eta theta. Iota kappa.";
        let pieces = split(text, 30, 14);
        assert_eq!(
            pieces,
            [
                "Alpha beta. Gamma delta.",
                "Gamma delta. Epsilon zeta.",
                "Epsilon zeta. Eta theta.",
                "Eta theta. Iota kappa.",
            ]
        );
    }

    #[test]
    fn overlap_without_sentence_falls_back_to_word_starts() {
        let text = "aaa bbb ccc ddd eee fff ggg hhh";
        let pieces = split(text, 12, 4);
        assert!(pieces.iter().all(|p| chars(p) <= 12), "{pieces:?}");
        assert_eq!(pieces[0], "aaa bbb ccc");
        assert!(pieces[1].starts_with("ccc"), "{pieces:?}");
        assert!(pieces.last().is_some_and(|p| p.ends_with("hhh")));
    }

    #[test]
    fn japanese_splits_at_maru_and_counts_chars() {
        let text = "今日は晴れです。明日は雨が降るでしょう。週末は曇りの予報です。";
        let pieces = split(text, 12, 0);
        assert_eq!(
            pieces,
            [
                "今日は晴れです。",
                "明日は雨が降るでしょう。",
                "週末は曇りの予報です。"
            ]
        );
        assert!(pieces.iter().all(|p| chars(p) <= 12));
    }

    #[test]
    fn unbroken_text_is_cut_hard_and_always_progresses() {
        let text = "x".repeat(25);
        let pieces = split(&text, 10, 9);
        assert!(
            pieces.iter().all(|p| (1..=10).contains(&chars(p))),
            "{pieces:?}"
        );
        assert_eq!(pieces.first().map(String::as_str), Some("xxxxxxxxxx"));
        assert!(split("abc", 1, 5).iter().all(|p| chars(p) == 1));
    }
}
