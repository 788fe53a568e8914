//! What a question asking "how much" or "how many" is specific to: the thing counted ("how many
//! weeks of *sabbatical*"), whom it is for ("how much paid time off do *interns* get") and the
//! case it is for ("… do we get for our own *wedding*"); in Japanese, the topic before 「って」
//! (「*リフレッシュ休暇*って勤続何年でもらえる？」). The leave page states how many days of paid
//! leave there are; it answers the question about a wedding only if it names weddings. Quoting
//! its figure otherwise answers a question nobody asked.

use super::phrase::{is_hiragana, noun_phrase, words, DETERMINERS};
use super::thing::Thing;
use super::QUESTION_VERBS;

/// The things a question asking for an amount, a number or a time is specific to: groups of
/// alternatives, of each of which a source must name one before it can answer; empty for any
/// other question.
pub(crate) fn amount_specifics(question: &str) -> Vec<Vec<Thing>> {
    let mut specifics: Vec<Vec<Thing>> = english_specifics(question)
        .into_iter()
        .map(|thing| vec![thing])
        .collect();
    specifics.extend(japanese_specific(question));
    specifics
}

fn english_specifics(question: &str) -> Vec<Thing> {
    question
        .to_lowercase()
        .replace('’', "'")
        .split([',', ';', '?'])
        .flat_map(|clause| clause_specifics(&words(clause)))
        .filter_map(|phrase| Thing::called(&phrase, owner(&phrase)))
        .collect()
}

/// 「リフレッシュ休暇って勤続何年でもらえる？」: the topic a Japanese question asking for an
/// amount, a number or a time puts before its 「って」. Each run of kanji, katakana or Latin
/// letters in it may be what a source calls it (「ツクロアで備品を記録しておく台帳」 is named
/// by a page on 備品), so it is a set of alternatives.
fn japanese_specific(question: &str) -> Option<Vec<Thing>> {
    let asked = JAPANESE_ASKING
        .iter()
        .filter_map(|word| question.find(word))
        .min()?;
    let before = &question[..asked];
    let topic = &before[..before.find("って")?];
    let clause = topic.rsplit(['、', '，', ',', '。']).next()?;
    let runs: Vec<Thing> = clause
        .split(is_hiragana)
        .filter_map(|run| Thing::called(clause.trim(), run.trim()))
        .collect();
    (!runs.is_empty()).then_some(runs)
}

/// Words with which a Japanese question asks for an amount, a number or a time.
const JAPANESE_ASKING: [&str; 7] = [
    "何",
    "いくら",
    "いつ",
    "どれくらい",
    "どのくらい",
    "どれぐらい",
    "どのぐらい",
];

/// Whose a phrase says it is, when it says so, which names it: "Malmedy's festival" is named
/// wherever Malmedy's carnival is, "our kid's school events" only where kids are.
fn owner(phrase: &str) -> &str {
    phrase.split_once("'s ").map_or(phrase, |(owner, _)| owner)
}

fn clause_specifics(words: &[&str]) -> Vec<String> {
    let Some(asked) = words
        .windows(2)
        .position(|pair| pair[0] == "how" && matches!(pair[1], "much" | "many"))
    else {
        return Vec::new();
    };
    let rest = &words[asked + 2..];
    [counted(rest), recipient(rest), case(rest)]
        .into_iter()
        .flatten()
        .collect()
}

/// "how many days of military leave do we get": the unit's `of` phrase, up to the verb.
fn counted(rest: &[&str]) -> Option<String> {
    match rest {
        [_unit, "of", phrase @ ..] => short_noun_phrase(phrase),
        _ => None,
    }
}

/// "how much paid time off do interns get": who gets it, when not the one asking.
fn recipient(rest: &[&str]) -> Option<String> {
    let auxiliary = rest.iter().position(|word| QUESTION_VERBS.contains(word))?;
    let after = &rest[auxiliary + 1..];
    let verb = after
        .iter()
        .take(MAX_PHRASE_WORDS + 1)
        .position(|word| RECEIVING_VERBS.contains(word))?;
    let personal = after[..verb]
        .iter()
        .any(|word| PRONOUNS.contains(word) || POSSESSIVES.contains(word));
    let subject: Vec<&str> = after[..verb]
        .iter()
        .copied()
        .skip_while(|word| DETERMINERS.contains(word))
        .collect();
    (!subject.is_empty() && !personal).then(|| subject.join(" "))
}

