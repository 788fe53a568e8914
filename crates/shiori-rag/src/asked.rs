//! What a question asks for, read from its wording in English or Japanese, and whether a
//! sentence states that kind of thing: "how much" wants an amount, "how many" a number, "when"
//! or "how long" a date or a duration, "which form" or "what tool" a proper name, 「手続きは？」
//! what to file. A sentence that shares the question's words but states no amount is the
//! question restated, not its answer. Where to reach someone or something (a website, an email
//! address, whom to contact) is read in [`reach`]; whether a thing exists ("is there a …?",
//! 「…ってある？」) in [`existence`]; what an amount asked for is specific to ("… for our own
//! wedding") in [`specifics`].

use shiori_analysis::is_japanese_char;
use shiori_analysis::text::stemmed_terms;
use std::collections::HashSet;

mod existence;
mod phrase;
mod reach;
mod specifics;
mod thing;

pub(crate) use existence::asked_things;
pub(crate) use specifics::amount_specifics;
pub(crate) use thing::Thing;

/// The kinds of answer whose presence in a sentence can be seen from its characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// Money: a price, a budget, an allowance.
    Amount,
    /// A count or any other number.
    Number,
    /// A time of day: when something opens, starts or ends ("何時から何時", "what time").
    Clock,
    /// A date, a time, a deadline or a duration.
    Time,
    /// A yes or a no: whether something is allowed, required, paid, possible.
    Ruling,
    /// A web address: a link or a domain.
    Website,
    /// An email address.
    Email,
    /// A phone number.
    Phone,
    /// A street address.
    Address,
    /// Whom to reach: an email address or a phone number.
    Contact,
    /// What to file: a form, a request, a notice (「有給使いたいとき、何を出せばいい？」「副業の
    /// 手続きは？」).
    Filing,
    /// A name of the kind "what X" or "which X" asks for ("which form", "what password
    /// manager"): a capitalised word or an acronym the question does not hold ("OPM Form 630",
    /// "KeePassXC").
    Name,
}

/// Question wordings, lower-cased, for each kind; the first kind with a match wins, so money
/// is tried before numbers ("how much does it cost per month" is an amount, not a time).
const WORDINGS: [(Asked, &[&str]); 4] = [
    (
        Asked::Amount,
        &[
            "how much",
            "cost",
            "spend",
            "charge",
            "price",
            "budget",
            "allowance",
            "stipend",
            "reimburse",
            "fee",
            "salary",
            "bonus",
            "payout",
            "dollar",
            "dollars",
            "いくら",
            "金額",
            "費用",
            "料金",
            "予算",
            "手当",
            "代金",
            "支給額",
            "上限額",
        ],
    ),
    (
        Asked::Clock,
        &[
            "what time",
            "what hours",
            "which hours",
            "business hours",
            "opening hours",
            "office hours",
            "何時から",
            "何時まで",
            "何時に",
            "何時頃",
            "何時ごろ",
        ],
    ),
    (
        Asked::Time,
        &[
            "when",
            "how long",
            "what date",
            "deadline",
            "due",
            "how soon",
            "how far in advance",
            "how far ahead",
            "how fast",
            "how quickly",
            "by when",
            "いつ",
            "何日前",
            "何日以内",
            "期限",
            // Not "期間" alone: "梅雨の期間中…を何と呼ぶ" asks for a name.
            "期間は",
            "どのくらいの期間",
            "どれくらいの期間",
            "何時",
            "何か月",
            "何ヶ月",
            "何年",
            "何週間",
            "締め切り",
            "締切",
        ],
    ),
    (
        Asked::Number,
        &[
            "how many",
            "how often",
            "number of",
            "what percentage",
            "what percent",
            "cap",
            "limit",
            "maximum",
            "minimum",
            "何人",
            "何日",
            "何回",
            "何個",
            "何件",
            "何名",
            "何%",
            "何パーセント",
            "何割",
            "いくつ",
            // "How much" and "how long" in one: a quantity, in whatever unit.
            "どれくらい",
            "どのくらい",
            "どれぐらい",
            "どのぐらい",
        ],
    ),
];

/// What is paid in money, though asking about it ("how do I apply for the transit subsidy?")
/// asks for no amount: with "how much", it does ("how much is the monthly transit subsidy?").
const MONEY_NOUNS: [&str; 4] = ["subsidy", "subsidies", "reimbursement", "compensation"];

