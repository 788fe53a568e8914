//! A follow-up as retrieval searches it when no model rewrites it. One that names its own
//! subject ("How do I book a flight?") is searched alone, so its retrieval, answer and refusal
//! are its own; an elliptical one ("And for contractors?", 「それは何日前まで？」) is followed by
//! the questions it leans on — the turn before it, and further back while those lean too — which
//! lend the subject it lacks while its own words, first, decide.

use shiori_analysis::is_japanese_char;
use shiori_analysis::text::terms;
use shiori_core::Turn;

/// Openings that continue the previous question rather than ask a new one.
const CONTINUATIONS: [&str; 22] = [
    "and ",
    "and?",
    "what about",
    "how about",
    "what if",
    "also",
    "then ",
    "so ",
    "but ",
    "or ",
    "same ",
    "else",
    "それ",
    "その",
    "じゃあ",
    "では",
    "なら",
    "あと",
    "ちなみに",
    "また",
    "他に",
    "ほかに",
];

/// Words that point back at something said before.
const POINTING_BACK: [&str; 10] = [
    "it", "that", "this", "those", "these", "they", "them", "there", "one", "ones",
];

/// Japanese words that point back, found anywhere in the question.
const POINTING_BACK_JA: [&str; 6] = ["それ", "その", "そこ", "そちら", "この件", "同じ"];

/// Endings of a Japanese question that names a case without asking anything of it.
const CASE_ONLY_ENDINGS: [&str; 5] = ["は", "だと", "なら", "では", "の場合"];

/// Longer than this, a question ending like that says what it asks.
const CASE_ONLY_CHARS: usize = 20;

/// A question with fewer subject words than this says what it asks about only with the turn
/// before it ("How long does that take?").
const SUBJECT_WORDS: usize = 3;

/// Words that say the question starts a new topic.
const NEW_TOPIC: [&str; 8] = [
    "unrelated",
    "by the way",
    "btw",
    "another question",
    "different question",
    "ところで",
    "別件",
    "話は変わ",
];

/// A Japanese question with this many content characters (kanji and katakana, `何` aside; a
/// Latin word counts two) or fewer names no subject of its own: 「金額はいくら？」,
/// 「パスワードは付けられますか？」. Japanese leaves out what the conversation already said.
const JAPANESE_SUBJECT_CHARS: usize = 6;

/// Whether `question` leans on the turn before it for its subject.
pub(crate) fn is_elliptical(question: &str) -> bool {
    let lower = question.trim().to_lowercase();
    if NEW_TOPIC.iter().any(|marker| lower.contains(marker)) {
        return false;
    }
    if is_japanese(&lower) && content_chars(&lower) <= JAPANESE_SUBJECT_CHARS {
        return true;
    }
    if CONTINUATIONS
        .iter()
        .any(|opening| lower.starts_with(opening))
    {
        return true;
    }
    if POINTING_BACK_JA.iter().any(|word| lower.contains(word)) {
        return true;
    }
    // 「派遣社員の場合は？」「週30時間未満の人だと？」: a case and nothing asked of it.
    let bare = lower.trim_end_matches(['?', '？', ' ', '。']);
    if CASE_ONLY_ENDINGS
        .iter()
        .any(|ending| bare.ends_with(ending))
        && bare.chars().count() <= CASE_ONLY_CHARS
    {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let english = !words.is_empty() && lower.is_ascii();
    let subject_words = terms(&lower).len();
    english
        && (subject_words < ONE_SUBJECT
            || stands_for_something_said(&words)
            || subject_words < SUBJECT_WORDS
                && words.iter().any(|word| POINTING_BACK.contains(word)))
}

/// An English question with fewer subject words than this asks only how or when of the turn
/// before it: "How quickly?", "Why?".
const ONE_SUBJECT: usize = 2;

/// Pronouns that stand for people or things named before wherever they are in a question:
/// "do they get a break?", "what hours can they be reached by phone?".
const STANDING_FOR: [&str; 4] = ["they", "them", "those", "these"];

/// Whether `words` (lower-cased) hold a pronoun that stands for something the conversation
/// named: one of [`STANDING_FOR`], "that one" or "this one", or an "it" that is no placeholder
/// subject ("do I have to take it all at once?", not "is it ok to…" or "it's").
fn stands_for_something_said(words: &[&str]) -> bool {
    words.iter().enumerate().any(|(at, word)| {
        let before = at.checked_sub(1).map(|before| words[before]);
        let after = words.get(at + 1).copied();
        match *word {
            "it" => {
                !matches!(before, Some("is" | "was" | "isn")) && !matches!(after, Some("is" | "s"))
            }
            "one" => matches!(before, Some("that" | "this")),
            word => STANDING_FOR.contains(&word),
        }
    })
}

fn is_japanese(text: &str) -> bool {
    text.chars().any(is_japanese_char)
}

/// Kanji and katakana (`何` aside), and two for each Latin word: what names a subject.
fn content_chars(text: &str) -> usize {
    let hiragana = '\u{3040}'..='\u{309f}';
    let names = text
        .chars()
        .filter(|&c| is_japanese_char(c) && !hiragana.contains(&c) && c != '何')
        .count();
    let words = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| word.len() >= 2)
        .count();
    names + 2 * words
}

