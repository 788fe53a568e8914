//! The phrase a question names a thing with, read the same way wherever it is asked after: "is
//! there a *relocation allowance* if I move", "how many weeks of *sabbatical* do we get",
//! 「会社から*仕事用のスマホ*って支給される？」.

use super::QUESTION_VERBS;

/// The words of a lower-cased English clause, with the apostrophes and hyphens inside them
/// ("kid's", "part-time").
pub(super) fn words(clause: &str) -> Vec<&str> {
    clause
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .filter(|word| !word.is_empty())
        .collect()
}

/// The noun phrase `clause` ends with: its last run of kanji, katakana and Latin letters, with
/// the の that joins such runs (「会社から仕事用のスマホ」 → 「仕事用のスマホ」). What comes
/// before says when or for whom it is asked (「試用期間中でも書籍補助」), not the thing; a
/// clause that ends in kana (「それ」, 「試用期間中で」) names no thing. An English phrase, which
/// holds no kana, is whole.
pub(super) fn trailing_noun(clause: &str) -> &str {
    let chars: Vec<(usize, char)> = clause.char_indices().collect();
    let mut start = clause.len();
    for (at, &(offset, c)) in chars.iter().enumerate().rev() {
        let joins = c == 'の' && start < clause.len() && at > 0 && !is_hiragana(chars[at - 1].1);
        if is_hiragana(c) && !joins {
            break;
        }
        start = offset;
    }
    clause[start..].trim()
}

/// Whether `c` is hiragana: Japanese writes its particles and endings in it, and its nouns
/// mostly in kanji, katakana and Latin letters.
pub(super) fn is_hiragana(c: char) -> bool {
    ('\u{3041}'..='\u{309F}').contains(&c)
}

/// The noun phrase `words` open with: its determiners dropped, up to the verb or the word that
/// opens another phrase ("a relocation allowance if I move" → "relocation allowance").
pub(super) fn noun_phrase<'a>(words: &[&'a str]) -> Vec<&'a str> {
    words
        .iter()
        .copied()
        .skip_while(|word| DETERMINERS.contains(word))
        .take_while(|word| !QUESTION_VERBS.contains(word) && !PHRASE_ENDS.contains(word))
        .collect()
}

/// Words before a noun that are not the noun ("for *our own* wedding", "is there *any* …").
pub(super) const DETERMINERS: [&str; 12] = [
    "a", "an", "any", "some", "the", "my", "our", "your", "their", "his", "her", "own",
];

/// Words that end a noun phrase: what follows says more of the question, not of the thing ("a
/// cap on how much …", "a relocation allowance if I move"), and the adverbs that close a
/// question ("can I use FMLA *yet*"). Not "or", which joins alternatives ("a gym or a pool").
const PHRASE_ENDS: [&str; 26] = [
    "on", "for", "if", "to", "when", "while", "in", "at", "and", "that", "which", "after",
    "before", "per", "each", "every", "i", "we", "you", "yet", "now", "still", "too", "also",
    "again", "anymore",
];