/// What is measured in time rather than money: "how much leave" is answered in hours or days.
const TIME_OFF: [&str; 9] = [
    "leave", "time off", "vacation", "pto", "holiday", "休暇", "休み", "有給", "休日",
];

/// What `question` asks for, when its wording says.
pub(crate) fn asked(question: &str) -> Option<Asked> {
    let lower = question.to_lowercase();
    // 「…どれくらいの頻度で確認するかをまとめた一覧表を何と呼ぶ？」 asks what a thing is called;
    // the wordings before it describe the thing.
    if ASKING_A_TERM.iter().any(|wording| lower.contains(wording)) {
        return None;
    }
    if let Some(reach) = reach::asked_reach(&lower) {
        return Some(reach);
    }
    // "What service checks my salary?" asks for a name, whatever its topic's words; of a
    // product, a form or a service, a proper one.
    if named_kind(&lower).is_some() {
        let proper = NAMED_KINDS
            .iter()
            .any(|kind| contains_wording(&lower, kind));
        return proper.then_some(Asked::Name);
    }
    if FILING_WORDINGS
        .iter()
        .any(|wording| lower.contains(wording))
    {
        return Some(Asked::Filing);
    }
    let Some((kind, wording)) = WORDINGS.iter().find_map(|(kind, wordings)| {
        wordings
            .iter()
            .find(|wording| asks_with(&lower, wording))
            .map(|wording| (*kind, *wording))
    }) else {
        return asks_yes_or_no(&lower).then_some(Asked::Ruling);
    };
    // "Will they reimburse me for checking two bags?" names money but asks whether: only a
    // question word ("how much", "when") asks for the amount itself.
    // (Japanese wordings are asking words or nouns a yes-or-no question seldom holds.)
    let asking_word = !wording.is_ascii()
        || wording.starts_with("how ")
        || QUESTION_WORDS.contains(&wording.split(' ').next().unwrap_or_default());
    if !asking_word && asks_yes_or_no(&lower) {
        return Some(Asked::Ruling);
    }
    // "How much" asks for money only beside a word of money; "how much storage" wants a
    // number of gigabytes, "how much leave" hours or days.
    let money = WORDINGS[0]
        .1
        .iter()
        .chain(&MONEY_NOUNS)
        .any(|wording| *wording != "how much" && contains_wording(&lower, wording));
    let time_off = TIME_OFF.iter().any(|noun| contains_wording(&lower, noun));
    Some(match kind {
        Asked::Amount if !money && time_off => Asked::Time,
        Asked::Amount if !money => Asked::Number,
        kind => kind,
    })
}

impl Asked {
    /// What a refusal says was not found: "an amount", "a number", "a date or a duration".
    pub(crate) fn described(self) -> &'static str {
        match self {
            Asked::Amount => "an amount",
            Asked::Number => "a number",
            Asked::Clock => "a time of day",
            Asked::Time => "a date or a duration",
            Asked::Ruling => "a yes or a no",
            Asked::Website => "a web address",
            Asked::Email => "an email address",
            Asked::Phone => "a phone number",
            Asked::Address => "an address",
            Asked::Contact => "whom to contact",
            Asked::Name => "a name",
            Asked::Filing => "what to file",
        }
    }
}

/// Whether `question` (lower-cased) asks with `wording`: "when" asks only as the question's
/// first word or before a verb that opens a question ("when is", "by when do"); "what do I
/// use when I get called for jury duty" asks for a kind of leave, not a time. A Japanese
/// counting wording asks unless it says "some" ([`asks_how_many`]).
fn asks_with(question: &str, wording: &str) -> bool {
    if wording.starts_with(['何', 'い']) {
        return asks_how_many(question, wording);
    }
    if wording != "when" {
        return contains_wording(question, wording);
    }
    let words: Vec<&str> = question
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|word| !word.is_empty())
        .collect();
    words.iter().enumerate().any(|(at, word)| {
        *word == "when"
            && (at == 0
                || words
                    .get(at + 1)
                    .is_some_and(|next| QUESTION_VERBS.contains(next)))
    })
}

/// Whether a Japanese asking wording (「何日」「いくつ」「いつ」) asks: before a 「か」 the sentence
/// goes on from it says "some" (「何日か休んだ」「いくつか並べたもの」), unless the 「か」 begins
/// 「から」 or 「かかる」 (「いつから？」「何日かかる？」) or a counter (「何か月」); one that ends
/// the question asks (「西暦何年か？」).
fn asks_how_many(question: &str, wording: &str) -> bool {
    question.match_indices(wording).any(|(at, _)| {
        let mut after = question[at + wording.len()..].chars();
        match (after.next(), after.next()) {
            (Some('か'), Some('ら' | 'か' | '月' | '所')) => true,
            (Some('か'), Some(next)) => !is_japanese_char(next),
            _ => true,
        }
    })
}

