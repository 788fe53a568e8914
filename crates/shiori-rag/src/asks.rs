//! Questions that ask two things at once ("what's the cap on carrying over leave, and how many
//! credit hours can I bank?", 「ツクロアとデンキヤギ、それぞれ定年って何歳？」): the asks they hold,
//! each a question of its own, so that each is searched and answered from its own pages. One
//! search for both finds the page of one and quotes it for both.

use crate::asked::{JAPANESE_QUESTION_WORDS, QUESTION_VERBS, QUESTION_WORDS};

/// Words that join two asks without asking anything.
const ENGLISH_JOINERS: [&str; 5] = ["and", "also", "then", "vs", "vs."];
/// Words that ask the same of each of two names: 「AとB、それぞれ」「AとBで比べると」.
const JAPANESE_EACH: [&str; 6] = ["それぞれ", "ずつ", "違う", "違い", "比べ", "各々"];
/// Words right after two names that set them side by side: 「ツクロアとデンキヤギだと…」 asks
/// of each.
const SIDE_BY_SIDE: [&str; 2] = ["だと", "では"];
/// Words said once for both names, dropped from each name's question.
const JAPANESE_DISTRIBUTIVE: [&str; 2] = ["それぞれ", "ずつ"];
/// An ask shorter than this many characters (its own words, without the shared lead) is not
/// one: "how?" alone asks nothing that can be searched.
const MIN_ASK_CHARS: usize = 8;

/// The asks of `question`, each a whole question (a lead shared by all, like "for engineering
/// interviews," or 「SEV-1が起きたら、」, is kept in each); the question alone when it asks one
/// thing, or when it is a follow-up searched with the questions before it (one a line: see
/// [`crate::follow_up`]), which lend it their subject only as a whole.
pub(crate) fn asks(question: &str) -> Vec<String> {
    let question = question.trim();
    if question.contains('\n') {
        return vec![question.to_string()];
    }
    let by_name = each_name(question);
    if by_name.len() > 1 {
        return by_name;
    }
    let clauses = clauses(question);
    let asking: Vec<usize> = clauses
        .iter()
        .enumerate()
        .filter(|(_, clause)| asks_something(clause))
        .map(|(index, _)| index)
        .collect();
    if asking.len() < 2 {
        return vec![question.to_string()];
    }
    let lead_end = clauses[asking[0]].start;
    let lead = question[..lead_end].trim_end();
    let mut parts = Vec::with_capacity(asking.len());
    for (position, &first) in asking.iter().enumerate() {
        let start = clauses[first].start;
        let end = asking
            .get(position + 1)
            .map_or(question.len(), |&next| clauses[next].start);
        let own = trim_joiners(&question[start..end]);
        if own.chars().count() < MIN_ASK_CHARS {
            return vec![question.to_string()];
        }
        // 「…たら、」 runs on into the ask; "for interviews," takes a space.
        let space = lead.ends_with(|c: char| c.is_ascii());
        parts.push(format!("{lead}{}{own}", if space { " " } else { "" }));
    }
    parts
}

/// A clause of a question: its start and its text.
struct Clause<'q> {
    start: usize,
    text: &'q str,
}

impl std::ops::Deref for Clause<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        self.text
    }
}

/// The question cut at commas, semicolons and the words that join clauses ("and", "vs."),
/// each piece keeping where it starts.
fn clauses(question: &str) -> Vec<Clause<'_>> {
    let mut starts = vec![0];
    for (index, c) in question.char_indices() {
        if matches!(c, ',' | ';' | '、' | '，' | '；') {
            starts.push(index + c.len_utf8());
        }
    }
    for joiner in [" and ", " vs. ", " vs "] {
        starts.extend(question.match_indices(joiner).map(|(index, _)| index + 1));
    }
    starts.sort_unstable();
    starts.dedup();
    starts
        .iter()
        .enumerate()
        .map(|(position, &start)| {
            let end = starts.get(position + 1).copied().unwrap_or(question.len());
            Clause {
                start,
                text: &question[start..end],
            }
        })
        .filter(|clause| !clause.text.trim().is_empty())
        .collect()
}

/// Whether a clause asks: in English it opens with a question word (after "and"; `when` only
/// before a verb that makes it ask: "when I travel, …" sets a condition), in Japanese it holds
/// one.
fn asks_something(clause: &str) -> bool {
    if JAPANESE_QUESTION_WORDS
        .iter()
        .any(|word| clause.contains(word))
    {
        return true;
    }
    let words: Vec<String> = trim_joiners(clause)
        .split_whitespace()
        .take(2)
        .map(|word| {
            word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
        })
        .collect();
    match words.as_slice() {
        [first, second, ..] if first == "when" => QUESTION_VERBS.contains(&second.as_str()),
        [first, ..] => QUESTION_WORDS.contains(&first.as_str()) && first != "when",
        [] => false,
    }
}

/// A clause without the words and marks that join it to the one before.
fn trim_joiners(clause: &str) -> &str {
    let mut rest =
        clause.trim_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '、'));
    while let Some((first, tail)) = rest.split_once(char::is_whitespace) {
        if !ENGLISH_JOINERS.contains(&first.to_lowercase().as_str()) {
            break;
        }
        rest = tail.trim_start();
    }
    rest.trim_end_matches([',', ';', '、'])
}

