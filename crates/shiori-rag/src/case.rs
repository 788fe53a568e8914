//! The question's case, read as quantities ("片道5km", "about 5 years"), and the rows of a
//! table or list that cover it ("2km以上10km未満 · 210円", "Between 3 and 15 years: 6 hours"):
//! such a row is the one the question is about, though it shares none of its words but the
//! unit. Reading a range needs no knowledge of the document: its bounds are said with the same
//! few words in every handbook (以上, 未満, "fewer than", "15+").

/// A quantity the question states: a value and its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Quantity {
    value: f64,
    unit: Unit,
}

/// The units a case is stated in, each however it is spelt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Kilometre,
    Mile,
    Year,
    Month,
    Week,
    Day,
    Hour,
    Person,
    Percent,
}

/// Spellings of each unit after a number, longest first where one begins another.
const UNITS: [(&str, Unit); 30] = [
    ("kilometers", Unit::Kilometre),
    ("kilometres", Unit::Kilometre),
    ("km", Unit::Kilometre),
    ("キロメートル", Unit::Kilometre),
    ("キロ", Unit::Kilometre),
    ("miles", Unit::Mile),
    ("mile", Unit::Mile),
    ("years", Unit::Year),
    ("year", Unit::Year),
    ("yrs", Unit::Year),
    ("年", Unit::Year),
    ("months", Unit::Month),
    ("month", Unit::Month),
    ("ヶ月", Unit::Month),
    ("か月", Unit::Month),
    ("カ月", Unit::Month),
    ("ヵ月", Unit::Month),
    ("weeks", Unit::Week),
    ("week", Unit::Week),
    ("週間", Unit::Week),
    ("days", Unit::Day),
    ("day", Unit::Day),
    ("日", Unit::Day),
    ("hours", Unit::Hour),
    ("hour", Unit::Hour),
    ("時間", Unit::Hour),
    ("people", Unit::Person),
    ("employees", Unit::Person),
    ("人", Unit::Person),
    ("%", Unit::Percent),
];

/// Number words a question may state its case with ("five years").
const NUMBER_WORDS: [&str; 13] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];

/// A number followed by its unit, where it stands in the text.
#[derive(Debug, Clone, Copy)]
struct Mention {
    quantity: Quantity,
    /// Byte offsets of the number's first character, of its end and of the end of its unit.
    start: usize,
    number_end: usize,
    end: usize,
}

/// A range a row states: values from `low` to `high`, each bound included or not.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    unit: Unit,
    low: Option<Bound>,
    high: Option<Bound>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound {
    value: f64,
    included: bool,
}

impl Span {
    /// The range from `low` up, of `bound`'s unit.
    fn from((bound, low): (Mention, Bound)) -> Span {
        Span {
            unit: bound.quantity.unit,
            low: Some(low),
            high: None,
        }
    }

    fn covers(&self, quantity: &Quantity) -> bool {
        let above = |bound: &Bound| match bound.included {
            true => quantity.value >= bound.value,
            false => quantity.value > bound.value,
        };
        let below = |bound: &Bound| match bound.included {
            true => quantity.value <= bound.value,
            false => quantity.value < bound.value,
        };
        self.unit == quantity.unit
            && self.low.as_ref().is_none_or(above)
            && self.high.as_ref().is_none_or(below)
    }
}

/// The quantities `question` states, digits or number words with a unit ("5km", "five
/// years"); dates ("2024年", "4月1日") are none.
pub(crate) fn quantities(question: &str) -> Vec<Quantity> {
    let lower = question.to_lowercase();
    let mut found: Vec<Quantity> = mentions(&lower)
        .into_iter()
        .map(|mention| mention.quantity)
        .collect();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    for pair in words.windows(2) {
        let value = NUMBER_WORDS.iter().position(|word| *word == pair[0]);
        let unit = UNITS
            .iter()
            .find(|(spelling, _)| *spelling == pair[1])
            .map(|(_, unit)| *unit);
        if let (Some(value), Some(unit)) = (value, unit) {
            found.push(Quantity {
                value: value as f64,
                unit,
            });
        }
    }
    found
}

/// Whether `row` states a range that covers one of `asked`: the row of a table or list for the
/// question's case.
pub(crate) fn covers_any(row: &str, asked: &[Quantity]) -> bool {
    !asked.is_empty()
        && spans(row)
            .iter()
            .any(|span| asked.iter().any(|quantity| span.covers(quantity)))
}

