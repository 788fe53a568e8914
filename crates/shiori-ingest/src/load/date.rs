//! Just enough date parsing for record timestamps (`YYYY-MM-DD` and RFC 3339), so that the
//! crate needs no calendar dependency.

/// Seconds since the Unix epoch for `YYYY-MM-DD` (midnight UTC) or an RFC 3339 timestamp
/// (`T` or a space between date and time; no offset means UTC). `None` when it is neither.
pub(super) fn parse_timestamp(text: &str) -> Option<i64> {
    let mut cursor = Cursor(text.trim().as_bytes());
    let year = cursor.digits(4)?;
    cursor.expect(b'-')?;
    let month = cursor.digits(2)?;
    cursor.expect(b'-')?;
    let day = cursor.digits(2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let date = days_from_civil(year, month, day) * 86_400;
    if cursor.0.is_empty() {
        return Some(date);
    }
    if !matches!(cursor.next()?, b'T' | b't' | b' ') {
        return None;
    }
    let hour = cursor.digits(2)?;
    cursor.expect(b':')?;
    let minute = cursor.digits(2)?;
    let second = if cursor.peek() == Some(b':') {
        cursor.expect(b':')?;
        cursor.digits(2)?
    } else {
        0
    };
    // Leap seconds (`:60`) are allowed by RFC 3339.
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    if cursor.peek() == Some(b'.') {
        cursor.expect(b'.')?;
        cursor.skip_digits();
    }
    let offset = match cursor.next() {
        None | Some(b'Z' | b'z') => 0,
        Some(sign @ (b'+' | b'-')) => {
            let hours = cursor.digits(2)?;
            if cursor.peek() == Some(b':') {
                cursor.expect(b':')?;
            }
            let minutes = cursor.digits(2)?;
            let offset = hours * 3_600 + minutes * 60;
            if sign == b'-' {
                -offset
            } else {
                offset
            }
        }
        Some(_) => return None,
    };
    if !cursor.0.is_empty() {
        return None;
    }
    Some(date + hour * 3_600 + minute * 60 + second - offset)
}

struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn next(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    fn peek(&self) -> Option<u8> {
        self.0.first().copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn digits(&mut self, count: usize) -> Option<i64> {
        let mut value = 0;
        for _ in 0..count {
            let digit = self.next().filter(u8::is_ascii_digit)?;
            value = value * 10 + i64::from(digit - b'0');
        }
        Some(value)
    }

    fn skip_digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.0 = &self.0[1..];
        }
    }
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_dates_as_utc_midnight() {
        assert_eq!(parse_timestamp("1970-01-01"), Some(0));
        assert_eq!(parse_timestamp("2024-03-01"), Some(1_709_251_200));
        assert_eq!(parse_timestamp("2000-02-29"), Some(951_782_400));
    }

    #[test]
    fn parses_rfc3339_with_offsets_and_fractions() {
        assert_eq!(parse_timestamp("2024-03-01T00:00:00Z"), Some(1_709_251_200));
        assert_eq!(
            parse_timestamp("2024-03-01T09:00:00+09:00"),
            Some(1_709_251_200)
        );
        assert_eq!(
            parse_timestamp("2024-02-29 19:00:00.250-05:00"),
            Some(1_709_251_200)
        );
        assert_eq!(parse_timestamp("2024-03-01T00:00"), Some(1_709_251_200));
    }

    #[test]
    fn rejects_what_is_not_a_date() {
        for text in [
            "",
            "yesterday",
            "2023-02-29",
            "2024-13-01",
            "2024-01-01T25:00:00Z",
            "2024-01-01T10:00:00Zjunk",
            "2024-1-1",
        ] {
            assert_eq!(parse_timestamp(text), None, "{text}");
        }
    }
}
