//! A PDF's text layer as paragraphs: its lines end where the page's column did, not where the
//! sentence does (`並行し` / `て実施。`, `reim-` / `bursed`), and every page repeats a running
//! header, a footer and a page number. Lines are joined back into paragraphs — without a space
//! inside Japanese, de-hyphenated in English — and the running lines are dropped.

use shiori_analysis::is_japanese_char;
use std::collections::{HashMap, HashSet};

/// How many lines at the top and at the bottom of a page may be running headers or footers.
const RUNNING_LINES: usize = 2;

/// Reflows the text of a document's pages in place (one string per page, lines as the PDF
/// laid them out).
pub(crate) fn reflow(pages: &mut [&mut String]) {
    let lines: Vec<Vec<String>> = pages
        .iter()
        .map(|page| {
            let lines: Vec<String> = page.lines().map(|line| unspaced(line.trim())).collect();
            single_spaced(lines)
        })
        .collect();
    let running = running_lines(&lines);
    for (page, lines) in pages.iter_mut().zip(&lines) {
        let filled = lines.iter().filter(|line| !line.is_empty()).count();
        let mut position = 0;
        let kept: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|line| {
                if line.is_empty() {
                    return true;
                }
                position += 1;
                let edge = position <= RUNNING_LINES || position + RUNNING_LINES > filled;
                !(is_page_number(line) || (edge && running.contains(&shape(line))))
            })
            .collect();
        **page = paragraphs(&kept);
    }
}

/// `lines` without their blank lines when nearly every line is followed by one: a text layer
/// read that way (pdf-extract writes each line so) says nothing of paragraphs with its blank
/// lines, and kept, they would end a paragraph at every line of the page.
fn single_spaced(lines: Vec<String>) -> Vec<String> {
    let filled = lines.windows(2).filter(|pair| !pair[0].is_empty()).count();
    let blank_after = lines
        .windows(2)
        .filter(|pair| !pair[0].is_empty() && pair[1].is_empty())
        .count();
    if filled < 2 || blank_after * 10 < filled * 9 {
        return lines;
    }
    lines.into_iter().filter(|line| !line.is_empty()).collect()
}

/// Shortest run of single characters between single spaces read as one letter-spaced word.
const LETTER_SPACED_RUN: usize = 3;

/// `line` with its letter-spaced runs closed up: a PDF that places each glyph on its own
/// reads `5 , 0 0 0 円` for `5,000円`, and a run of three or more single characters apart is
/// never how words are written.
fn unspaced(line: &str) -> String {
    let tokens: Vec<&str> = line.split(' ').collect();
    let single = |token: &str| token.chars().count() == 1;
    let mut out = String::with_capacity(line.len());
    let mut index = 0;
    while index < tokens.len() {
        let run = tokens[index..].iter().take_while(|t| single(t)).count();
        // `原則5 , 0 0 0 円`: the number's first digit stayed with the word before it.
        let number_goes_on = run >= LETTER_SPACED_RUN
            && out.ends_with(|c: char| c.is_ascii_digit())
            && tokens[index].starts_with(|c: char| c.is_ascii_digit() || c == ',' || c == '.');
        if !out.is_empty() && !number_goes_on {
            out.push(' ');
        }
        if run >= LETTER_SPACED_RUN {
            out.extend(tokens[index..index + run].iter().copied());
            index += run;
        } else {
            out.push_str(tokens[index]);
            index += 1;
        }
    }
    out
}

/// Lines found at the edge of most pages (digits aside, so `Page 3` and `Page 4` match): the
/// running headers and footers. Needs three pages to tell. `pages` are trimmed, unspaced lines.
fn running_lines(pages: &[Vec<String>]) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for page in pages {
        let filled: Vec<&String> = page.iter().filter(|line| !line.is_empty()).collect();
        let mut edges: Vec<String> = filled
            .iter()
            .take(RUNNING_LINES)
            .map(|l| shape(l))
            .collect();
        edges.extend(filled.iter().rev().take(RUNNING_LINES).map(|l| shape(l)));
        edges.sort();
        edges.dedup();
        for edge in edges {
            *seen.entry(edge).or_default() += 1;
        }
    }
    let needed = (pages.len() / 2).max(2) + 1;
    seen.into_iter()
        .filter(|(_, count)| *count >= needed && pages.len() >= 3)
        .map(|(shape, _)| shape)
        .collect()
}

