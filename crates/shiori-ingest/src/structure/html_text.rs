//! Which HTML elements break lines (the HTML loader's parser reads whole pages by them), and the
//! text of an HTML fragment inside Markdown (`<details>`, `<br>`, MDX components, `<table>`):
//! tags and comments removed, block elements turned into line breaks, the common entities
//! decoded, and each table row one line that carries its header, as an HTML page's are.

use super::rows::html_table_lines;

/// Elements that start a new paragraph; a blank line keeps them apart for the chunkers.
pub(crate) const PARAGRAPHS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "details",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "ul",
];

/// Elements that only start a new line.
pub(crate) const LINES: &[&str] = &["caption", "dd", "dt", "li", "tr"];

/// `html` as text; a `<` that opens no tag (`a < b`) is kept.
pub(crate) fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        if let Some(comment) = tail.strip_prefix("<!--") {
            rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
            continue;
        }
        match tag_name(tail) {
            Some(name) => {
                let end = tail.find('>').map_or(tail.len(), |end| end + 1);
                let name = name.to_ascii_lowercase();
                let block = name == "br"
                    || PARAGRAPHS.contains(&name.as_str())
                    || LINES.contains(&name.as_str());
                if block && !out.ends_with('\n') {
                    out.push('\n');
                }
                rest = &tail[end..];
            }
            None => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    decode_entities(&out)
}

/// A part of an HTML fragment: text, or a table as its lines ([`html_table_lines`]).
#[derive(Debug, PartialEq)]
pub(crate) enum FragmentPart {
    Text(String),
    Table(String),
}

/// An HTML fragment's text and tables, in order: each `<table>…</table>` read as rows, the rest
/// as [`strip_tags`] reads it.
pub(crate) fn fragment_parts(html: &str) -> Vec<FragmentPart> {
    let mut parts = Vec::new();
    let mut rest = html;
    while let Some(start) = find_tag(rest, "<table") {
        let table = &rest[start..];
        let end = find_tag(table, "</table").map_or(table.len(), |close| {
            table[close..]
                .find('>')
                .map_or(table.len(), |end| close + end + 1)
        });
        parts.push(FragmentPart::Text(strip_tags(&rest[..start])));
        let (rows, headed) = table_rows(&table[..end]);
        parts.push(FragmentPart::Table(html_table_lines(&rows, headed)));
        rest = &table[end..];
    }
    parts.push(FragmentPart::Text(strip_tags(rest)));
    parts
}

/// Where `opening` (`<table`, lower-case) starts a tag in `html`, in any case.
fn find_tag(html: &str, opening: &str) -> Option<usize> {
    html.char_indices().map(|(at, _)| at).find(|&at| {
        html[at..]
            .get(..opening.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(opening))
            && tag_name(&html[at..]).is_some()
    })
}

/// A table's rows of cell texts, and whether a `<th>` names its columns (or rows). A cell ends
/// at its closing tag, or where the next cell or row begins, as HTML lets it.
fn table_rows(table: &str) -> (Vec<Vec<String>>, bool) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut cell: Option<String> = None;
    let mut headed = false;
    let mut rest = table;
    while let Some(open) = rest.find('<') {
        let (text, tail) = rest.split_at(open);
        push_to(&mut cell, text);
        let Some(name) = tag_name(tail).map(str::to_ascii_lowercase) else {
            push_to(&mut cell, "<");
            rest = &tail[1..];
            continue;
        };
        let end = tail.find('>').map_or(tail.len(), |end| end + 1);
        rest = &tail[end..];
        if !matches!(name.as_str(), "tr" | "td" | "th" | "table") {
            push_to(&mut cell, &tail[..end]);
            continue;
        }
        close_cell(&mut rows, &mut cell);
        if tail.starts_with("</") {
            continue;
        }
        match name.as_str() {
            "tr" => rows.push(Vec::new()),
            "td" | "th" => {
                headed |= name == "th";
                cell = Some(String::new());
            }
            _ => {}
        }
    }
    push_to(&mut cell, rest);
    close_cell(&mut rows, &mut cell);
    rows.retain(|row| !row.is_empty());
    (rows, headed)
}

/// `text` added to the cell being read, if one is.
fn push_to(cell: &mut Option<String>, text: &str) {
    if let Some(cell) = cell {
        cell.push_str(text);
    }
}

/// The cell being read, if one is, as the last cell of the last row (its text; the rows'
/// lines put it on one line).
fn close_cell(rows: &mut Vec<Vec<String>>, cell: &mut Option<String>) {
    let Some(html) = cell.take() else {
        return;
    };
    let text = strip_tags(&html);
    match rows.last_mut() {
        Some(row) => row.push(text),
        None => rows.push(vec![text]),
    }
}

/// The element name of a tag starting `text` (`<a href>`, `</div>`, `<Tabs />`), if it is one
/// and it closes.
fn tag_name(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('<')?;
    let inner = inner.strip_prefix('/').unwrap_or(inner);
    let length = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == ':'))
        .unwrap_or(inner.len());
    let name = &inner[..length];
    let starts_with_letter = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    (starts_with_letter && text.contains('>')).then_some(name)
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    [
        ("&nbsp;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&apos;", "'"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(text.to_string(), |text, (entity, plain)| {
        text.replace(entity, plain)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_comments_go_text_and_blocks_stay() {
        assert_eq!(
            strip_tags(
                "<details><summary>Why?</summary><!-- x\ny -->Because &amp; <b>so</b>.<br/>Done"
            ),
            "\nWhy?\nBecause & so.\nDone"
        );
        assert_eq!(strip_tags("<Tabs items={['a']} />after"), "after");
        assert_eq!(strip_tags("1 < 2 and 3 <4"), "1 < 2 and 3 <4");
    }

    #[test]
    fn a_table_in_a_fragment_is_read_as_rows_under_its_header() {
        let fragment =
            "Before\n<TABLE>\n  <tr>\n    <td>0.5年</td>\n    <td>1.5年</td><td>2.5年</td>\n\
                        </tr>\n<tr><td>10日<td><b>11</b>日<td>12日</tr>\n</table>\nAfter";
        assert_eq!(
            fragment_parts(fragment),
            [
                FragmentPart::Text("Before\n".to_string()),
                FragmentPart::Table("0.5年: 10日 · 1.5年: 11日 · 2.5年: 12日".to_string()),
                FragmentPart::Text("\nAfter".to_string()),
            ]
        );
        let pairs = "<table><tr><td>Point of contact</td><td>Dave Lamb</td></tr>\
                     <tr><td>Floor</td><td>55</td></tr></table>";
        assert_eq!(
            fragment_parts(pairs)[1],
            FragmentPart::Table("Point of contact: Dave Lamb\nFloor: 55".to_string())
        );
        assert_eq!(
            fragment_parts("<p>no table</p>"),
            [FragmentPart::Text("\nno table\n".to_string())]
        );
    }
}
