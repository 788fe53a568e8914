//! What a question asking "how much" or "how many" is specific to: the thing counted ("how many
//! weeks of *sabbatical*"), whom it is for ("how much paid time off do *interns* get") and the
//! case it is for ("… do we get for our own *wedding*"). The leave page states how many days of
//! paid leave there are; it answers the question about a wedding only if it names weddings.
//! Quoting its figure otherwise answers a question nobody asked.

use super::existence::Thing;

/// The things an English "how much" or "how many" question is specific to, each of which a
/// source must name before it can answer; empty for any other question.
pub(crate) fn amount_specifics(question: &str) -> Vec<Thing> {
    question
        .to_lowercase()
        .replace('’', "'")
        .split([',', ';', '?'])
        .flat_map(|clause| {
            let words: Vec<&str> = clause
                .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
                .filter(|word| !word.is_empty())
                .collect();
            clause_specifics(&words)
        })
        .filter_map(|phrase| Thing::called(&phrase, owner(&phrase)))
        .collect()
}

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
        [_unit, "of", phrase @ ..] => noun_phrase(phrase),
        _ => None,
    }
}

/// "how much paid time off do interns get": who gets it, when not the one asking.
fn recipient(rest: &[&str]) -> Option<String> {
    let auxiliary = rest.iter().position(|word| AUXILIARIES.contains(word))?;
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
    noun_phrase(purpose)
}

/// The words of a noun phrase at the start of `words`: its determiners dropped, up to the verb
/// or the word that opens another phrase.
fn noun_phrase(words: &[&str]) -> Option<String> {
    let phrase: Vec<&str> = words
        .iter()
        .copied()
        .skip_while(|word| DETERMINERS.contains(word))
        .take_while(|word| !AUXILIARIES.contains(word) && !PHRASE_ENDS.contains(word))
        .collect();
    (!phrase.is_empty() && phrase.len() <= MAX_PHRASE_WORDS).then(|| phrase.join(" "))
}

/// A longer phrase is a clause that says more of the question, not a thing it names.
const MAX_PHRASE_WORDS: usize = 3;

/// Verbs that open the question's clause after "how much …" ("… do we get").
const AUXILIARIES: [&str; 10] = [
    "do", "does", "did", "can", "could", "will", "would", "should", "is", "are",
];

/// Verbs by which someone gets what is counted.
const RECEIVING_VERBS: [&str; 7] = ["get", "earn", "receive", "accrue", "take", "have", "carry"];

/// Words that stand for the one asking or anyone: "how much do *we* get" names no one.
const PRONOUNS: [&str; 9] = ["i", "we", "you", "they", "he", "she", "it", "one", "people"];

/// Words that make a subject the asker's own ("how many layers would *your* final PCB have"):
/// what it is called is the asker's word, not the documents'.
const POSSESSIVES: [&str; 3] = ["my", "your", "our"];

/// Words before a noun that are not the noun ("for *our own* wedding").
const DETERMINERS: [&str; 10] = [
    "a", "an", "the", "my", "our", "your", "their", "own", "his", "her",
];

/// Words that end a noun phrase: what follows says more of the question.
const PHRASE_ENDS: [&str; 17] = [
    "on", "for", "if", "to", "when", "while", "in", "at", "and", "or", "that", "which", "after",
    "before", "per", "each", "every",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn names(question: &str) -> Vec<String> {
        amount_specifics(question)
            .into_iter()
            .map(|thing| thing.name)
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
        ] {
            assert_eq!(names(question), specifics, "{question}");
        }
    }
}