/// Japanese wordings that ask what something is called.
const ASKING_A_TERM: [&str; 6] = [
    "何と呼",
    "何という",
    "何と言う",
    "何と称",
    "なんと呼",
    "なんという",
];

/// Verbs that follow an asking "when".
pub(crate) const QUESTION_VERBS: [&str; 19] = [
    "do", "does", "did", "is", "are", "was", "were", "will", "would", "should", "shall", "can",
    "could", "must", "may", "might", "has", "have", "had",
];

/// `wording` in `text` as words for English (so "due" is not found in "procedure"), anywhere
/// for Japanese.
fn contains_wording(text: &str, wording: &str) -> bool {
    if !wording.is_ascii() {
        return text.contains(wording);
    }
    text.match_indices(wording).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + wording.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Whether `sentence` states the kind of thing `asked` names.
pub(crate) fn states(sentence: &str, asked: Asked) -> bool {
    let sentence = without_list_mark(sentence);
    let lower = sentence.to_lowercase();
    let numeral = sentence
        .chars()
        .any(|c| c.is_ascii_digit() || ('０'..='９').contains(&c))
        || holds_kanji_number(sentence);
    let any = |words: &[&str]| words.iter().any(|word| lower.contains(word));
    // Whole words: "half" is no number in "on behalf of", nor "eur" a currency in "Europe".
    let any_word = |words: &[&str]| words.iter().any(|word| contains_wording(&lower, word));
    let currency = any(&CURRENCY_SIGNS) || any_word(&CURRENCY_WORDS);
    match asked {
        Asked::Amount => {
            numeral && (currency || lower.contains('%'))
                || any(&["free", "no cost", "無料", "全額", "実費"])
                || any(&SET_CASE_BY_CASE)
        }
        Asked::Number => numeral || any_word(&NUMBER_WORDS) || any(&SET_CASE_BY_CASE),
        Asked::Clock => states_a_time_of_day(&lower),
        Asked::Time => {
            (numeral || any_word(&NUMBER_WORDS)) && any(&TIME_UNITS)
                || any(&TIME_WORDS)
                || has_numeric_date_or_time(&lower)
        }
        Asked::Ruling => {
            any(&["n't", "n’t"])
                || any(&JAPANESE_RULINGS)
                || RULINGS.iter().any(|word| contains_wording(&lower, word))
        }
        Asked::Website => reach::has_web_address(&lower),
        Asked::Email => reach::has_email_address(&lower),
        Asked::Phone => reach::has_phone_number(&lower),
        Asked::Address => reach::has_street_address(&lower),
        Asked::Contact => reach::has_email_address(&lower) || reach::has_phone_number(&lower),
        Asked::Name => holds_a_name(sentence, &HashSet::new()),
        Asked::Filing => any(&FILINGS),
    }
}

/// Whether `sentence` holds a name none of `known` (stemmed terms, the question's) is: a word
/// with a capital after the sentence's first word ("We recommend *KeePassXC*"), or an acronym
/// anywhere ("*OPM* Form 630").
pub(crate) fn holds_a_name(sentence: &str, known: &HashSet<String>) -> bool {
    let sentence = without_list_mark(sentence);
    sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty() && word.is_ascii())
        .enumerate()
        .any(|(at, word)| {
            let capitals = word.chars().filter(char::is_ascii_uppercase).count();
            let named = capitals >= 2 || (capitals == 1 && at > 0 && word != "I");
            named && stemmed_terms(word).iter().all(|term| !known.contains(term))
        })
}

/// Whether `text` writes a date or a time in digits: `8/18/25`, `2025/1/1`, `9:30`, a year
/// (`since 1670`), but not the name `SEV-2/1` or the label `Location: 230`.
fn has_numeric_date_or_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digit_at = |index: usize| bytes.get(index).is_some_and(u8::is_ascii_digit);
    let separated = bytes.iter().enumerate().any(|(at, &byte)| {
        if !matches!(byte, b':' | b'/') || at == 0 || !digit_at(at - 1) || !digit_at(at + 1) {
            return false;
        }
        let start = bytes[..at]
            .iter()
            .rposition(|byte| !byte.is_ascii_digit())
            .map_or(0, |before| before + 1);
        !(start > 0 && (bytes[start - 1].is_ascii_alphabetic() || bytes[start - 1] == b'-'))
    });
    separated
        || text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| {
                word.len() == 4
                    && word.starts_with(['1', '2'])
                    && word.bytes().all(|byte| byte.is_ascii_digit())
            })
}

