//! Calendar values of the telecom databases, rendered the way upstream's hash and tool
//! outputs see them: `str(date)` = `YYYY-MM-DD`, `str(datetime)` = `YYYY-MM-DD HH:MM:SS`
//! (plus `.ffffff` and a UTC offset when present).
//!
//! Parsing accepts what pydantic accepts in practice for these files and for dumps fed back
//! through `initialization_data`: ISO dates, and datetimes with a `T` or space separator,
//! optional seconds, fraction and offset.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Upstream's fixed "today" (`get_today()`): 2025-02-25.
pub(super) const TODAY: Date = Date {
    year: 2025,
    month: 2,
    day: 25,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Date {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

impl Date {
    pub(crate) fn new(year: i32, month: u32, day: u32) -> Option<Date> {
        ((1..=9999).contains(&year)
            && (1..=12).contains(&month)
            && day >= 1
            && day <= days_in_month(year, month))
        .then_some(Date { year, month, day })
    }

    /// Parses `YYYY-MM-DD`.
    pub(crate) fn parse(s: &str) -> Option<Date> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u32> {
            let part = s.get(r)?;
            part.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| part.parse().ok())
                .flatten()
        };
        Date::new(num(0..4)? as i32, num(5..7)?, num(8..10)?)
    }

    /// Days since 0001-01-01 (Python's `toordinal() - 1`).
    fn ordinal(self) -> i64 {
        let y = i64::from(self.year) - 1;
        let mut days = y * 365 + y / 4 - y / 100 + y / 400;
        for m in 1..self.month {
            days += i64::from(days_in_month(self.year, m));
        }
        days + i64::from(self.day) - 1
    }

    fn from_ordinal(mut n: i64) -> Date {
        let mut year = 1;
        loop {
            let len = if is_leap(year) { 366 } else { 365 };
            if n < len {
                break;
            }
            n -= len;
            year += 1;
        }
        let mut month = 1;
        while n >= i64::from(days_in_month(year, month)) {
            n -= i64::from(days_in_month(year, month));
            month += 1;
        }
        Date {
            year,
            month,
            day: n as u32 + 1,
        }
    }

    /// `date + timedelta(days=n)`.
    pub(crate) fn add_days(self, n: i64) -> Date {
        Date::from_ordinal(self.ordinal() + n)
    }

    /// `date.replace(day=1)`.
    pub(crate) fn first_of_month(self) -> Date {
        Date { day: 1, ..self }
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Time of day of a datetime, with an optional UTC offset in minutes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Time {
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub micro: u32,
    pub offset_minutes: Option<i32>,
}

/// A datetime field's value. `time: None` is a bare `date` left in a datetime field by an
/// unvalidated default (upstream's `Customer.created_at` default), which `str()` renders
/// without a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct DateTime {
    pub date: Date,
    pub time: Option<Time>,
}

impl DateTime {
    /// Parses an ISO datetime (`T` or space separator) or a bare date (midnight).
    pub(crate) fn parse(s: &str) -> Option<DateTime> {
        let date = Date::parse(s.get(..10)?)?;
        let rest = &s[10..];
        let midnight = Time {
            hour: 0,
            minute: 0,
            second: 0,
            micro: 0,
            offset_minutes: None,
        };
        if rest.is_empty() {
            return Some(DateTime {
                date,
                time: Some(midnight),
            });
        }
        let rest = rest.strip_prefix(['T', 't', ' ', '_'])?;
        let (clock, offset) = split_offset(rest)?;
        let (hms, frac) = match clock.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (clock, None),
        };
        let parts: Vec<&str> = hms.split(':').collect();
        let two = |p: &str| -> Option<u32> {
            (p.len() == 2 && p.bytes().all(|c| c.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        };
        let (hour, minute, second) = match parts.as_slice() {
            [h, m] if frac.is_none() => (two(h)?, two(m)?, 0),
            [h, m, s] => (two(h)?, two(m)?, two(s)?),
            _ => return None,
        };
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        let micro = match frac {
            None => 0,
            Some(f) if !f.is_empty() && f.len() <= 6 && f.bytes().all(|c| c.is_ascii_digit()) => {
                format!("{f:0<6}").parse().ok()?
            }
            Some(_) => return None,
        };
        Some(DateTime {
            date,
            time: Some(Time {
                hour,
                minute,
                second,
                micro,
                offset_minutes: offset,
            }),
        })
    }
}

fn split_offset(s: &str) -> Option<(&str, Option<i32>)> {
    if let Some(clock) = s.strip_suffix(['Z', 'z']) {
        return Some((clock, Some(0)));
    }
    if let Some(pos) = s.rfind(['+', '-']) {
        let (clock, off) = s.split_at(pos);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let digits: String = off[1..].chars().filter(|c| *c != ':').collect();
        if digits.len() != 4 || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let h: i32 = digits[..2].parse().ok()?;
        let m: i32 = digits[2..].parse().ok()?;
        return Some((clock, Some(sign * (h * 60 + m))));
    }
    Some((s, None))
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.date)?;
        let Some(t) = self.time else { return Ok(()) };
        write!(f, " {:02}:{:02}:{:02}", t.hour, t.minute, t.second)?;
        if t.micro != 0 {
            write!(f, ".{:06}", t.micro)?;
        }
        if let Some(off) = t.offset_minutes {
            let sign = if off < 0 { '-' } else { '+' };
            write!(f, "{sign}{:02}:{:02}", off.abs() / 60, off.abs() % 60)?;
        }
        Ok(())
    }
}