/// The ranges `text` states: a pair of bounds ("2km以上10km未満", "between 3 and 15 years",
/// "3-15 years") or one bound ("15+ years", "fewer than 3 years", "30時間未満").
fn spans(text: &str) -> Vec<Span> {
    let lower = text.to_lowercase();
    let mentions = mentions(&lower);
    let mut spans = Vec::new();
    let mut pending: Option<(Mention, Bound)> = None;
    for mention in &mentions {
        let quantity = mention.quantity;
        let bound = |included| Bound {
            value: quantity.value,
            included,
        };
        if let Some(low) = paired_low(&lower, mention) {
            spans.push(Span {
                unit: quantity.unit,
                low: Some(Bound {
                    value: low,
                    included: true,
                }),
                high: Some(bound(true)),
            });
            continue;
        }
        match side(&lower, mention) {
            Some(Side::Low(included)) => {
                spans.extend(pending.take().map(Span::from));
                pending = Some((*mention, bound(included)));
            }
            Some(Side::High(included)) => {
                let low = pending
                    .take_if(|(earlier, _)| {
                        earlier.quantity.unit == quantity.unit
                            && lower[earlier.end..mention.start].chars().count() <= GAP
                    })
                    .map(|(_, low)| low);
                spans.push(Span {
                    unit: quantity.unit,
                    low,
                    high: Some(bound(included)),
                });
            }
            None => {}
        }
    }
    spans.extend(pending.map(Span::from));
    spans
}

/// How many characters may stand between a range's two bounds ("以上" then "10km未満",
/// ", and under 10 km").
const GAP: usize = 12;

/// Which end of a range a bound is, and whether its value is in it.
#[derive(Clone, Copy)]
enum Side {
    Low(bool),
    High(bool),
}

/// Words before a number that make it a bound ("fewer than 3 years").
const BEFORE: [(&str, Side); 11] = [
    ("fewer than", Side::High(false)),
    ("less than", Side::High(false)),
    ("under", Side::High(false)),
    ("below", Side::High(false)),
    ("up to", Side::High(true)),
    ("at most", Side::High(true)),
    ("no more than", Side::High(true)),
    ("more than", Side::Low(false)),
    ("over", Side::Low(false)),
    ("above", Side::Low(false)),
    ("at least", Side::Low(true)),
];

/// Words after a quantity that make it a bound ("3年以上", "15+ years", "5 years or more").
const AFTER: [(&str, Side); 9] = [
    ("以上", Side::Low(true)),
    ("を超え", Side::Low(false)),
    ("超", Side::Low(false)),
    ("未満", Side::High(false)),
    ("以下", Side::High(true)),
    ("まで", Side::High(true)),
    (" or more", Side::Low(true)),
    (" or less", Side::High(true)),
    (" or fewer", Side::High(true)),
];

/// The side of a range `mention` bounds, if it bounds one.
fn side(text: &str, mention: &Mention) -> Option<Side> {
    let before = text[..mention.start].trim_end();
    let after = &text[mention.end..];
    if text[mention.number_end..].starts_with('+') {
        return Some(Side::Low(true));
    }
    let ends_with_word = |phrase: &str| {
        before.ends_with(phrase)
            && !before[..before.len() - phrase.len()]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric())
    };
    BEFORE
        .iter()
        .find(|(phrase, _)| ends_with_word(phrase))
        .or_else(|| AFTER.iter().find(|(phrase, _)| after.starts_with(phrase)))
        .map(|(_, side)| *side)
}

/// The low end of a range whose high end is `mention`, when the two are said as one: "between
/// 3 and 15 years", "3 to 15 years", "3-15 years", "2〜5km".
fn paired_low(text: &str, mention: &Mention) -> Option<f64> {
    let before = &text[..mention.start];
    let (rest, joined_by_and) = [" and ", " to ", "-", "–", "〜", "～", "~"]
        .iter()
        .find_map(|joint| {
            before
                .strip_suffix(joint)
                .map(|rest| (rest, *joint == " and "))
        })?;
    let digits = rest.len() - rest.trim_end_matches(|c: char| is_number_char(c)).len();
    if digits == 0 {
        return None;
    }
    let number_start = rest.len() - digits;
    if joined_by_and && !rest[..number_start].trim_end().ends_with("between") {
        return None;
    }
    number(&rest[number_start..])
}

