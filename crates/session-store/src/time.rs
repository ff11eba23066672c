//! ISO 8601 timestamps as pi writes them (`2026-11-23T15:26:59.123Z`: UTC, milliseconds), without a
//! date crate.
//!
//! ```
//! use pi_session_store::{format_iso_ms, parse_iso_ms};
//!
//! assert_eq!(format_iso_ms(0), "1970-01-01T00:00:00.000Z");
//! assert_eq!(parse_iso_ms("2026-11-23T15:26:59.123Z"), Some(1_795_447_619_123));
//! assert_eq!(format_iso_ms(1_795_447_619_123), "2026-11-23T15:26:59.123Z");
//! ```

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (`month` 1–12, `day` 1–31).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Count years from March, so that the leap day is the last day of the "year".
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let shifted_month = (month + 9) % 12; // March = 0 … February = 11
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `(year, month, day)` of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Formats milliseconds since the Unix epoch like JavaScript's `Date.prototype.toISOString`.
pub fn format_iso_ms(ms: i64) -> String {
    let days = ms.div_euclid(MS_PER_DAY);
    let in_day = ms.rem_euclid(MS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let (hours, minutes) = (in_day / 3_600_000, in_day / 60_000 % 60);
    let (seconds, millis) = (in_day / 1000 % 60, in_day % 1000);
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!("{}{:06}", if year < 0 { '-' } else { '+' }, year.abs())
    };
    format!("{year}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{seconds:02}.{millis:03}Z")
}

/// Parses `YYYY-MM-DDTHH:MM[:SS[.fff…]]` followed by `Z` or `±HH:MM` (a missing zone means UTC)
/// into milliseconds since the Unix epoch; `None` for anything else.
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = bytes.get(range)?;
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        digits
            .iter()
            .try_fold(0i64, |acc, d| acc.checked_mul(10)?.checked_add(i64::from(d - b'0')))
    };
    let expect = |at: usize, byte: u8| (bytes.get(at) == Some(&byte)).then_some(());
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    expect(4, b'-')?;
    expect(7, b'-')?;
    if !matches!(bytes.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (hours, minutes) = (number(11..13)?, number(14..16)?);
    expect(13, b':')?;
    let mut at = 16;
    let mut seconds = 0;
    let mut millis = 0;
    if bytes.get(at) == Some(&b':') {
        seconds = number(at + 1..at + 3)?;
        at += 3;
        if bytes.get(at) == Some(&b'.') {
            let start = at + 1;
            let end = start + bytes[start..].iter().take_while(|b| b.is_ascii_digit()).count();
            if end == start {
                return None;
            }
            // Milliseconds from the first three digits; more precision is dropped.
            let first_three = &text[start..end.min(start + 3)];
            millis = first_three.parse::<i64>().ok()? * 10i64.pow(3 - first_three.len() as u32);
            at = end;
        }
    }
    let offset_minutes = match &bytes[at.min(bytes.len())..] {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), ..] => {
            let (oh, om) = (number(at + 1..at + 3)?, number(at + 4..at + 6)?);
            expect(at + 3, b':')?;
            if bytes.len() != at + 6 {
                return None;
            }
            let total = oh * 60 + om;
            if *sign == b'+' { total } else { -total }
        }
        _ => return None,
    };
    let valid = (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hours < 24
        && minutes < 60
        && seconds < 60;
    if !valid {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(days * MS_PER_DAY + ((hours * 60 + minutes - offset_minutes) * 60 + seconds) * 1000 + millis)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Milliseconds since the Unix epoch of a [`SystemTime`] (negative before 1970).
pub(crate) fn system_time_ms(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// The [`SystemTime`] of milliseconds since the Unix epoch.
pub(crate) fn ms_to_system_time(ms: i64) -> SystemTime {
    let magnitude = Duration::from_millis(ms.unsigned_abs());
    if ms >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    }
}

/// The current time as pi writes it into session files.
pub fn now_iso() -> String {
    format_iso_ms(system_time_ms(SystemTime::now()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_javascript() {
        assert_eq!(format_iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_iso_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_iso_ms(253_402_300_800_000), "+010000-01-01T00:00:00.000Z");
    }

    #[test]
    fn parses_what_it_formats_and_common_variants() {
        for ms in [0, 1, 951_782_400_000, 1_795_447_619_123, -86_400_001, 4_102_444_799_999] {
            assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Some(ms), "{ms}");
        }
        assert_eq!(parse_iso_ms("2026-11-23T15:26:59Z"), Some(1_795_447_619_000));
        assert_eq!(parse_iso_ms("2026-11-23T15:26:59.1Z"), Some(1_795_447_619_100));
        assert_eq!(parse_iso_ms("2026-11-23T15:26:59.123456Z"), Some(1_795_447_619_123));
        assert_eq!(parse_iso_ms("2026-11-23T16:26:59.123+01:00"), Some(1_795_447_619_123));
        assert_eq!(parse_iso_ms("2026-11-23T15:26"), Some(1_795_447_560_000));
    }

    #[test]
    fn rejects_garbage() {
        for text in [
            "",
            "2026",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-11-23T24:00:00Z",
            "2026-11-23T15:26:59.Z",
            "2026-11-23T15:26:59Zjunk",
            "2026-11-23T15:26:59+01",
            "２０２６-11-23T15:26:59Z",
        ] {
            assert_eq!(parse_iso_ms(text), None, "{text}");
        }
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        let start = days_from_civil(1900, 1, 1);
        for days in start..start + 146_097 {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