/// 「AとB、それぞれ…」: the same question asked of each of two names, one question a name.
/// The names are the runs of one script (katakana, kanji, Latin letters) on either side of
/// 「と」, and the question must say it asks of each, or set the two side by side
/// (「AとBだと…」); otherwise the question alone.
fn each_name(question: &str) -> Vec<String> {
    let asks_each = JAPANESE_EACH.iter().any(|word| question.contains(word));
    let chars: Vec<(usize, char)> = question.char_indices().collect();
    for (position, &(at, c)) in chars.iter().enumerate() {
        if c != 'と' || position == 0 {
            continue;
        }
        let Some(script) = chars.get(position - 1).map(|&(_, c)| Script::of(c)) else {
            continue;
        };
        if script == Script::Other
            || chars.get(position + 1).map(|&(_, c)| Script::of(c)) != Some(script)
        {
            continue;
        }
        let first_start = chars[..position]
            .iter()
            .rev()
            .take_while(|&&(_, c)| Script::of(c) == script)
            .last()
            .map_or(at, |&(index, _)| index);
        let second_end = chars[position + 1..]
            .iter()
            .find(|&&(_, c)| Script::of(c) != script)
            .map_or(question.len(), |&(index, _)| index);
        let first = &question[first_start..at];
        let second = &question[at + 'と'.len_utf8()..second_end];
        if first.chars().count() < 2 || second.chars().count() < 2 {
            continue;
        }
        let (before, after) = (&question[..first_start], &question[second_end..]);
        if !asks_each && !SIDE_BY_SIDE.iter().any(|word| after.starts_with(word)) {
            continue;
        }
        return [first, second]
            .iter()
            .map(|name| {
                JAPANESE_DISTRIBUTIVE
                    .iter()
                    .fold(format!("{before}{name}{after}"), |text, word| {
                        text.replace(word, "")
                    })
            })
            .collect();
    }
    vec![question.to_string()]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Katakana,
    Kanji,
    Latin,
    Other,
}

impl Script {
    fn of(c: char) -> Script {
        match c {
            'ァ'..='ヺ' | 'ー' => Script::Katakana,
            '\u{4E00}'..='\u{9FFF}' => Script::Kanji,
            'A'..='Z' | 'a'..='z' | 'Ａ'..='Ｚ' | 'ａ'..='ｚ' => Script::Latin,
            _ => Script::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_english_asks_joined_by_and_are_two_questions() {
        assert_eq!(
            asks("what's the cap on carrying over annual leave, and how many credit hours can I keep banked?"),
            [
                "what's the cap on carrying over annual leave",
                "how many credit hours can I keep banked?"
            ]
        );
        assert_eq!(
            asks("which floor is TTS on in the Chicago office and which floor in New York?"),
            [
                "which floor is TTS on in the Chicago office",
                "which floor in New York?"
            ]
        );
        assert_eq!(
            asks("how much notice do I need for a leave request vs. how early do I start offboarding?"),
            [
                "how much notice do I need for a leave request",
                "how early do I start offboarding?"
            ]
        );
    }

    #[test]
    fn a_shared_lead_goes_with_each_ask() {
        assert_eq!(
            asks("for engineering interviews, how long does the interview day take, and how long should my run-through be?"),
            [
                "for engineering interviews, how long does the interview day take",
                "for engineering interviews, how long should my run-through be?"
            ]
        );
        assert_eq!(
            asks("SEV-1が起きたら、ICはどうやって呼んで、ポストモーテム会議はいつまでに設定する？"),
            [
                "SEV-1が起きたら、ICはどうやって呼んで",
                "SEV-1が起きたら、ポストモーテム会議はいつまでに設定する？"
            ]
        );
    }

    #[test]
    fn one_ask_with_conditions_or_lists_stays_whole() {
        for question in [
            "When I travel, is lodging covered?",
            "how much sick and annual leave do I get?",
            "If I work late, what do I need to file?",
            "デンキヤギで自転車通勤したいんだけど、何が必要？",
            "what is it, and why?",
            "ツクロアと取引のある会社は？",
            "and how long does it take?\nwhat form do I file, and who approves it?",
        ] {
            assert_eq!(asks(question), [question], "{question}");
        }
    }

    #[test]
    fn the_same_question_of_two_names_is_asked_of_each() {
        assert_eq!(
            asks("ツクロアとデンキヤギ、それぞれ定年って何歳？"),
            ["ツクロア、定年って何歳？", "デンキヤギ、定年って何歳？"]
        );
        assert_eq!(
            asks("書籍補助の上限、ツクロアとデンキヤギでそれぞれいくら？"),
            [
                "書籍補助の上限、ツクロアでいくら？",
                "書籍補助の上限、デンキヤギでいくら？"
            ]
        );
        assert_eq!(
            asks("試用期間ってツクロアとデンキヤギでどれくらい違う？"),
            [
                "試用期間ってツクロアでどれくらい違う？",
                "試用期間ってデンキヤギでどれくらい違う？"
            ]
        );
        assert_eq!(
            asks("辞めたいとき、ツクロアとデンキヤギだと何日前に言えばいい？"),
            [
                "辞めたいとき、ツクロアだと何日前に言えばいい？",
                "辞めたいとき、デンキヤギだと何日前に言えばいい？"
            ]
        );
    }

    #[test]
    fn two_names_joined_without_asking_of_each_stay_one_question() {
        for question in [
            "有給とフレックスを組み合わせて使える？",
            "ツクロアとデンキヤギの規程はどこにある？",
        ] {
            assert_eq!(asks(question).len(), 1, "{question}");
        }
    }
}
