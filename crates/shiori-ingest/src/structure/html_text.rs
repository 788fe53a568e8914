//! Which HTML elements break lines (the HTML loader's parser reads whole pages by them), and the
//! text of an HTML fragment inside Markdown (`<details>`, `<br>`, MDX components): tags and
//! comments removed, block elements turned into line breaks, the common entities decoded.

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
}
