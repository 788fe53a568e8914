use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// NFKC, control characters dropped, runs of spaces and tabs collapsed to one space, line ends
/// trimmed, at most one blank line between paragraphs, and no leading or trailing whitespace.
pub fn normalize(text: &str) -> String {
    // Most input is already NFKC (ASCII always is); skipping the normaliser then saves its
    // per-character buffering, which dominates the cost of this function.
    if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        squeeze(text.chars(), text.len())
    } else {
        squeeze(text.nfkc(), text.len())
    }
}

/// One pass that defers whitespace until the next visible character, so trailing spaces and
/// surplus newlines are never written and need no second pass to trim.
fn squeeze(chars: impl Iterator<Item = char>, capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    let mut newlines = 0usize;
    let mut space = false;
    let mut after_cr = false;
    for c in chars {
        let was_cr = after_cr;
        after_cr = c == '\r';
        match c {
            // `\r\n` is one line break, a lone `\r` (old Mac files) is one too.
            '\n' if was_cr => {}
            '\n' | '\r' | '\u{2028}' | '\u{2029}' => {
                newlines += 1;
                space = false;
            }
            ' ' | '\t' => space = true,
            '\u{feff}' => {}
            c if c.is_control() => {}
            c => {
                if !out.is_empty() {
                    if newlines > 0 {
                        out.push_str(if newlines == 1 { "\n" } else { "\n\n" });
                    } else if space {
                        out.push(' ');
                    }
                }
                newlines = 0;
                space = false;
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfkc_folds_full_and_half_width_forms() {
        assert_eq!(normalize("ＡＢＣ１２３"), "ABC123");
        assert_eq!(normalize("ｶﾀｶﾅ ｶﾞｷﾞ"), "カタカナ ガギ");
        assert_eq!(normalize("東京\u{3000}タワー"), "東京 タワー");
    }

    #[test]
    fn collapses_spaces_and_trims_lines() {
        assert_eq!(normalize("  a \t  b  \n   c\t\n"), "a b\nc");
    }

    #[test]
    fn keeps_paragraph_breaks_but_no_more() {
        assert_eq!(normalize("a\n\n\n\n b\n \n\t\nc\nd"), "a\n\nb\n\nc\nd");
        assert_eq!(normalize("\n\n\na\n\n\n"), "a");
    }

    #[test]
    fn drops_control_characters_and_unifies_line_ends() {
        assert_eq!(normalize("a\u{7}b\u{0}c\u{feff}"), "abc");
        assert_eq!(
            normalize("one\r\ntwo\rthree\r\n\r\nfour"),
            "one\ntwo\nthree\n\nfour"
        );
    }

    #[test]
    fn leading_spaces_on_a_line_do_not_leak_into_the_previous_one() {
        assert_eq!(normalize("a\n   b"), "a\nb");
        assert_eq!(normalize("   "), "");
        assert_eq!(normalize(""), "");
    }
}