/// Every number in `text` (lower-cased) followed by a unit, dates left out.
fn mentions(text: &str) -> Vec<Mention> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find(|c: char| c.is_ascii_digit() || is_wide_digit(c)) {
        let start = at + offset;
        let length = text[start..]
            .find(|c: char| !is_number_char(c))
            .unwrap_or(text.len() - start);
        let number_end = start + length;
        at = number_end.max(start + 1);
        let Some(value) = number(&text[start..number_end]) else {
            continue;
        };
        let after = text[number_end..].trim_start_matches([' ', '+']);
        let Some((spelling, unit)) = UNITS
            .iter()
            .find(|(spelling, _)| after.starts_with(spelling))
        else {
            continue;
        };
        let rest = &after[spelling.len()..];
        if spelling.is_ascii()
            && spelling.chars().all(char::is_alphabetic)
            && rest.starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            continue;
        }
        let date = (*unit == Unit::Year && value >= 1000.0)
            || (*unit == Unit::Day && text[..start].ends_with(['月', '/']));
        if date {
            continue;
        }
        found.push(Mention {
            quantity: Quantity { value, unit: *unit },
            start,
            number_end,
            end: text.len() - rest.len(),
        });
    }
    found
}

fn is_wide_digit(c: char) -> bool {
    ('０'..='９').contains(&c)
}

fn is_number_char(c: char) -> bool {
    c.is_ascii_digit() || is_wide_digit(c) || matches!(c, '.' | ',' | '，')
}

/// The value of a number as written: full-width digits read as digits, thousands separators
/// skipped, a trailing dot (a sentence's end) ignored.
fn number(written: &str) -> Option<f64> {
    let plain: String = written
        .trim_end_matches(['.', ',', '，'])
        .chars()
        .filter(|c| !matches!(c, ',' | '，'))
        .map(|c| match is_wide_digit(c) {
            true => char::from(b'0' + (c as u32 - '０' as u32) as u8),
            false => c,
        })
        .collect();
    plain.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(row: &str, question: &str) -> bool {
        covers_any(row, &quantities(question))
    }

    #[test]
    fn a_japanese_table_row_covers_the_distance_asked() {
        let question = "片道5kmをチャリ通してる場合、通勤手当は1日いくら？";
        assert!(covered(
            "移動区間の距離: 2km以上10km未満 · 1日あたりの支給額: 210円",
            question
        ));
        assert!(!covered(
            "移動区間の距離: 10km以上15km未満 · 1日あたりの支給額: 355円",
            question
        ));
        assert!(!covered("移動区間の距離: 2km未満 · 支給しない", question));
        assert!(covered("移動区間の距離: 2km以上 · 210円", question));
    }

    #[test]
    fn english_ranges_cover_the_years_asked_in_digits_or_words() {
        for question in [
            "I've been a fed for about 5 years, how much leave do I get?",
            "I've worked here five years, how much leave do I get?",
        ] {
            assert!(covered(
                "Between 3 and 15 years: 6 hours per pay period",
                question
            ));
            assert!(covered("3-15 years: 6 hours per pay period", question));
            assert!(!covered(
                "Fewer than 3 years: 4 hours per pay period",
                question
            ));
            assert!(!covered("15+ years: 8 hours per pay period", question));
        }
        let fifteen = "I have 15 years of service";
        assert!(covered("15+ years: 8 hours per pay period", fifteen));
        assert!(!covered("Fewer than 15 years: 6 hours", fifteen));
        assert!(covered("15 years or more: 8 hours", fifteen));
    }

    #[test]
    fn no_range_no_unit_or_a_date_covers_nothing() {
        assert!(!covered(
            "You earn 6 hours per pay period.",
            "after 5 years?"
        ));
        assert!(!covered("Fewer than 3 weeks", "after 2 years?"));
        assert!(!covered("3年以上勤務した者", "2024年に入社した"));
        assert!(!covered("1日以上の休暇", "4月1日に入社した"));
        assert!(!covered("2km以上", "通勤手当はいくら？"));
        assert!(!covered("Overtime for over 40 hours", "what is overtime?"));
    }

    #[test]
    fn full_width_digits_and_separators_are_read() {
        assert!(covered("１，０００km以上", "片道1200kmの出張"));
        assert_eq!(number("1,000."), Some(1000.0));
    }
}