/// `sentence` without the mark that numbers it in a list (`2. Click on the TSP tile`, `(3)`,
/// `1)`, `①`): a step's place in a list states no number of what was asked.
pub(crate) fn without_list_mark(sentence: &str) -> &str {
    let trimmed = sentence.trim_start();
    let circled = trimmed.strip_prefix(|c: char| ('①'..='⑳').contains(&c));
    let numbered = || {
        let inner = trimmed.strip_prefix(['(', '（']).unwrap_or(trimmed);
        let rest = inner.trim_start_matches(|c: char| c.is_ascii_digit());
        let digits = inner.len() - rest.len();
        let closed = rest.strip_prefix(['.', ')', '）', '．']);
        (digits > 0 && digits <= 2).then_some(closed).flatten()
    };
    // A decimal (`2.5 hours`) is no mark: a digit follows its dot.
    circled
        .or_else(numbered)
        .filter(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(sentence)
}

/// Whether a sentence (lower-cased) states a time of day: `9:30`, `11時45分`, `17時まで`
/// (not `8時間`, a duration), `10 a.m.`, noon, 正午, 午前 or 午後.
fn states_a_time_of_day(sentence: &str) -> bool {
    let chars: Vec<char> = sentence.chars().collect();
    let digit = |c: &char| c.is_ascii_digit() || ('０'..='９').contains(c);
    let clock = chars.windows(3).any(|w| {
        digit(&w[0])
            && ((w[1] == ':' || w[1] == '：') && digit(&w[2]) || w[1] == '時' && w[2] != '間')
    }) || chars.last().is_some_and(|&c| c == '時')
        && chars.iter().rev().nth(1).is_some_and(digit);
    clock
        || ["a.m.", "p.m.", "noon", "midnight", "正午", "午前", "午後"]
            .iter()
            .any(|word| sentence.contains(word))
        || ["am", "pm"].iter().any(|word| {
            sentence.match_indices(word).any(|(at, _)| {
                let before = sentence[..at].trim_end().chars().next_back();
                let after = sentence[at + word.len()..].chars().next();
                before.is_some_and(|c| c.is_ascii_digit())
                    && !after.is_some_and(char::is_alphanumeric)
            })
        })
}

/// The kind of thing a question (lower-cased) names with "what X" or "which X" when it is no
/// amount, number or time ("what service do they use" → `service`, "which form do I fill out"
/// → `form`, "what type of leave" → `leave`): it wants a name of that kind, whatever else its
/// words are about. A kind whose phrase holds a word of money or time ("what hotel allowance
/// per night does …") is measured, not named.
fn named_kind(question: &str) -> Option<&str> {
    question.split([',', ';']).find_map(|clause| {
        let words: Vec<&str> = clause
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|word| !word.is_empty())
            .collect();
        let [opener @ ("what" | "which"), rest @ ..] = words.as_slice() else {
            return None;
        };
        let phrase: Vec<&str> = rest
            .iter()
            .copied()
            .take_while(|word| !QUESTION_VERBS.contains(word))
            .collect();
        let kind = match phrase.as_slice() {
            [general, "of", kind, ..] if GENERAL_KINDS.contains(general) => *kind,
            [kind, ..] => *kind,
            [] => return None,
        };
        if NOT_A_KIND.contains(&kind) {
            return None;
        }
        let first = format!("{opener} {}", phrase[0]);
        let measured = WORDINGS
            .iter()
            .flat_map(|(_, wordings)| wordings.iter())
            .any(|wording| phrase.contains(wording) || *wording == first);
        (!measured).then_some(kind)
    })
}

/// Japanese wordings that ask what to file.
const FILING_WORDINGS: [&str; 5] = ["何を出", "何を提出", "手続き", "何が必要", "届け出"];

/// What a sentence names when it says what to file: a notice, a request, an application.
const FILINGS: [&str; 8] = ["届", "願", "申請", "申し出", "提出", "許可", "承認", "申込"];

/// Kinds of thing known by a proper name: "which form" is answered by "OPM Form 630", "what
/// password manager" by "KeePassXC".
const NAMED_KINDS: [&str; 14] = [
    "tool",
    "app",
    "application",
    "software",
    "service",
    "form",
    "system",
    "platform",
    "program",
    "manager",
    "browser",
    "vendor",
    "provider",
    "product",
];