/// "… do we get for our own wedding": the `for` phrase after the receiving verb ("get for",
/// "take to care for").
fn case(rest: &[&str]) -> Option<String> {
    let verb = rest
        .iter()
        .position(|word| RECEIVING_VERBS.contains(word))?;
    let after = &rest[verb + 1..];
    let purpose = match after {
        ["for", phrase @ ..] => phrase,
        ["to", _verb, "for", phrase @ ..] => phrase,
        _ => return None,
    };
    short_noun_phrase(purpose)
}

/// The noun phrase `words` open with ([`noun_phrase`]), when it is short enough to name a thing.
fn short_noun_phrase(words: &[&str]) -> Option<String> {
    let phrase = noun_phrase(words);
    (!phrase.is_empty() && phrase.len() <= MAX_PHRASE_WORDS).then(|| phrase.join(" "))
}

/// A longer phrase is a clause that says more of the question, not a thing it names.
const MAX_PHRASE_WORDS: usize = 3;

/// Verbs by which someone gets what is counted.
const RECEIVING_VERBS: [&str; 7] = ["get", "earn", "receive", "accrue", "take", "have", "carry"];

/// Words that stand for the one asking or anyone: "how much do *we* get" names no one.
const PRONOUNS: [&str; 9] = ["i", "we", "you", "they", "he", "she", "it", "one", "people"];

/// Words that make a subject the asker's own ("how many layers would *your* final PCB have"):
/// what it is called is the asker's word, not the documents'.
const POSSESSIVES: [&str; 3] = ["my", "your", "our"];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each group's name (its alternatives share it).
    fn names(question: &str) -> Vec<String> {
        amount_specifics(question)
            .into_iter()
            .map(|alternatives| alternatives[0].name.clone())
            .collect()
    }

    #[test]
    fn reads_what_an_amount_question_is_specific_to() {
        for (question, specifics) in [
            (
                "how many weeks of sabbatical do we get after five years?",
                vec!["sabbatical"],
            ),
            (
                "how many days of paid leave do we get for our own wedding?",
                vec!["paid leave", "wedding"],
            ),
            (
                "how much paid leave do we get to care for a sick pet?",
                vec!["sick pet"],
            ),
            ("how much paid time off do interns get?", vec!["interns"]),
            (
                "how many hours of paid leave do we get for our kid's school events?",
                vec!["paid leave", "kid's school events"],
            ),
            (
                "How many days does Malmedy’s festival take place before Shrove Tuesday?",
                vec!["malmedy's festival"],
            ),
            (
                "how many annual leave hours can part-time employees carry over?",
                vec!["part-time employees"],
            ),
            (
                "how much leave can I get for my treatment?",
                vec!["treatment"],
            ),
            (
                "how many weeks of paid parental leave do we get, and how much unpaid FMLA can I take to look after a family member who's an injured servicemember?",
                vec!["paid parental leave"],
            ),
            ("how much time off do we get to go vote?", vec![]),
            ("how much is the transit subsidy?", vec![]),
            ("how many layers would your final PCB have?", vec![]),
            ("what's the payout for a critical bug?", vec![]),
            (
                "how many days of admin leave can I take to be a bone marrow donor?",
                vec!["admin leave"],
            ),
            ("有給休暇は何日ある？", vec![]),
            ("リフレッシュ休暇って勤続何年でもらえる？", vec!["リフレッシュ休暇"]),
            (
                "インフルの予防接種、社内の集団接種っていつやるの？",
                vec!["社内の集団接種"],
            ),
        ] {
            assert_eq!(names(question), specifics, "{question}");
        }
        let runs = amount_specifics("ツクロアで備品を記録しておく台帳って何て名前？");
        assert_eq!(
            runs[0].len(),
            4,
            "ツクロア, 備品, 記録 and 台帳 each may name it"
        );
    }
}
