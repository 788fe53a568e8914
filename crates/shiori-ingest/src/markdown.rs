//! ATX header scanning, shared by the Markdown loader (for the title) and chunker (for sections).

/// One `#`-style header line outside code fences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header<'a> {
    /// Byte offset where the header line starts.
    pub start: usize,
    /// Byte offset just past the header line (and its newline).
    pub end: usize,
    pub level: usize,
    pub title: &'a str,
}

/// Every ATX header (`#` to `######`) in `text`, skipping lines inside ``` or ~~~ fences, where
/// `#` is usually a shell prompt or a comment.
pub(crate) fn headers(text: &str) -> Vec<Header<'_>> {
    let mut found = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let end = start + line.len();
        let trimmed = line.trim();
        match (fence, fence_marker(trimmed)) {
            (None, Some(marker)) => fence = Some(marker),
            (Some((open, width)), Some((close, len))) if open == close && len >= width => {
                fence = None;
            }
            (None, None) => {
                if let Some((level, title)) = atx_header(trimmed) {
                    found.push(Header {
                        start,
                        end,
                        level,
                        title,
                    });
                }
            }
            (Some(_), _) => {}
        }
        start = end;
    }
    found
}

/// The fence character and run length when `line` opens or closes a code fence.
pub(crate) fn fence_marker(line: &str) -> Option<(char, usize)> {
    let first = line.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = line.chars().take_while(|&c| c == first).count();
    (len >= 3).then_some((first, len))
}

fn atx_header(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    let rest = &line[level..];
    // `#hashtag` is not a header: CommonMark wants a space (or nothing) after the hashes.
    if !(1..=6).contains(&level) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let rest = rest.trim();
    let unclosed = rest.trim_end_matches('#');
    // A closing run of `#` counts only after a space, so `# C#` keeps its `#`.
    let title = if unclosed.is_empty() || unclosed.ends_with([' ', '\t']) {
        unclosed.trim_end()
    } else {
        rest
    };
    Some((level, title))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn titles(text: &str) -> Vec<(usize, &str)> {
        headers(text).iter().map(|h| (h.level, h.title)).collect()
    }

    #[test]
    fn finds_atx_headers_with_their_levels() {
        let text =
            "# Guide\nintro\n## Install ##\n###### Deep\n####### too deep\n#hashtag\n# C#\n#\n";
        assert_eq!(
            titles(text),
            [
                (1, "Guide"),
                (2, "Install"),
                (6, "Deep"),
                (1, "C#"),
                (1, "")
            ]
        );
    }

    #[test]
    fn ignores_headers_inside_code_fences() {
        let text = "# A\n```sh\n# not a header\n~~~\n# still code\n```\n## B\n~~~~\n# code\n~~~~\n";
        assert_eq!(titles(text), [(1, "A"), (2, "B")]);
    }

    #[test]
    fn reports_line_offsets() {
        let text = "intro\n# A\nbody";
        let found = headers(text);
        assert_eq!(&text[found[0].start..found[0].end], "# A\n");
    }
}