/// What retrieval searches for `question` after `recent` (oldest first): the question alone,
/// or, when it is elliptical, the question then the earlier questions it leans on, newest
/// first, one a line.
pub fn searched(question: &str, recent: &[Turn]) -> String {
    let mut lines = vec![question];
    let mut leaning = is_elliptical(question);
    for turn in recent.iter().rev() {
        if !leaning {
            break;
        }
        lines.push(&turn.question);
        leaning = is_elliptical(&turn.question);
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(question: &str) -> Turn {
        Turn {
            question: question.to_string(),
            answer: String::new(),
            refused: false,
            sources: Vec::new(),
            at_ms: 0,
        }
    }

    #[test]
    fn tells_elliptical_follow_ups_from_questions_that_stand_alone() {
        for question in [
            "And for contractors?",
            "What about the Design team?",
            "How long does that take?",
            "Is it paid?",
            "Do I have to take it all in one go?",
            "What hours can they be reached by phone?",
            "Can I earn credit hours on that one?",
            "How quickly?",
            "それは何日前まで？",
            "派遣社員の場合は？",
            "じゃあ、アルバイトは？",
            "週3日勤務で週30時間未満の人だと？",
            "金額はいくら？",
            "パスワードは付けられますか？",
        ] {
            assert!(is_elliptical(question), "{question}");
        }
        for question in [
            "How do I book a flight?",
            "Is it possible to expense a new laptop?",
            "What is the dress code at the office?",
            "有給休暇は入社後いつから使えますか？",
            "What's the parking policy?",
            "Is it ok to keep client data on my own laptop?",
            "It's my first week, where do I find the onboarding checklist?",
            "ok unrelated - what's the code for weather leave?",
            "ところで、featureブランチってどういう名前にすればいい？",
            "英会話スクールの費用も補助してくれる？",
        ] {
            assert!(!is_elliptical(question), "{question}");
        }
    }

    #[test]
    fn a_follow_up_borrows_only_while_it_leans() {
        let history = [
            turn("How do I book a flight?"),
            turn("How much is the home office budget?"),
            turn("How long does that take?"),
        ];
        assert_eq!(
            searched("And for contractors?", &history),
            "And for contractors?\nHow long does that take?\nHow much is the home office budget?"
        );
        assert_eq!(
            searched("What is the dress code at the office?", &history),
            "What is the dress code at the office?"
        );
        assert_eq!(
            searched("And for contractors?", &[]),
            "And for contractors?"
        );
    }
}