/// Words that name a kind only through the one after their "of": "what type of leave".
const GENERAL_KINDS: [&str; 5] = ["type", "kind", "sort", "group", "form"];

/// Whether a question (lower-cased) asks how to do something: its answer is a procedure.
pub(crate) fn asks_for_steps(question: &str) -> bool {
    STEP_WORDINGS
        .iter()
        .any(|wording| contains_wording(question, wording))
}

/// Wordings of a question asking for a procedure.
const STEP_WORDINGS: [&str; 16] = [
    "how do i",
    "how can i",
    "how should i",
    "how do we",
    "how to",
    "what steps",
    "the steps",
    "the process",
    "what do i have to do",
    "what do i need to do",
    "どうすれば",
    "どうやって",
    "どうしたら",
    "手順",
    "方法",
    "やり方",
];

/// Words after "what" that do not name a kind of thing: "what is", "what do I", "what if".
const NOT_A_KIND: [&str; 24] = [
    "is", "are", "was", "were", "do", "does", "did", "can", "could", "should", "will", "would",
    "may", "must", "has", "have", "had", "happens", "happened", "if", "about", "else", "to", "the",
];

/// Whether a question (lower-cased) asks for a yes or a no: in English a clause opens with a
/// verb ("can I …", "if I quit, do they …"), or after a condition without its comma the verb
/// comes before its subject ("if I leave do I get …"), and no clause opens with a question
/// word; in Japanese it ends as a question and holds no question word (「副業してもいいの？」).
fn asks_yes_or_no(question: &str) -> bool {
    let openers: Vec<&str> = question
        .split([',', ';', '、'])
        .filter_map(|clause| {
            clause
                .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
                .find(|word| !word.is_empty())
        })
        .collect();
    if openers.iter().any(|word| QUESTION_WORDS.contains(word)) {
        return false;
    }
    if openers.iter().any(|word| QUESTION_VERBS.contains(word))
        || inverted_after_condition(question)
    {
        return true;
    }
    let japanese = !question.is_ascii();
    let Some(body) = question.trim_end().strip_suffix(['？', '?', 'か']) else {
        return false;
    };
    // 「妻が出産したときは？」 names a case and asks what holds for it, not whether it holds.
    let names_a_case = ["は", "だと", "なら", "では", "の場合"]
        .iter()
        .any(|ending| body.ends_with(ending));
    japanese
        && !names_a_case
        && !JAPANESE_QUESTION_WORDS
            .iter()
            .any(|word| question.contains(word))
}

/// Whether an English question opening with a condition ("if I leave do I get a payout …")
/// then puts a verb before its subject, as a question asking whether does, and holds no
/// question word ("if I leave how long do I have" asks how long).
fn inverted_after_condition(question: &str) -> bool {
    let words: Vec<&str> = question
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .filter(|word| !word.is_empty())
        .collect();
    let conditional = words
        .first()
        .is_some_and(|word| matches!(*word, "if" | "once" | "after" | "before" | "while"));
    conditional
        && !words.iter().any(|word| QUESTION_WORDS.contains(word))
        && words.windows(2).any(|pair| {
            QUESTION_VERBS.contains(&pair[0])
                && matches!(pair[1], "i" | "we" | "you" | "they" | "it" | "he" | "she")
        })
}

/// English words that open a question asking for something other than a yes or a no.
pub(crate) const QUESTION_WORDS: [&str; 14] = [
    "what", "what's", "which", "how", "how's", "where", "where's", "who", "who's", "whom", "whose",
    "why", "when", "whats",
];
/// Japanese question words: a question holding one asks for something other than a yes or a no.
pub(crate) const JAPANESE_QUESTION_WORDS: [&str; 13] = [
    "何",
    "いつ",
    "どこ",
    "誰",
    "だれ",
    "どう",
    "どの",
    "どれ",
    "どちら",
    "どんな",
    "いくら",
    "なぜ",
    "幾",
];
/// Words that say yes or no to something: a negation, a permission, an obligation.
const RULINGS: [&str; 19] = [
    "not",
    "no",
    "never",
    "cannot",
    "only",
    "must",
    "allowed",
    "permitted",
    "prohibited",
    "forbidden",
    "required",
    "require",
    "requires",
    "eligible",
    "forfeited",
    "expire",
    "automatic",
    "yes",
    "none",
];
const JAPANESE_RULINGS: [&str; 10] = [
    "ない",
    "ません",
    "禁止",
    "できる",
    "できます",
    "必要",
    "不要",
    "認め",
    "限り",
    "可能",
];

