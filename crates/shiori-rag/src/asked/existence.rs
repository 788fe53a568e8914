//! Questions that ask whether a thing exists — "is there a home office stipend?", "does GSA
//! offer pet insurance?", 「誕生日休暇ってある？」 — name the thing. A page on the topic (the
//! leave page, the benefits page) that never names it does not answer: it lists what there is,
//! and quoting it answers a question nobody asked. The realistic unanswerable question is this
//! one: the handbook has a page on leave, but no birthday leave.

use super::phrase::{noun_phrase, trailing_noun, words};
use super::thing::Thing;

/// The things a question asks whether there are (one, or alternatives: 「社員食堂とか食事補助
/// ってある？」 asks about either); `None` when it asks something else.
pub(crate) fn asked_things(question: &str) -> Option<Vec<Thing>> {
    let question = question.trim().trim_end_matches(['?', '？', ' ']);
    let thing = english_thing(&question.to_lowercase()).or_else(|| japanese_thing(question))?;
    let things: Vec<Thing> = thing
        .split(['・', '、', '/'])
        .flat_map(|part| part.split("とか"))
        .flat_map(|part| part.split(" or "))
        .filter_map(|part| Thing::new(trailing_noun(part.trim().trim_end_matches("の制度"))))
        .collect();
    (!things.is_empty()).then_some(things)
}

/// Openings of an English question asking whether something exists, or whether a thing is
/// allowed ("can I bring my dog", "can I expense a ticket"); the thing follows.
const ENGLISH_OPENINGS: [&str; 12] = [
    "is there",
    "are there",
    "do we have",
    "do we get",
    "do you have",
    "do you offer",
    "can i bring",
    "can we bring",
    "can i expense",
    "can we expense",
    "can i use",
    "can we use",
];

/// Verbs with which "does X …" or "will X …" asks whether X has or pays for something ("does
/// GSA offer pet insurance", "does GSA cover travel insurance").
const HAVING_VERBS: [&str; 7] = [
    "offer",
    "have",
    "provide",
    "give",
    "cover",
    "reimburse",
    "pay",
];

fn english_thing(question: &str) -> Option<String> {
    // "unrelated, but does GSA offer …": the asking clause may follow another, and it opens
    // with its verb ("what is there a large population of" asks for something else).
    question.split([',', ';', '?']).find_map(|clause| {
        let words: Vec<&str> = words(clause)
            .into_iter()
            .skip_while(|word| LEAD_INS.contains(word))
            .collect();
        let opened = ENGLISH_OPENINGS.iter().find_map(|opening| {
            let opening: Vec<&str> = opening.split(' ').collect();
            words.starts_with(&opening).then_some(opening.len())
        });
        let does_have = (words
            .first()
            .is_some_and(|verb| matches!(*verb, "does" | "will"))
            && words.get(2).is_some_and(|verb| HAVING_VERBS.contains(verb)))
        .then_some(3);
        let start = opened.or(does_have)?;
        // "does GSA pay *for* travel insurance"
        let rest = &words[start..];
        let phrase = noun_phrase(rest.strip_prefix(&["for"]).unwrap_or(rest));
        (!phrase.is_empty()).then(|| phrase.join(" "))
    })
}

/// Words a clause may open with before its question ("but does …", "so is there …").
const LEAD_INS: [&str; 6] = ["but", "so", "and", "ok", "also", "then"];

/// Verbs that end a Japanese question asking whether something exists or is paid for, after
/// the thing and its particle (「誕生日休暇ってある？」「転居手当って出る？」「保養所って使え
/// る？」): the Japanese of "is there", "do we get" and "does it cover".
const JAPANESE_VERBS: [&str; 15] = [
    "ある",
    "あります",
    "あったりする",
    "あったりします",
    "出る",
    "出ます",
    "もらえる",
    "もらえます",
    "支給される",
    "支給されます",
    "補助される",
    "補助してもらえる",
    "補助してくれる",
    "使える",
    "使えます",
];

/// What may follow the verb: a plain question, or its polite and explaining forms.
const JAPANESE_TAILS: [&str; 5] = ["", "の", "か", "のか", "んですか"];

/// Particles between the thing and its verb, longest first.
const JAPANESE_PARTICLES: [&str; 5] = ["とかも", "って", "とか", "は", "も"];

fn japanese_thing(question: &str) -> Option<String> {
    let thing = JAPANESE_VERBS.iter().find_map(|verb| {
        JAPANESE_TAILS.iter().find_map(|tail| {
            let body = question.strip_suffix(tail)?.strip_suffix(verb)?;
            JAPANESE_PARTICLES
                .iter()
                .find_map(|particle| body.strip_suffix(particle))
        })
    })?;
    // 「確定拠出年金（iDeCo・企業型DC）の制度は」: what the brackets add is the thing's detail.
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in thing.chars() {
        match c {
            '(' | '（' => depth += 1,
            ')' | '）' => depth = depth.saturating_sub(1),
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let last_clause = plain.rsplit(['、', '。', '？']).next().unwrap_or_default();
    (!last_clause.trim().is_empty()).then(|| last_clause.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_thing_a_question_asks_whether_there_is() {
        for (question, things) in [
            (
                "is there a home office stipend, and how much is it?",
                vec!["home office stipend"],
            ),
            (
                "is there a cap on how much award leave I can get?",
                vec!["cap"],
            ),
            (
                "is there a relocation allowance if I move for the job?",
                vec!["relocation allowance"],
            ),
            (
                "unrelated, but does GSA offer pet insurance?",
                vec!["pet insurance"],
            ),
            ("Is there a Mac loaner program?", vec!["mac loaner program"]),
            ("can I bring my dog to the office?", vec!["dog"]),
            (
                "can I use my personal laptop for work?",
                vec!["personal laptop"],
            ),
            ("can I use FMLA yet?", vec!["fmla"]),
            ("誕生日休暇ってある？", vec!["誕生日休暇"]),
            (
                "社員食堂とか食事補助ってある？",
                vec!["社員食堂", "食事補助"],
            ),
            ("社員旅行とかもある？", vec!["社員旅行"]),
            (
                "会社から仕事用のスマホって支給される？",
                vec!["仕事用のスマホ"],
            ),
            (
                "英会話のレッスン代って補助してもらえる？",
                vec!["英会話のレッスン代"],
            ),
            ("資格取ったら報奨金とか出る？", vec!["報奨金"]),
            (
                "ストックオプションってもらえるの？",
                vec!["ストックオプション"],
            ),
            (
                "デンキヤギで試用期間中でも書籍補助って使える？",
                vec!["書籍補助"],
            ),
            (
                "確定拠出年金（iDeCo・企業型DC）の制度はある？",
                vec!["確定拠出年金"],
            ),
        ] {
            let names: Option<Vec<String>> = asked_things(question)
                .map(|found| found.into_iter().map(|thing| thing.name).collect());
            assert_eq!(
                names,
                Some(things.iter().map(|thing| thing.to_string()).collect()),
                "{question}"
            );
        }
        for question in [
            "how much is the transit subsidy?",
            "can I work remotely while traveling?",
            "有給休暇は何日ある？",
            "What is there a large population of in the Chota Valley?",
            "In what other country besides the US does GE provide lending services?",
            "how many weeks of sabbatical do we get after five years?",
            "服装の決まりってある？スーツ必須？",
            "それって試用期間中でも使える？",
            "ツクロアの交通手当って月いくらまで出るの？",
            "ツクロアの賞与っていつ支給される？",
            "デンキヤギで入社して半年たったら有給何日もらえる？",
        ] {
            assert_eq!(asked_things(question), None, "{question}");
        }
    }
}
