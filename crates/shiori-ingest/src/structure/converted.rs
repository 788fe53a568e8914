//! The text of a page that another program converted from a site's Markdown sources (an HTML
//! export, a Word file, a PDF printed from the browser) keeps the syntax the converter did not
//! read as text: admonition markers (`!!! info "Title"`, `::: tip Title` … `:::`), links whose
//! target holds a template tag (`[Self Service]({% page "/tools/#self-service" %})`), the tags
//! themselves, and the page's front matter shown as a block above its text. Read here as the
//! site shows them: the titles, the link text, a tag's name, and no front matter.

use crate::structure::templating::{admonition_in_text, without_spans};

/// `text` with the syntax of its sources read as the site shows it.
pub(crate) fn readable(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|line| match admonition_in_text(line) {
            Some(marker) => marker,
            None => without_container_markers(line),
        })
        .collect();
    without_spans(&links_as_text(&lines.join("\n")))
}

/// The kinds a container directive names after its `:::` (Docusaurus, VitePress, VuePress).
const CONTAINER_KINDS: [&str; 12] = [
    "tip",
    "info",
    "note",
    "warning",
    "danger",
    "caution",
    "important",
    "details",
    "success",
    "error",
    "abstract",
    "example",
];

/// `line` without the `:::` of a container directive, nor the kind that follows one (`::: tip
/// Title` is `Title`; a closing `:::` is nothing). Only a `:::` that starts a word is one:
/// `]:::server` in a diagram's source is a class name.
fn without_container_markers(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    let mut marked = false;
    while let Some(at) = rest.find(":::") {
        let starts_word = rest[..at]
            .chars()
            .next_back()
            .or_else(|| out.chars().next_back())
            .is_none_or(char::is_whitespace);
        let after = rest[at..].trim_start_matches(':');
        let spaced = after.starts_with(char::is_whitespace);
        let after = after.trim_start();
        let kind_end = after
            .find(|c: char| c.is_whitespace() || c == '[' || c == '{')
            .unwrap_or(after.len());
        let kind = &after[..kind_end];
        let known = CONTAINER_KINDS.contains(&kind.to_ascii_lowercase().as_str());
        if !starts_word || !(known || spaced || after.is_empty()) {
            out.push_str(&rest[..at + 3]);
            rest = &rest[at + 3..];
            continue;
        }
        marked = true;
        out.push_str(rest[..at].trim_end());
        // A marker inside a line (where a PDF's lines were joined) parts what it parted.
        if !out.is_empty() {
            out.push('\n');
        }
        rest = if known {
            let title = after[kind_end..].trim_start();
            match title
                .strip_prefix('[')
                .and_then(|inner| inner.split_once(']'))
            {
                Some((bracketed, after_title)) => {
                    out.push_str(bracketed);
                    after_title
                }
                None => title,
            }
        } else {
            after
        };
    }
    out.push_str(rest);
    if marked {
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
    }
    out
}

/// `text` with each Markdown link (`[text](target)`, an image's `![alt](source)`) as its text.
/// A target may run over one line break, where the converter wrapped it.
fn links_as_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        match link_at(&rest[open..]) {
            Some((shown, length)) => {
                if out.ends_with('!') {
                    out.pop();
                }
                out.push_str(shown);
                rest = &rest[open + length..];
            }
            None => {
                out.push('[');
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text of the link `text` opens with, and the link's length in bytes. The text is on one
/// line and the target on at most two, so a `[` that opens no link is given up within them.
fn link_at(text: &str) -> Option<(&str, usize)> {
    let line_end = text.find('\n').unwrap_or(text.len());
    let close = text[..line_end].find(']')?;
    let shown = &text[1..close];
    if shown.contains('[') || !text[close + 1..].starts_with('(') {
        return None;
    }
    let target_start = close + 2;
    let mut depth = 1;
    let mut breaks = 0;
    for (offset, c) in text[target_start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '\n' if breaks == 1 => return None,
            '\n' => breaks += 1,
            _ => {}
        }
        if depth == 0 {
            return Some((shown, target_start + offset + 1));
        }
    }
    None
}

/// Keys a page's front matter holds; a block that sets `title` and one more of them is the
/// front matter, printed at the head of a converted page.
const FRONT_MATTER_KEYS: [&str; 12] = [
    "title",
    "layout",
    "permalink",
    "redirect_from",
    "tags",
    "categories",
    "sidenav",
    "weight",
    "aliases",
    "date",
    "description",
    "questions",
];

/// `text` without the front matter a converter printed as a block at the head of the page
/// (after its title, as a heading or as the line or two a browser prints above the page): lines
/// of `key: value` and `- item`, one of them the `title`.
pub(crate) fn without_front_matter_block(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|line| yaml_key(line).is_some()) else {
        return text.to_string();
    };
    let block = lines[start..]
        .iter()
        .take_while(|line| yaml_key(line).is_some() || is_yaml_item(line))
        .count();
    let keys = front_matter_keys(&lines[start..start + block]);
    let title = lines[start..start + block]
        .iter()
        .find_map(|line| line.trim_start().strip_prefix("title:"))
        .map(str::trim);
    let headed = lines[..start]
        .iter()
        .all(|line| is_title_line(line, title.unwrap_or_default()));
    if !(headed && title.is_some() && keys.len() >= 2) {
        return text.to_string();
    }
    // The blank line that parted the block from the text goes with it.
    let end = start + block;
    let end = end + usize::from(lines.get(end).is_some_and(|line| line.trim().is_empty()));
    lines[..start]
        .iter()
        .chain(&lines[end..])
        .copied()
        .collect::<Vec<&str>>()
        .join("\n")
}