const CURRENCY_SIGNS: [&str; 6] = ["$", "¥", "€", "£", "円", "ドル"];
const CURRENCY_WORDS: [&str; 8] = [
    "usd", "jpy", "eur", "dollar", "dollars", "yen", "euro", "euros",
];
const KANJI_NUMBERS: [char; 10] = ['一', '二', '三', '四', '五', '六', '七', '八', '九', '十'];

/// What counts a kanji numeral: a unit, a counter, an ordinal's or a larger numeral after it
/// (「三日」「五名」「十万円」「二つ」「一か月」「第二次」「十九世紀」「第三条」). Without one the
/// numeral is part of a word that states no number: 一般, 一部, 統一, 一致, 一覧, 一定, 唯一.
const KANJI_COUNTERS: [char; 44] = [
    '日', '週', '月', '年', '時', '分', '秒', '回', '人', '名', '件', '個', 'つ', '円', '割', '歳',
    '才', 'か', 'ヶ', 'カ', 'ケ', '度', '倍', '枚', '台', '万', '千', '百', '十', '億', '泊', '次',
    '世', '期', '代', '条', '章', '項', '号', '位', '等', '級', '冊', '階',
];

/// Whether `text` writes a number in kanji: a numeral followed by a counter or another numeral
/// (「三日」「十万円」), not one inside a word (「一般的」「一部」「一時的」). 「十分」 is "enough"
/// as often as ten minutes, which are written 10分.
fn holds_kanji_number(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len().saturating_sub(1)).any(|at| {
        let (numeral, next) = (chars[at], chars[at + 1]);
        let word = match (numeral, next) {
            ('十', '分') => true,
            // 「一時的」「一時金」, not 「一時間」.
            ('一', '時') => chars.get(at + 2) != Some(&'間'),
            _ => false,
        };
        KANJI_NUMBERS.contains(&numeral)
            && (KANJI_COUNTERS.contains(&next) || KANJI_NUMBERS.contains(&next))
            && !word
    })
}

