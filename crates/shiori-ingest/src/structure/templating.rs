//! Static-site templating a reader never sees: Hugo shortcodes (`{{< … >}}`, `{{% … %}}`),
//! Jekyll's Liquid tags and output (`{% … %}`, `{{ … }}`), admonition markers (MkDocs
//! `!!! note "Title"`, Docusaurus `:::tip Title` … `:::`), whose titles are kept, Kramdown's
//! attribute lists and extensions (`{: .alert}`, `{::options … /}`, a `- TOC` / `{:toc}`
//! pair), tables-of-contents markers (`[[_TOC_]]`, `[TOC]`) and headings' attributes
//! (`## Overview {#overview}`). Code fences are left as they are: templating syntax inside
//! them is what the page documents.

use crate::markdown::fence_marker;

/// `text` with its templating removed, line structure kept.
pub(crate) fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prose = String::new();
    let mut fence: Option<(char, usize)> = None;
    let mut in_admonition = false;
    for line in text.split_inclusive('\n') {
        let marker = fence_marker(line.trim());
        match (fence, marker) {
            (None, Some(opened)) => {
                flush(&mut prose, &mut out);
                fence = Some(opened);
                out.push_str(line);
                continue;
            }
            (Some((open, width)), Some((close, len))) if open == close && len >= width => {
                fence = None;
                out.push_str(line);
                continue;
            }
            (Some(_), _) => {
                out.push_str(line);
                continue;
            }
            (None, None) => {}
        }
        let body = in_admonition.then(|| line.strip_prefix("    ")).flatten();
        in_admonition &= body.is_some() || line.trim().is_empty();
        if let Some(body) = body {
            prose.push_str(body);
        } else if is_layout_marker(line) {
            // `- TOC` above `{:toc}` is the list Kramdown replaces with the page's contents.
            if line.trim().starts_with("{:toc") {
                drop_last_line_if(&mut prose, |last| {
                    matches!(last.trim(), "- TOC" | "* TOC" | "1. TOC" | "+ TOC")
                });
            }
            prose.push('\n');
        } else if let Some(title) = admonition_title(line) {
            in_admonition = line.starts_with("!!!") || line.starts_with("???");
            prose.push_str(&title);
            prose.push('\n');
        } else {
            prose.push_str(&with_emoji(&without_attributes(line)));
        }
    }
    flush(&mut prose, &mut out);
    out
}

/// Emoji shortcodes whose picture says something (a table's yes or no, a warning); any other
/// shortcode is dropped.
const EMOJI: [(&str, &str); 22] = [
    ("white_check_mark", "✅"),
    ("heavy_check_mark", "✔️"),
    ("ballot_box_with_check", "☑️"),
    ("x", "❌"),
    ("heavy_multiplication_x", "✖️"),
    ("negative_squared_cross_mark", "❎"),
    ("warning", "⚠️"),
    ("no_entry", "⛔"),
    ("no_entry_sign", "🚫"),
    ("exclamation", "❗"),
    ("question", "❓"),
    ("red_circle", "🔴"),
    ("yellow_circle", "🟡"),
    ("green_circle", "🟢"),
    ("large_blue_circle", "🔵"),
    ("information_source", "ℹ️"),
    ("bulb", "💡"),
    ("star", "⭐"),
    ("+1", "👍"),
    ("thumbsup", "👍"),
    ("-1", "👎"),
    ("thumbsdown", "👎"),
];

