//! Questions that ask where to reach someone or something — a website, an email address, a
//! phone number, a street address, whom to contact — and whether a sentence gives one. Each is
//! seen in a sentence's characters (`https://`, `@`, a phone number's digits, `Suite 5685`),
//! so a line that only names the topic ("Dental and vision plan") gives way to the row that
//! links it.

use super::{contains_wording, Asked};

/// Question wordings that ask for each way to reach something, lower-cased, tried in this
/// order: a question that only mentions one (「住所から場所の特定が容易になる制度とは？」,
/// "Google keeps a list of malicious sites") asks for something else.
const WORDINGS: [(Asked, &[&str]); 5] = [
    (
        Asked::Website,
        &[
            "which website",
            "what website",
            "what's the website",
            "website for",
            "web site for",
            "which site",
            "what site",
            "url for",
            "what's the url",
            "what link",
            "which link",
            "the link to",
            "portal for",
            "サイトは",
            "サイトのurl",
            "urlは",
            "ホームページは",
            "リンクは",
        ],
    ),
    (
        Asked::Email,
        &[
            "email address",
            "e-mail address",
            "what email",
            "which email",
            "what's the email",
            "メールアドレスは",
            "メールアドレスを教え",
        ],
    ),
    (
        Asked::Phone,
        &[
            "phone number",
            "telephone number",
            "number to call",
            "number do i call",
            "電話番号は",
            "電話番号を教え",
        ],
    ),
    (
        Asked::Address,
        &[
            "street address",
            "mailing address",
            "what's the address",
            "what is the address",
            "住所は",
            "住所を教え",
        ],
    ),
    (
        Asked::Contact,
        &[
            "who do i contact",
            "who should i contact",
            "who can i contact",
            "who do i ask",
            "who should i ask",
            "who can i ask",
            "who do i talk to",
            "who should i talk to",
            "who do i email",
            "who do i reach out to",
            "who do i send",
            "who should i send",
            "who do i notify",
            "who do i tell",
            "連絡先は",
            "問い合わせ先は",
            "問合せ先は",
            "誰に連絡",
            "誰に相談",
            "どこに連絡",
            "どこに問い合わせ",
        ],
    ),
];

/// The way to reach something `question` (lower-cased) asks for, if it asks for one.
pub(super) fn asked_reach(question: &str) -> Option<Asked> {
    WORDINGS
        .iter()
        .find(|(_, wordings)| {
            wordings
                .iter()
                .any(|wording| contains_wording(question, wording))
        })
        .map(|(kind, _)| *kind)
}

/// Top-level domains a bare web address ends with (`benefeds.com`, `vltp.gsa.gov`).
const DOMAINS: [&str; 10] = [
    "com", "gov", "org", "net", "edu", "io", "dev", "app", "jp", "us",
];

/// A link (`https://`, `www.`) or a bare domain not part of an email address.
pub(super) fn has_web_address(sentence: &str) -> bool {
    if sentence.contains("http://") || sentence.contains("https://") || sentence.contains("www.") {
        return true;
    }
    sentence
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '"' | '“' | '”'))
        .filter(|word| !word.contains('@'))
        .any(|word| {
            let host = word.trim_end_matches(['.', ':', ';']);
            let host = host.split('/').next().unwrap_or_default();
            host.rsplit_once('.').is_some_and(|(name, domain)| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
                    && DOMAINS.contains(&domain)
            })
        })
}

/// A sentence (lower-cased, as the others here) with `name@host.domain`.
pub(super) fn has_email_address(sentence: &str) -> bool {
    sentence.match_indices('@').any(|(at, _)| {
        let before = sentence[..at].chars().next_back();
        let after = &sentence[at + 1..];
        let host: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
            .collect();
        before.is_some_and(|c| c.is_ascii_alphanumeric())
            && host.trim_end_matches('.').contains('.')
    })
}