const NUMBER_WORDS: [&str; 14] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve",
    "twice", "once", "half",
];
const TIME_UNITS: [&str; 29] = [
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "year",
    "分",
    "時",
    "日",
    "週",
    "月",
    "年",
    "営業日",
    "ヶ月",
    "か月",
    "カ月",
    "半期",
    "quarter",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
/// Wordings that say a quantity is set case by case, or elsewhere: the answer a rule gives
/// when it fixes none (「慶弔見舞金の金額は、その都度決定する。」 for 「金額はいくら？」).
const SET_CASE_BY_CASE: [&str; 7] = [
    "都度決定",
    "都度定め",
    "別途定め",
    "個別に定め",
    "個別に決定",
    "case by case",
    "case-by-case",
];
const TIME_WORDS: [&str; 29] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "today",
    "tomorrow",
    "immediately",
    "annually",
    "monthly",
    "weekly",
    "daily",
    "yearly",
    "before",
    "after",
    "end of",
    "start of",
    "beginning of",
    "period",
    "末",
    "毎月",
    "毎週",
    "毎年",
    "翌月",
    "月末",
    "前日",
    "当日",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_a_question_asks_for() {
        for (question, kind) in [
            (
                "How much can I spend on a home office?",
                Some(Asked::Amount),
            ),
            ("在宅勤務の手当っていくら？", Some(Asked::Amount)),
            ("承認まで何日かかる？", Some(Asked::Number)),
            ("有給はいつから使える？", Some(Asked::Time)),
            ("長さをいくつか並べたものを何と呼ぶ？", None),
            ("党大会が開催されたのは西暦何年か？", Some(Asked::Time)),
            ("派遣されているのは何名か。", Some(Asked::Number)),
            (
                "どれくらいの頻度で確認するかをまとめた一覧表を何と呼ぶ？",
                None,
            ),
            ("How many days of leave do I get?", Some(Asked::Number)),
            ("How much annual leave do I earn?", Some(Asked::Time)),
            (
                "How much storage does a workspace include?",
                Some(Asked::Number),
            ),
            ("有給休暇は何日もらえますか？", Some(Asked::Number)),
            (
                "テストカバレッジの目安ってどのくらい？",
                Some(Asked::Number),
            ),
            ("書類の保存期間はどれくらい？", Some(Asked::Time)),
            ("交通費の上限ってどれぐらい？", Some(Asked::Number)),
            ("When is payday?", Some(Asked::Time)),
            ("申請は何日前までに出せばいい？", Some(Asked::Time)),
            ("休憩は何時から何時？", Some(Asked::Clock)),
            ("What time does the office open?", Some(Asked::Clock)),
            (
                "what hours can they be reached by phone?",
                Some(Asked::Clock),
            ),
            ("残業は月に何時間まで？", Some(Asked::Time)),
            ("So when do I hear back?", Some(Asked::Time)),
            (
                "I'm resigning - by when should I tell my manager?",
                Some(Asked::Time),
            ),
            (
                "What kind of leave do I use when I get called for jury duty?",
                None,
            ),
            ("What is the procedure to request leave?", None),
            ("Who approves travel?", None),
            ("can my last day be a federal holiday?", Some(Asked::Ruling)),
            (
                "if I quit, do they pay me for my leftover award leave?",
                Some(Asked::Ruling),
            ),
            ("ツクロアって副業してもいいの？", Some(Asked::Ruling)),
            (
                "if I leave do I get a payout for my unused leave?",
                Some(Asked::Ruling),
            ),
            (
                "if I leave how long do I have to return my laptop?",
                Some(Asked::Time),
            ),
            ("妻が出産したときは？", None),
            (
                "my mortgage lender wants to verify my salary, what service do they use?",
                Some(Asked::Name),
            ),
            (
                "which password manager are we supposed to be using?",
                Some(Asked::Name),
            ),
            ("what comes in the remote worker home kit?", None),
            ("what type of tribe celebrated daylight returning?", None),
            ("what date is payday?", Some(Asked::Time)),
            (
                "ツクロアで夜10時過ぎに作業したいときの手続きは？",
                Some(Asked::Filing),
            ),
            ("有給使いたいとき、何を出せばいい？", Some(Asked::Filing)),
            (
                "will they reimburse me for checking two bags?",
                Some(Asked::Ruling),
            ),
            (
                "is there a cap on how much award leave I can get?",
                Some(Asked::Time),
            ),
            ("what budget do we have for books?", Some(Asked::Amount)),
            ("what's the referral bonus?", Some(Asked::Amount)),
            ("デンキヤギの法定休日は何曜日？", None),
            ("How do I request leave?", None),
            (
                "how much is the monthly transit subsidy?",
                Some(Asked::Amount),
            ),
            ("how do I sign up for the transit subsidy?", None),
            ("Tell me about leave", None),
            (
                "What hotel allowance per night does DenkiYagi pay in Tokyo?",
                Some(Asked::Amount),
            ),
        ] {
            assert_eq!(asked(question), kind, "{question}");
        }
    }

    #[test]
    fn a_place_in_a_list_states_no_number() {
        for step in [
            "2. Click on the TSP tile to edit your contributions",
            "(3) Send the form",
            "1) Log in",
            "① 申請書を出す",
        ] {
            assert!(!states(step, Asked::Number), "{step}");
        }
        for stated in [
            "2. Contribute up to 5% of your pay",
            "2.5 hours a week",
            "1. 本人が結婚したとき・・・5日",
            "10 days of leave",
            "Give it half a day",
        ] {
            assert!(states(stated, Asked::Number), "{stated}");
        }
        let speaking = "You'll discuss the work you do on behalf of GSA, often in Europe.";
        assert!(!states(speaking, Asked::Number), "behalf, often");
        assert!(!states("Europe has 27 states.", Asked::Amount));
        assert!(states("It costs 20 euros.", Asked::Amount));
    }

    #[test]
    fn tells_a_question_asking_for_steps() {
        for question in [
            "how do i sign up for the transit subsidy?",
            "what do i have to do before i go abroad?",
            "有給休暇の申請ってどうやってやるの？",
            "経費精算の手順は？",
        ] {
            assert!(asks_for_steps(question), "{question}");
        }
        for question in [
            "how long is parental leave?",
            "how does the bonus work?",
            "有給は何日？",
        ] {
            assert!(!asks_for_steps(question), "{question}");
        }
    }

    #[test]
    fn reads_the_kind_a_question_names() {
        for (question, kind) in [
            ("what floor is the new york office on?", Some("floor")),
            (
                "which form do i fill out to ask for donated leave?",
                Some("form"),
            ),
            (
                "what type of tribe celebrated daylight returning?",
                Some("tribe"),
            ),
            (
                "my lender wants my salary, what service do they use?",
                Some("service"),
            ),
            ("what hotel allowance per night does it pay?", None),
            ("what is the dress code?", None),
            ("what about the starter plan?", None),
            ("what time does the office open?", None),
            ("who approves travel?", None),
        ] {
            assert_eq!(named_kind(question), kind, "{question}");
        }
    }

    #[test]
    fn what_to_file_is_a_notice_a_request_or_an_application() {
        assert!(states(
            "深夜業を希望する者は、事前に会社に申し出なければならない。",
            Asked::Filing
        ));
        assert!(states("休暇届を提出する。", Asked::Filing));
        assert!(!states(
            "深夜労働手当は、午後10時から午前5時までの労働に支給する。",
            Asked::Filing
        ));
    }

    #[test]
    fn a_date_or_a_time_in_digits_is_not_a_name_or_a_label() {
        for (sentence, stated) in [
            ("As of 8/18/25, TTS is located in the 2400 wing.", true),
            ("The office opens at 9:30.", true),
            ("The carnival has been held since at least 1670.", true),
            (
                "すべての重大インシデント(SEV-2/1)に対し、ポストモーテムを行います。",
                false,
            ),
            ("Location: 230 S. Dearborn St.", false),
        ] {
            assert_eq!(states(sentence, Asked::Time), stated, "{sentence}");
        }
    }

    #[test]
    fn a_name_is_a_capitalised_word_or_an_acronym_the_question_does_not_hold() {
        let question = stemmed_terms("which password manager do we use at GSA?");
        let holds = |sentence: &str| holds_a_name(sentence, &question);
        assert!(holds("We recommend using KeePassXC on every laptop."));
        assert!(holds("1. Complete the VLTP application and send it on."));
        assert!(!holds("Use a password manager to store your passwords."));
        assert!(!holds("GSA requires a password manager."));
        assert!(!holds("Passwords must be long, and I mean long."));
    }

    #[test]
    fn tells_a_sentence_that_states_it_from_one_that_restates_the_question() {
        assert!(states(
            "The home office budget is $500 per year.",
            Asked::Amount
        ));
        assert!(states("在宅勤務手当は月額5,000円です。", Asked::Amount));
        assert!(!states(
            "The home office budget covers desks and chairs.",
            Asked::Amount
        ));
        assert!(states("You get 20 days.", Asked::Number));
        assert!(!states("Leave is granted by your manager.", Asked::Number));
        assert!(states("Payday is the 25th of each month.", Asked::Time));
        assert!(states("給与は毎月25日に支払う。", Asked::Time));
        assert!(!states("Payroll is run by the finance team.", Asked::Time));
        assert!(states(
            "休憩時間は11時45分から12時45分とする。",
            Asked::Clock
        ));
        assert!(states("始業は9時、終業は18時とする。", Asked::Clock));
        assert!(!states("所定労働時間は1日8時間とする。", Asked::Clock));
        assert!(states("The office opens at 9:30.", Asked::Clock));
        assert!(states("Core hours are 10am to 3 pm.", Asked::Clock));
        assert!(!states("Spam filters drop 3 emails a day.", Asked::Clock));
        assert!(states("Award leave is not paid out.", Asked::Ruling));
        assert!(states("Credit hours never expire.", Asked::Ruling));
        assert!(states("マイカー通勤は原則として認めない。", Asked::Ruling));
        assert!(!states(
            "Award leave is granted for service.",
            Asked::Ruling
        ));
    }

    #[test]
    fn a_quantity_set_case_by_case_is_one_stated() {
        assert!(states(
            "慶弔見舞金の金額は、その都度決定する。",
            Asked::Amount
        ));
        assert!(states(
            "The number of seats is decided case by case.",
            Asked::Number
        ));
        assert!(!states(
            "慶弔見舞金は、申請があった場合に支給する。",
            Asked::Amount
        ));
    }

    #[test]
    fn a_kanji_numeral_is_a_number_only_before_a_counter() {
        for stated in [
            "有給休暇は十日とする。",
            "三か月ごとに見直す。",
            "上限は十万円。",
            "一時間ごとに記録する。",
            "第二次世界大戦の後に始まった。",
        ] {
            assert!(states(stated, Asked::Number), "{stated}");
        }
        for none in [
            "一般的なテストの観点は省略する。",
            "一部の社員に適用する。",
            "十分に注意すること。",
            "一時的に停止する。",
        ] {
            assert!(!states(none, Asked::Number), "{none}");
        }
    }
}
