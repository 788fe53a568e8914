/// The writing system a text is mostly in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    Japanese,
    Latin,
}

/// Kana and CJK ideographs (including the iteration mark and the prolonged-sound mark).
pub fn is_japanese_char(c: char) -> bool {
    matches!(c,
        '\u{3005}' | '\u{3007}'            // 々 〇
        | '\u{3040}'..='\u{30FF}'          // hiragana, katakana
        | '\u{31F0}'..='\u{31FF}'          // katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}'          // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'          // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}'          // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}'          // half-width katakana
        | '\u{20000}'..='\u{2FFFF}') // CJK extensions B and later
}

/// Japanese when kana and ideographs make up at least a fifth of the letters: Japanese prose
/// quotes plenty of English names and code, but even a short Japanese sentence has far more than
/// that, while English text essentially never contains kana.
pub fn detect_script(text: &str) -> Script {
    let (mut letters, mut japanese) = (0usize, 0usize);
    for c in text.chars() {
        if is_japanese_char(c) {
            japanese += 1;
            letters += 1;
        } else if c.is_alphabetic() {
            letters += 1;
        }
    }
    if japanese > 0 && japanese * 5 >= letters {
        Script::Japanese
    } else {
        Script::Latin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_script() {
        assert_eq!(
            detect_script("梅雨は東アジアの気象現象である。"),
            Script::Japanese
        );
        assert_eq!(
            detect_script("The rainy season in East Asia."),
            Script::Latin
        );
        assert_eq!(
            detect_script("Rust の async/await と tokio の runtime について説明します"),
            Script::Japanese
        );
        assert_eq!(
            detect_script("Tokyo (東京) is the capital of Japan and its largest city."),
            Script::Latin
        );
        assert_eq!(detect_script(""), Script::Latin);
        assert_eq!(detect_script("12345 !!"), Script::Latin);
    }
}
