use super::{recursive, Piece};
use crate::markdown::headers;

/// One piece per header section, the header line on top and the path of headers above it in
/// `header_path`; sections longer than `max` chars are split further by the recursive chunker.
/// A header with nothing under it but subsections makes no piece of its own: its title lives
/// on in its subsections' paths.
pub(super) fn split(text: &str, max: usize) -> Vec<Piece> {
    let headers = headers(text);
    let mut pieces = Vec::new();
    let preamble_end = headers.first().map_or(text.len(), |header| header.start);
    push_section(&mut pieces, &text[..preamble_end], None, max);

    let mut path: Vec<(usize, &str)> = Vec::new();
    for (index, header) in headers.iter().enumerate() {
        while path.last().is_some_and(|&(level, _)| level >= header.level) {
            path.pop();
        }
        path.push((header.level, header.title));
        let section_end = headers.get(index + 1).map_or(text.len(), |next| next.start);
        if text[header.end..section_end].trim().is_empty() {
            continue;
        }
        let titles: Vec<&str> = path
            .iter()
            .map(|&(_, title)| title)
            .filter(|t| !t.is_empty())
            .collect();
        let header_path = (!titles.is_empty()).then(|| titles.join(" > "));
        push_section(
            &mut pieces,
            &text[header.start..section_end],
            header_path,
            max,
        );
    }
    // A document of nothing but headers still deserves to be found.
    if pieces.is_empty() {
        push_section(&mut pieces, text, None, max);
    }
    pieces
}

fn push_section(pieces: &mut Vec<Piece>, section: &str, header_path: Option<String>, max: usize) {
    pieces.extend(
        recursive::split(section, max)
            .into_iter()
            .map(|text| Piece {
                text,
                header_path: header_path.clone(),
            }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(pieces: &[Piece]) -> Vec<(Option<&str>, &str)> {
        pieces
            .iter()
            .map(|p| (p.header_path.as_deref(), p.text.as_str()))
            .collect()
    }

    #[test]
    fn sections_carry_their_header_path() {
        let text = "Intro text.\n# Guide\n## Install\n### Linux\nRun apt.\n### macOS\nRun brew.\n## Use\n```\n# not a header\n```\n# FAQ\nAsk.";
        let pieces = split(text, 1000);
        assert_eq!(
            flat(&pieces),
            [
                (None, "Intro text."),
                (Some("Guide > Install > Linux"), "### Linux\nRun apt."),
                (Some("Guide > Install > macOS"), "### macOS\nRun brew."),
                (Some("Guide > Use"), "## Use\n```\n# not a header\n```"),
                (Some("FAQ"), "# FAQ\nAsk."),
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
                (Some("Notes"), "# Notes\nFirst sentence here."),
                (Some("Notes"), "Second sentence here."),
                (Some("Notes"), "Third paragraph."),
            ]
        );
    }

    #[test]
    fn headers_alone_still_make_a_piece() {
        let pieces = split("# Title\n## Empty", 100);
        assert_eq!(flat(&pieces), [(None, "# Title\n## Empty")]);
    }
}