/// A run of digits and separators (`800-367-5690`, `(03) 1234-5678`, `+81 3 1234-5678`) that
/// reads as a phone number: 9 to 15 digits in at most five groups, the last of four or more,
/// split by something other than spaces alone. A date (`2024-01-15`) holds eight digits; a row
/// of decimals (`0.5 1.5 2.5 …`) ends in a short group; a row of years has only spaces.
pub(super) fn has_phone_number(sentence: &str) -> bool {
    let is_part = |c: char| c.is_ascii_digit() || matches!(c, '-' | '(' | ')' | '+' | '.' | ' ');
    sentence.split(|c: char| !is_part(c)).any(|run| {
        let run = run.trim_matches([' ', '.']);
        let groups: Vec<&str> = run
            .split(|c: char| !c.is_ascii_digit())
            .filter(|group| !group.is_empty())
            .collect();
        let digits: usize = groups.iter().map(|group| group.len()).sum();
        let marked = run.contains(['-', '(', ')', '+', '.']);
        (9..=15).contains(&digits)
            && groups.len() <= 5
            && groups.last().is_some_and(|group| group.len() >= 4)
            && marked
    })
}

/// Words of a street address, each beside a number in it (`230 S. Dearborn St.`,
/// `50 United Nations Plaza Suite #5685`, `千代田区丸の内1-1-1`).
const STREET_WORDS: [&str; 16] = [
    "street",
    "st.",
    "avenue",
    "ave",
    "plaza",
    "blvd",
    "boulevard",
    "road",
    "suite",
    "floor",
    "drive",
    "〒",
    "丁目",
    "番地",
    "区",
    "市",
];

pub(super) fn has_street_address(sentence: &str) -> bool {
    sentence.chars().any(|c| c.is_ascii_digit())
        && STREET_WORDS.iter().any(|word| match word.is_ascii() {
            true => contains_wording(sentence, word.trim_end_matches('.')),
            false => sentence.contains(word),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_which_way_to_reach_something_a_question_asks_for() {
        for (question, kind) in [
            (
                "which website do i use for dental and vision insurance?",
                Some(Asked::Website),
            ),
            ("what's the work number's phone number?", Some(Asked::Phone)),
            (
                "what's the street address of the san francisco office?",
                Some(Asked::Address),
            ),
            (
                "who do i ask about getting my badge to work in another building?",
                Some(Asked::Contact),
            ),
            (
                "i'm resigning - who do i send my notice to?",
                Some(Asked::Contact),
            ),
            ("経費精算の問い合わせ先は？", Some(Asked::Contact)),
            ("本社の住所は？", Some(Asked::Address)),
            ("住所から場所の特定が容易になる制度とは？", None),
            (
                "googleは悪意あるサイトの一覧を保持しており、何をつけた？",
                None,
            ),
            ("who approves travel?", None),
            ("who's the point of contact for the chicago office?", None),
            ("can i work on site on fridays?", None),
        ] {
            assert_eq!(asked_reach(question), kind, "{question}");
        }
    }

    #[test]
    fn tells_a_sentence_that_gives_the_way_from_one_that_names_the_topic() {
        let gives = |sentence: &str, asked| super::super::states(sentence, asked);
        assert!(gives(
            "Benefit: Dental and Vision Insurance · Link: https://www.benefeds.com",
            Asked::Website
        ));
        assert!(gives("Go to vltp.gsa.gov and log in.", Asked::Website));
        assert!(!gives("Dental and vision plan", Asked::Website));
        assert!(!gives("Email leavingTTS@gsa.gov today.", Asked::Website));
        assert!(!gives("It is version 1.2 of the form.", Asked::Website));
        assert!(gives(
            "Please send a separation email to leavingTTS@gsa.gov.",
            Asked::Contact
        ));
        assert!(!gives("Tag @channel in Slack.", Asked::Email));
        assert!(gives(
            "800-367-5690 (Monday through Friday, 8:00 AM to 8:00 PM EST)",
            Asked::Phone
        ));
        assert!(gives("電話番号は(03) 1234-5678です。", Asked::Phone));
        assert!(!gives("Submitted on 2024-01-15.", Asked::Phone));
        assert!(!gives("Call 5 times a day.", Asked::Phone));
        assert!(!gives(
            "0.5年 1.5年 2.5年 3.5年 4.5年 5.5年 6.5年以上",
            Asked::Phone
        ));
        assert!(!gives("0.5 1.5 2.5 3.5 4.5 5.5 6.5 7.5 8.5", Asked::Phone));
        assert!(!gives("2024 2025 2026", Asked::Phone));
        assert!(gives(
            "Location: 50 United Nations Plaza Suite #5685, San Francisco, CA 94102",
            Asked::Address
        ));
        assert!(!gives(
            "San Francisco is a very walkable city with plenty of hotels.",
            Asked::Address
        ));
    }
}