/// `line` with its emoji shortcodes (`:white_check_mark:`, GitHub's and GitLab's) as the
/// pictures they stand for ([`EMOJI`]), or gone: their names are no words of the text.
fn with_emoji(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find(':') {
        let preceding = rest[..open]
            .chars()
            .next_back()
            .or_else(|| out.chars().next_back());
        let starts = preceding.is_none_or(|c| c.is_whitespace() || "(|".contains(c));
        let name_end = rest[open + 1..]
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || "_+-".contains(c)))
            .map(|at| open + 1 + at);
        let shortcode = name_end.filter(|&end| {
            let Some(after) = rest[end..].strip_prefix(':') else {
                return false;
            };
            let name = &rest[open + 1..end];
            name.chars().any(|c| c.is_ascii_lowercase())
                && after
                    .chars()
                    .next()
                    .is_none_or(|c| c.is_whitespace() || c.is_ascii_punctuation())
        });
        match shortcode.filter(|_| starts) {
            Some(end) => {
                out.push_str(&rest[..open]);
                let name = &rest[open + 1..end];
                if let Some((_, picture)) = EMOJI.iter().find(|(known, _)| *known == name) {
                    out.push_str(picture);
                }
                rest = &rest[end + 1..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A line that shows nothing itself: a table-of-contents marker, or a Kramdown extension or
/// attribute list on its own line: `[[_TOC_]]`, `[TOC]`, `{:toc}`, `{::options parse_block_html="true" /}`,
/// `{: .alert .alert-info}`.
fn is_layout_marker(line: &str) -> bool {
    let trimmed = line.trim();
    matches!(
        trimmed.to_ascii_lowercase().as_str(),
        "[[_toc_]]" | "[[toc]]" | "[toc]" | "[[_toc]]"
    ) || trimmed.starts_with("{:") && trimmed.ends_with('}')
}

/// Removes the last line of `prose` when `unwanted` says so.
fn drop_last_line_if(prose: &mut String, unwanted: impl Fn(&str) -> bool) {
    let body = prose.strip_suffix('\n').unwrap_or(prose);
    let start = body.rfind('\n').map_or(0, |at| at + 1);
    if unwanted(&body[start..]) {
        prose.truncate(start);
    }
}

/// `line` without a trailing attribute block: a heading's `{#overview}` or `{#id .class}`
/// (Hugo, Pandoc, Kramdown), or a Kramdown attribute list ending a paragraph's line (`{: .note}`).
fn without_attributes(line: &str) -> String {
    let (body, ending) = match line.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (line, ""),
    };
    let trimmed = body.trim_end();
    let Some(open) = trimmed.ends_with('}').then(|| trimmed.rfind('{')).flatten() else {
        return line.to_owned();
    };
    let block = &trimmed[open + 1..trimmed.len() - 1];
    let heading = body.trim_start().starts_with('#');
    let attributes = block.starts_with(':') || heading && block.starts_with(['#', '.']);
    if !attributes || block.contains(['{', '}']) || trimmed[..open].ends_with('{') {
        return line.to_owned();
    }
    format!("{}{ending}", trimmed[..open].trim_end())
}

/// Removes the template spans of the prose gathered so far (they may run over lines).
fn flush(prose: &mut String, out: &mut String) {
    out.push_str(&without_spans(prose));
    prose.clear();
}

/// Template delimiters, longest opener first so `{{<` is not read as `{{`.
const SPANS: [(&str, &str); 4] = [("{{<", ">}}"), ("{{%", "%}}"), ("{%", "%}"), ("{{", "}}")];

/// `text` without its template spans; a tag inside a sentence that names something shows the
/// name.
pub(crate) fn without_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let closed = SPANS.iter().find_map(|(open, close)| {
            let inner = tail.strip_prefix(open)?;
            inner
                .find(close)
                .map(|end| (open.len() + end + close.len(), &inner[..end]))
        });
        match closed {
            Some((length, inner)) => {
                // Inside a sentence, a tag that names something shows that name: "DRI:
                // {{< member-by-gitlab "jdoe" >}}", "ask in {% slack_channel "equipment" %}".
                let line_start = out.rfind('\n').map_or(0, |at| at + 1);
                let inline = !out[line_start..].trim().is_empty();
                if let Some(name) = inline.then(|| named_argument(inner)).flatten() {
                    out.push_str(name);
                }
                rest = &tail[length..];
            }
            None => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The first argument of a tag when it is a quoted name rather than a `key="value"` setting:
/// `jdoe` in `member-by-gitlab "jdoe"`.
fn named_argument(tag: &str) -> Option<&str> {
    let (name, argument) = tag.trim().split_once(' ')?;
    let argument = argument.trim_start();
    if name.starts_with('/') || name.contains('=') {
        return None;
    }
    let quote = argument
        .chars()
        .next()
        .filter(|c| ['"', '“', '\''].contains(c))?;
    let closing = if quote == '“' { '”' } else { quote };
    let body = &argument[quote.len_utf8()..];
    let end = body.find(closing)?;
    let named = body[..end].trim();
    (!named.is_empty()).then_some(named)
}

/// A line that opens with an MkDocs admonition marker (`!!! info “Testing matters”`, on a
/// Markdown page's own line, or with its body after it where a converted page keeps it in a
/// paragraph): its title on a line of its own, then the rest. `None` for any other line.
pub(crate) fn admonition_in_text(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    let rest = ["!!!", "???+", "???"]
        .iter()
        .find_map(|marker| trimmed.strip_prefix(marker))?;
    let rest = rest.trim_start();
    let (kind, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let is_kind = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if kind.is_empty() || !kind.chars().all(is_kind) {
        return None;
    }
    let after = after.trim_start();
    let (title, body) = match after.chars().next() {
        Some(quote @ ('"' | '“' | '\'')) => {
            let closing = if quote == '“' { '”' } else { quote };
            let inner = &after[quote.len_utf8()..];
            match inner.find(closing) {
                Some(end) => (&inner[..end], &inner[end + closing.len_utf8()..]),
                None => ("", after),
            }
        }
        _ => ("", after),
    };
    let lines: Vec<&str> = [title.trim(), body.trim()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    Some(lines.join("\n"))
}

/// The title an admonition marker line shows (empty when it has none), or `None` for a line
/// that is not a marker.
fn admonition_title(line: &str) -> Option<String> {
    // MkDocs' marker, read as a converted page's text reads it: on a page's own line the body
    // follows indented below, so what the line holds is the title.
    if let Some(title) = admonition_in_text(line) {
        return Some(title);
    }
    let trimmed = line.trim();
    let rest = trimmed.strip_prefix(":::")?;
    let rest = rest.trim_start_matches(':');
    // `:::note Title`, `:::note[Title]`, or a bare `:::` closing the block.
    let title = match rest.split_once('[') {
        Some((_, bracketed)) => bracketed.trim_end_matches(']'),
        None => rest.split_once(' ').map_or("", |(_, title)| title),
    };
    Some(title.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugo_and_liquid_tags_go_their_content_stays() {
        let page = "{{% panel title=\"Note\" %}}\nPay by the 25th.\n{{% /panel %}}\n\
                    {{< figure src=\"a.png\"\n  caption=\"Chart\" >}}\nSee {{ site.title }} \
                    {% include x.html %}docs.\n";
        assert_eq!(strip(page), "\nPay by the 25th.\n\n\nSee  docs.\n");
    }

    #[test]
    fn code_fences_keep_their_templating() {
        let page = "```\n{{< shortcode >}}\n```\nText {{< x >}}.\n";
        assert_eq!(strip(page), "```\n{{< shortcode >}}\n```\nText .\n");
    }

    #[test]
    fn admonitions_keep_their_titles_and_bodies() {
        let page = "!!! warning \"Before you travel\"\n    Ask your manager.\n\nAfter.\n\
                    :::tip[Save money]\nBook early.\n:::\n";
        assert_eq!(
            strip(page),
            "Before you travel\nAsk your manager.\n\nAfter.\nSave money\nBook early.\n\n"
        );
    }

    #[test]
    fn an_admonition_left_in_a_pages_text_reads_as_its_title_then_its_body() {
        assert_eq!(
            admonition_in_text("!!! info “テストは超重要” 事前にテストされていないアラート。")
                .as_deref(),
            Some("テストは超重要\n事前にテストされていないアラート。")
        );
        assert_eq!(
            admonition_in_text("??? tip \"Ask first\"").as_deref(),
            Some("Ask first")
        );
        assert_eq!(
            admonition_in_text("!!! note Read this.").as_deref(),
            Some("Read this.")
        );
        assert_eq!(admonition_in_text("Wow!!! That was fast."), None);
        assert_eq!(admonition_in_text("!!! “quoted” alone"), None);
    }

    #[test]
    fn kramdown_attributes_tables_of_contents_and_heading_ids_go() {
        let page = "{::options parse_block_html=\"true\" /}\n- TOC\n{:toc .hidden-md}\n[[_TOC_]]\n\
                    ## Overview {#overview}\nTake time off.\n{: .alert .alert-info}\n\
                    ### Steps {#steps .wide}\nAsk first. {: .note}\nKeep {braces} and {#this} here.\n";
        assert_eq!(
            strip(page),
            "\n\n\n## Overview\nTake time off.\n\n### Steps\nAsk first.\nKeep {braces} and {#this} here.\n"
        );
    }

    #[test]
    fn a_tag_inside_a_sentence_shows_the_name_it_is_given() {
        let page = "DRI: {{< member-by-gitlab \"jdoe\" >}}\nAsk in {% slack_channel “equipment” %} now.\n\
                    {{< youtube \"abc\" >}}\nSee {{< figure src=\"a.png\" >}} and {{ site.title }}.\n";
        assert_eq!(
            strip(page),
            "DRI: jdoe\nAsk in equipment now.\n\nSee  and .\n"
        );
    }

    #[test]
    fn emoji_shortcodes_become_their_pictures_or_go() {
        let page = "| Gym | :x: No |\n:warning: Submit receipts. :tada:\nAt 10:30: see std::vec, a:b:c, :Note: and 1:1’s\n";
        assert_eq!(
            strip(page),
            "| Gym | ❌ No |\n⚠️ Submit receipts. \nAt 10:30: see std::vec, a:b:c, :Note: and 1:1’s\n"
        );
    }

    #[test]
    fn a_lone_brace_is_text() {
        assert_eq!(strip("a { b } {{ c"), "a { b } {{ c");
    }
}
