use super::{recursive, Piece};
use crate::markdown::{fence_marker, headers};

/// One piece per heading's section, carrying the headings above it (its own last) and not the
/// heading lines themselves, which are context for the section rather than its text; sections
/// longer than `max` chars are split further by the recursive chunker. A heading with nothing
/// under it but subsections makes no piece of its own: its title lives on in its subsections'
/// paths. Code fences are dropped from the text.
pub(super) fn split(text: &str, max: usize) -> Vec<Piece> {
    let headers = headers(text);
    let mut pieces = Vec::new();
    let preamble_end = headers.first().map_or(text.len(), |header| header.start);
    push_section(&mut pieces, &text[..preamble_end], &[], max);

    let mut path: Vec<(usize, &str)> = Vec::new();
    for (index, header) in headers.iter().enumerate() {
        while path.last().is_some_and(|&(level, _)| level >= header.level) {
            path.pop();
        }
        path.push((header.level, header.title));
        let section_end = headers.get(index + 1).map_or(text.len(), |next| next.start);
        let titles: Vec<String> = path
            .iter()
            .map(|&(_, title)| title.to_owned())
            .filter(|t| !t.is_empty())
            .collect();
        push_section(&mut pieces, &text[header.end..section_end], &titles, max);
    }
    // A document of nothing but headings still deserves to be found: they are its text.
    if pieces.is_empty() {
        let titles: Vec<&str> = headers.iter().map(|h| h.title).collect();
        push_section(&mut pieces, &titles.join("\n"), &[], max);
    }
    pieces
}

fn push_section(pieces: &mut Vec<Piece>, section: &str, headings: &[String], max: usize) {
    let prose: Vec<&str> = section
        .lines()
        .filter(|line| fence_marker(line.trim()).is_none())
        .collect();
    pieces.extend(
        recursive::split(&prose.join("\n"), max)
            .into_iter()
            .map(|text| Piece {
                text,
                headings: headings.to_vec(),
            }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(pieces: &[Piece]) -> Vec<(String, &str)> {
        pieces
            .iter()
            .map(|p| (p.headings.join(" > "), p.text.as_str()))
            .collect()
    }

    #[test]
    fn sections_carry_their_heading_path_not_their_heading() {
        let text = "Intro text.\n# Guide\n## Install\n### Linux\nRun apt.\n### macOS\nRun brew.\n## Use\n```\n# not a header\n```\n# FAQ\nAsk.";
        let pieces = split(text, 1000);
        assert_eq!(
            flat(&pieces),
            [
                (String::new(), "Intro text."),
                ("Guide > Install > Linux".into(), "Run apt."),
                ("Guide > Install > macOS".into(), "Run brew."),
                ("Guide > Use".into(), "# not a header"),
                ("FAQ".into(), "Ask."),
            ]
        );
    }

    #[test]
    fn long_sections_are_split_further_with_the_same_path() {
        let text = "# Notes\nFirst sentence here. Second sentence here.\n\nThird paragraph.";
        let pieces = split(text, 30);
        assert_eq!(
            flat(&pieces),
            [
                ("Notes".into(), "First sentence here."),
                ("Notes".into(), "Second sentence here."),
                ("Notes".into(), "Third paragraph."),
            ]
        );
    }

    #[test]
    fn headings_alone_still_make_a_piece() {
        let pieces = split("# Title\n## Empty", 100);
        assert_eq!(flat(&pieces), [(String::new(), "Title\nEmpty")]);
    }
}