/// A TOML native datetime arrives (through `serde_json::Value`) as this one-key map.
#[derive(Deserialize)]
#[serde(untagged)]
enum Textual {
    Plain(String),
    Toml {
        #[serde(rename = "$__toml_private_datetime")]
        value: String,
    },
}

impl Textual {
    fn text(self) -> String {
        match self {
            Textual::Plain(s) | Textual::Toml { value: s } => s,
        }
    }
}

/// Both serialise as their `Display` text, the ISO form upstream's pydantic dumps.
macro_rules! serialize_as_text {
    ($($ty:ty),+) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    )+};
}
serialize_as_text!(Date, DateTime);

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Textual::deserialize(d)?.text();
        if let Some(date) = Date::parse(&text) {
            return Ok(date);
        }
        // A datetime at exact midnight is accepted for a date field, as pydantic does.
        match DateTime::parse(&text) {
            Some(DateTime {
                date,
                time: Some(t),
            }) if t.hour == 0 && t.minute == 0 && t.second == 0 && t.micro == 0 => Ok(date),
            _ => Err(serde::de::Error::custom(format!(
                "input should be a valid date, got {text:?}"
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for DateTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Textual::deserialize(d)?.text();
        DateTime::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("input should be a valid datetime, got {text:?}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_matches_python() {
        let next = TODAY.first_of_month().add_days(32).first_of_month();
        assert_eq!(next.to_string(), "2025-03-01");
        assert_eq!(
            Date::new(2025, 3, 1).unwrap().add_days(-1).to_string(),
            "2025-02-28"
        );
        assert_eq!(
            Date::new(2024, 3, 1).unwrap().add_days(-1).to_string(),
            "2024-02-29"
        );
        assert_eq!(
            Date::new(2024, 12, 31).unwrap().add_days(1).to_string(),
            "2025-01-01"
        );
        assert_eq!(
            Date::new(1, 1, 1).unwrap().add_days(0).to_string(),
            "0001-01-01"
        );
    }

    #[test]
    fn datetime_str_like_python() {
        assert_eq!(
            DateTime::parse("2025-01-15T10:30:00").unwrap().to_string(),
            "2025-01-15 10:30:00"
        );
        assert_eq!(
            DateTime::parse("2025-01-15 10:30:00").unwrap().to_string(),
            "2025-01-15 10:30:00"
        );
        assert_eq!(
            DateTime::parse("2025-01-15").unwrap().to_string(),
            "2025-01-15 00:00:00"
        );
        assert_eq!(
            DateTime::parse("2025-01-15T10:30:00.5Z")
                .unwrap()
                .to_string(),
            "2025-01-15 10:30:00.500000+00:00"
        );
        assert_eq!(
            DateTime::parse("2025-01-15T10:30-05:30")
                .unwrap()
                .to_string(),
            "2025-01-15 10:30:00-05:30"
        );
        assert!(DateTime::parse("2025-02-30T00:00:00").is_none());
        assert!(Date::parse("2025-1-01").is_none());
    }
}