/// The distinct [`FRONT_MATTER_KEYS`] that `lines` set, wherever a key starts a word: a PDF's
/// lines run on into the next key (`title: Code review permalink: /code-review/`).
fn front_matter_keys<'t>(lines: &[&'t str]) -> Vec<&'t str> {
    let mut keys: Vec<&str> = lines
        .iter()
        .flat_map(|line| line.split_whitespace())
        .filter_map(|word| word.strip_suffix(':'))
        .filter(|key| FRONT_MATTER_KEYS.contains(key))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Whether `line`, above a block of front matter, is blank or the page's title: a heading, or
/// the title the block sets (a PDF printed from the browser shows it before the block, and its
/// lines may run on into the next key: `title: Code review permalink: /code-review/`).
fn is_title_line(line: &str, title: &str) -> bool {
    let line = line.trim();
    line.is_empty() || line.starts_with('#') || title.starts_with(line)
}

/// The key of a `key: value` (or `key:`) line whose key is a name a program reads, not words.
fn yaml_key(line: &str) -> Option<&str> {
    let (key, value) = line.trim_start().split_once(':')?;
    let is_name = !key.is_empty()
        && key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (is_name && (value.is_empty() || value.starts_with(' '))).then_some(key)
}

/// A YAML list item under a key (`- /zoom/`, `- text: Numbers`).
fn is_yaml_item(line: &str) -> bool {
    line.trim_start().starts_with("- ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_whose_target_holds_a_template_tag_reads_as_its_text() {
        let page = "Install Zoom through [Self Service]({% page\n“/getting-started/#self-service” %}).\n\
                    See ![the chart](a.png), [RFC (draft)](https://x.test/a_(b)) and a[0] or [x] (y).";
        assert_eq!(
            readable(page),
            "Install Zoom through Self Service.\nSee the chart, RFC (draft) and a[0] or [x] (y)."
        );
        let unclosed = "[a\nb](c) and [d](e\nf\ng)";
        assert_eq!(readable(unclosed), unclosed, "no link spans lines so");
    }

    #[test]
    fn template_tags_go_and_a_tag_naming_something_shows_the_name() {
        assert_eq!(
            readable("Ask in {% slack_channel “dc” %} or {{ site.email }}."),
            "Ask in dc or ."
        );
    }

    #[test]
    fn container_directives_keep_their_titles_and_bodies() {
        let page = "::: tip @channel を使って良い場合\n障害時は使って良い。\n:::\n\
                    推奨される。 ::: warning 注意 本文。\nA[x]:::server --> B:::ok\n:::details[More]";
        assert_eq!(
            readable(page),
            "@channel を使って良い場合\n障害時は使って良い。\n\n推奨される。\n注意 本文。\n\
             A[x]:::server --> B:::ok\nMore"
        );
        assert_eq!(readable("!!! note “Read” Then this."), "Read\nThen this.");
        assert_eq!(
            readable("Ask in "),
            "Ask in ",
            "a piece of a line keeps its spaces"
        );
        assert_eq!(readable("class :::server"), "class :::server");
    }

    #[test]
    fn front_matter_printed_at_the_head_of_a_page_goes() {
        let page =
            "# Zoom\ntitle: Zoom\nquestions:\n- webmeetings@gsa.gov\nredirect_from:\n  - /zoom/\n\
                    GSA offers Zoom for Government.\nNote: this is text.";
        assert_eq!(
            without_front_matter_block(page),
            "# Zoom\nGSA offers Zoom for Government.\nNote: this is text."
        );
        let prose = "# Plans\nPlan: Business\ntitle: Pro\nPrices change.";
        assert_eq!(
            without_front_matter_block(prose),
            prose,
            "one key of front matter"
        );
        let one_key = "# Zoom\ntitle: Zoom\nText.";
        assert_eq!(without_front_matter_block(one_key), one_key);
    }

    #[test]
    fn front_matter_printed_under_the_pages_title_goes_and_a_block_after_text_stays() {
        let printed = "Code review\nCode review\ntitle: Code review permalink: /code-review/ \
                       redirect_from:\n- engineering/code-review/ sidenav: true\nsubnav:\n\
                       - text: Why reviews?\nhref: \"#why-reviews\"\nA friendly guide.";
        assert_eq!(
            without_front_matter_block(printed),
            "Code review\nCode review\nA friendly guide."
        );
        let after_text = "Sample settings\ntitle: Order API\nlayout: page\nText.";
        assert_eq!(
            without_front_matter_block(after_text),
            after_text,
            "a line that is not the title comes before the keys: an example, not the page's own"
        );
    }
}
