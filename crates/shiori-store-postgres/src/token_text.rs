//! A chunk's analyzer terms as one text that PostgreSQL's `simple` text-search configuration
//! (what the pg_textsearch index parses with) keeps whole: each term becomes one word of ASCII
//! letters and digits, led by a letter that says its field and how it is written. The default
//! parser would otherwise cut terms at punctuation and treat Japanese by the server's locale.
//! The same text, stored in `chunks.bm25_text`, gives a candidate's term frequencies back when
//! it is re-scored, and the terms whose document frequencies a deletion lowers.

use crate::terms::{FieldTerms, FIELDS};

/// The leading letter of a term written as it is (lowercase ASCII letters and digits), per field.
const PLAIN: [char; FIELDS] = ['e', 'j', 'm'];
/// The leading letter of a term written as the hex of its UTF-8 bytes, per field.
const HEX: [char; FIELDS] = ['x', 'y', 'z'];

fn is_plain(term: &str) -> bool {
    !term.is_empty()
        && term
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// `term` of `field` as one word the `simple` configuration leaves as it is.
pub(crate) fn encode(field: i16, term: &str) -> String {
    let slot = field as usize % FIELDS;
    if is_plain(term) {
        format!("{}{term}", PLAIN[slot])
    } else {
        let mut word = String::with_capacity(1 + 2 * term.len());
        word.push(HEX[slot]);
        for byte in term.bytes() {
            word.push_str(&format!("{byte:02x}"));
        }
        word
    }
}

/// The field and term of a word [`encode`] wrote; `None` for anything else.
pub(crate) fn decode(word: &str) -> Option<(i16, String)> {
    let mut chars = word.chars();
    let lead = chars.next()?;
    let payload = chars.as_str();
    if let Some(slot) = PLAIN.iter().position(|c| *c == lead) {
        return Some((slot as i16, payload.to_string()));
    }
    let slot = HEX.iter().position(|c| *c == lead)?;
    if !payload.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..payload.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(payload.get(at..at + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    Some((slot as i16, String::from_utf8(bytes).ok()?))
}

/// The words of a stored `bm25_text`.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split_ascii_whitespace()
}

/// A chunk's terms as its `bm25_text`: each term's word as many times as the chunk holds it.
pub(crate) fn chunk_text(fields: &[FieldTerms]) -> String {
    let mut text = String::new();
    for field in fields {
        for (term, frequency) in &field.frequencies {
            let word = encode(field.field, term);
            for _ in 0..*frequency {
                text.push_str(&word);
                text.push(' ');
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_never_collide_across_fields_or_spellings() {
        let terms = [
            (0, "rust"),
            (0, "2024"),
            (1, "国際"),
            (1, "ru"),
            (2, "空港"),
            (0, "café"),
            (0, "x6869"),
            (0, "a-b.c"),
        ];
        let words: Vec<String> = terms.iter().map(|(f, t)| encode(*f, t)).collect();
        for ((field, term), word) in terms.iter().zip(&words) {
            assert!(
                word.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{word}"
            );
            assert_eq!(decode(word), Some((*field, term.to_string())));
        }
        assert_ne!(encode(0, "ru"), encode(1, "ru"));
        assert_ne!(encode(0, "x6869"), encode(0, "hi"));
        assert_eq!(decode("q12"), None);
        assert_eq!(decode("x1"), None);
    }
}