/// A line with its digits masked, so numbered running lines compare equal.
fn shape(line: &str) -> String {
    line.chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

/// `12`, `- 12 -`, `12 / 40`, `Page 12`, `Page 12 of 40`, `p. 12`, `12ページ`.
fn is_page_number(line: &str) -> bool {
    let lower = line.to_lowercase();
    let stripped = lower
        .trim_start_matches("page")
        .trim_start_matches("p.")
        .trim_end_matches("ページ")
        .trim_matches(|c: char| c == '-' || c == '–' || c == '—' || c.is_whitespace());
    let (number, total) = match stripped.split_once(['/', ' ']) {
        Some((number, rest)) => {
            let rest = rest.trim_start_matches(['/', ' ']).trim_start_matches("of");
            (number, Some(rest.trim()))
        }
        None => (stripped, None),
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit());
    digits(number) && total.is_none_or(digits)
}

/// Joins `lines` into paragraphs, one a line; a blank line ends a paragraph too.
fn paragraphs(lines: &[&str]) -> String {
    let typical = typical_length(lines);
    let mut out = String::new();
    let mut previous: Option<&str> = None;
    for &line in lines {
        if line.is_empty() {
            if previous.is_some() {
                out.push('\n');
            }
            previous = None;
            continue;
        }
        match previous {
            Some(before) if continues(before, line, typical) => join(&mut out, line),
            Some(_) => {
                out.push('\n');
                out.push_str(line);
            }
            None => {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(line);
            }
        }
        previous = Some(line);
    }
    out
}

/// The length of a full line of the page: the median of its longer lines (in display columns,
/// a CJK character counting two).
fn typical_length(lines: &[&str]) -> usize {
    let mut lengths: Vec<usize> = lines
        .iter()
        .map(|line| columns(line))
        .filter(|&n| n > 0)
        .collect();
    lengths.sort_unstable();
    lengths.get(lengths.len() * 3 / 4).copied().unwrap_or(0)
}

fn columns(line: &str) -> usize {
    line.chars()
        .map(|c| if is_japanese_char(c) { 2 } else { 1 })
        .sum()
}

/// Whether `next` goes on the paragraph that `line` is in: `line` runs to the page's full width
/// and ends no sentence, `next` starts no list item, and in Latin script `next` reads as the
/// rest of a sentence (a lower-case word, or after a comma or a hyphen) rather than a heading
/// or a new one. A Japanese line goes on whatever its width when `next` starts with what no
/// line may start with ([`NO_LINE_STARTS_WITH`]).
fn continues(line: &str, next: &str, typical: usize) -> bool {
    let last = line.chars().next_back().unwrap_or(' ');
    let first = next.chars().next().unwrap_or(' ');
    if is_japanese_char(last) && NO_LINE_STARTS_WITH.contains(first) {
        return true;
    }
    let ends_sentence = line.ends_with(['。', '．', '！', '？', '.', '!', '?', ':', '：']);
    let full_width = columns(line) * 10 >= typical * 6;
    let japanese = is_japanese_char(last) || is_japanese_char(first);
    let reads_on = japanese || first.is_lowercase() || line.ends_with([',', ';', '-', '、']);
    !ends_sentence && full_width && reads_on && !starts_item(next)
}

fn starts_item(line: &str) -> bool {
    let first = line.chars().next().unwrap_or(' ');
    if matches!(
        first,
        '•' | '・' | '●' | '○' | '■' | '□' | '◆' | '※' | '-' | '*' | '–'
    ) || ('①'..='⑳').contains(&first)
    {
        return true;
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && line[digits..].starts_with(['.', ')', '．', '）'])
        || line.starts_with(['(', '（']) && line.chars().nth(1).is_some_and(|c| c.is_ascii_digit())
}

/// Characters Japanese typesetting keeps from the start of a line (行頭禁則): punctuation,
/// closing brackets, small kana and the prolonged sound mark. A line starting with one is the
/// rest of the line before it, broken where a narrow column ran out (`プレフ` / `ィックス`).
const NO_LINE_STARTS_WITH: &str =
    "、。，．・：；？！ー）」』】〕〉》ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ々ゝゞヽヾ";

/// Appends `next` to the paragraph: nothing between Japanese characters, a hyphen that split
/// an English word removed, a space otherwise.
fn join(out: &mut String, next: &str) {
    let last = out.chars().next_back().unwrap_or(' ');
    let first = next.chars().next().unwrap_or(' ');
    let before_hyphen = out.chars().rev().nth(1).unwrap_or(' ');
    let japanese = is_japanese_char(first) || NO_LINE_STARTS_WITH.contains(first);
    if last == '-' && before_hyphen.is_alphabetic() && first.is_lowercase() {
        out.pop();
    } else if !(is_japanese_char(last) && japanese) {
        out.push(' ');
    }
    out.push_str(next);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_japanese_line_broken_in_a_narrow_cell_joins_where_no_line_may_start() {
        let long = "長い説明の行がここにあって表の幅いっぱいまで続きます。";
        let mut page = format!(
            "{long}\n{long}\n{long}\nタイトルにプレフ\nィックスを入れる\nカバ\nー可能\n次の項目"
        );
        reflow(&mut [&mut page]);
        assert_eq!(
            page,
            format!(
                "{long}\n{long}\n{long}\nタイトルにプレフィックスを入れる\nカバー可能\n次の項目"
            )
        );
    }

    #[test]
    fn lines_join_into_paragraphs_in_japanese_and_english() {
        let mut page = "本プロジェクトは複数の部署が並行し\nて実施する。\n次の段落です。\n\n\
             Expenses are reim-\nbursed within thirty days of the\nclaim being approved.\n\
             Short heading\n• First item of a list here\n• Second"
            .to_string();
        reflow(&mut [&mut page]);
        assert_eq!(
            page,
            "本プロジェクトは複数の部署が並行して実施する。\n次の段落です。\n\
             Expenses are reimbursed within thirty days of the claim being approved.\n\
             Short heading\n• First item of a list here\n• Second"
        );
    }

    #[test]
    fn a_blank_line_after_every_line_is_no_paragraph_break() {
        let mut page = "すべての重大インシデントに対し、私たちはポストモーテムを行います。他\n\n\
             者を責めることなく、なにがうまくいかなかったのかを正確に把握できる詳細な\n\n\
             説明を設けます。\n\nオーナーの決定\n\n"
            .to_string();
        reflow(&mut [&mut page]);
        assert_eq!(
            page,
            "すべての重大インシデントに対し、私たちはポストモーテムを行います。他\
             者を責めることなく、なにがうまくいかなかったのかを正確に把握できる詳細な\
             説明を設けます。\nオーナーの決定"
        );
        let mut spaced =
            "First paragraph.\n\nSecond paragraph starts here and\ngoes on.".to_string();
        reflow(&mut [&mut spaced]);
        assert_eq!(
            spaced, "First paragraph.\nSecond paragraph starts here and goes on.",
            "a page that breaks lines without blank ones keeps its blank lines as paragraph ends"
        );
    }

    #[test]
    fn running_headers_footers_and_page_numbers_are_dropped() {
        let bodies = [
            "Leave.",
            "Travel.",
            "Expenses are paid monthly.",
            "Security.",
        ];
        let mut pages: Vec<String> = (1..=4)
            .map(|n| {
                let body = bodies[n - 1];
                format!("ACME Handbook 2025\n{body}\n- {n} -\nConfidential · Page {n} of 4")
            })
            .collect();
        reflow(&mut pages.iter_mut().collect::<Vec<_>>());
        assert_eq!(pages[2], "Expenses are paid monthly.");
    }

    #[test]
    fn letter_spaced_runs_close_up() {
        assert_eq!(
            unspaced("掛金の額は、原則5 , 0 0 0 円 とする。"),
            "掛金の額は、原則5,000円 とする。"
        );
        assert_eq!(
            unspaced("Plan A or B costs $5 a month"),
            "Plan A or B costs $5 a month"
        );
    }

    #[test]
    fn page_numbers_in_their_usual_shapes() {
        for line in [
            "12",
            "- 12 -",
            "12 / 40",
            "Page 12",
            "page 3 of 40",
            "p. 7",
            "12ページ",
        ] {
            assert!(is_page_number(line), "{line}");
        }
        for line in ["2025年4月1日", "Section 12 applies", "12 days", ""] {
            assert!(!is_page_number(line), "{line}");
        }
    }
}
