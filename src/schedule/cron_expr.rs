//! Cron expressions as schedules take them: the standard five fields
//! (minute, hour, day of month, month, day of week, with Sunday 0 or 7),
//! or the `cron` crate's six or seven (seconds first, a year last, Sunday
//! 1), in an IANA time zone. Slots are instants: across a DST change, a
//! wall time the change skips has no slot that day; one that occurs twice
//! fires once, at its first occurrence, unless the expression fires every
//! hour (then each real hour has its slots, as an interval's would).

use crate::store::Millis;
use chrono::{DateTime, LocalResult, Offset, TimeZone, Utc};
use cron::TimeUnitSpec;
use std::str::FromStr;

/// A parsed expression in its time zone.
#[derive(Debug, Clone)]
pub struct CronExpr {
    schedule: cron::Schedule,
    tz: chrono_tz::Tz,
    /// Every hour of the day has slots: a repeated hour fires again.
    every_hour: bool,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CronError {
    #[error("`{expr}` is not a cron expression: {why}; give 5 fields (minute hour day-of-month month day-of-week) or 6–7 (seconds first, a year last)")]
    Expression { expr: String, why: String },
    #[error("`{0}` is not an IANA time zone (for example `UTC`, `Europe/Berlin`)")]
    TimeZone(String),
}

const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

impl CronExpr {
    /// Parses `expr` in `timezone` (UTC when `None`).
    pub fn parse(expr: &str, timezone: Option<&str>) -> Result<CronExpr, CronError> {
        let tz = match timezone {
            None => chrono_tz::UTC,
            Some(name) => {
                chrono_tz::Tz::from_str(name).map_err(|_| CronError::TimeZone(name.to_owned()))?
            }
        };
        let bad = |why: String| CronError::Expression {
            expr: expr.to_owned(),
            why,
        };
        let fields: Vec<&str> = expr.split_whitespace().collect();
        let full = match fields.len() {
            5 => {
                let dow = standard_days(fields[4]).map_err(&bad)?;
                format!(
                    "0 {} {} {} {} {dow}",
                    fields[0], fields[1], fields[2], fields[3]
                )
            }
            6 | 7 => fields.join(" "),
            n => return Err(bad(format!("it has {n} fields"))),
        };
        let schedule = cron::Schedule::from_str(&full).map_err(|e| bad(e.to_string()))?;
        let every_hour = (0..24).all(|h| schedule.hours().includes(h));
        let parsed = CronExpr {
            schedule,
            tz,
            every_hour,
        };
        // An expression that can never fire (`0 0 30 2 *`) is refused now,
        // not found out at its first slot.
        if parsed.next_after(0).is_none() {
            return Err(bad("it never fires".into()));
        }
        Ok(parsed)
    }

    /// The shortest time between two of the next `slots` slots after
    /// `after` (`None` with fewer than two): how often it fires at most,
    /// as far as that looks.
    pub fn shortest_gap(&self, after: Millis, slots: usize) -> Option<Millis> {
        let mut prev = self.next_after(after)?;
        let mut shortest: Option<Millis> = None;
        for _ in 1..slots {
            let Some(next) = self.next_after(prev) else {
                break;
            };
            let gap = next - prev;
            shortest = Some(shortest.map_or(gap, |s| s.min(gap)));
            prev = next;
        }
        shortest
    }

    /// The first slot strictly after `after` (ms since the epoch), if any.
    pub fn next_after(&self, after: Millis) -> Option<Millis> {
        // The crate walks wall times: from a wall time inside an hour that
        // a fall-back repeats, the repeat's slots are behind it. Near a
        // change of offset, the walk starts before it and skips what is
        // not after `after`.
        const NEAR: Millis = 3 * 3600 * 1000;
        let local = |ms: Millis| {
            Some(
                Utc.timestamp_millis_opt(ms)
                    .single()?
                    .with_timezone(&self.tz),
            )
        };
        let here = local(after)?;
        let near_a_change = |before: &DateTime<chrono_tz::Tz>| {
            local(after.saturating_add(NEAR))
                .is_some_and(|later| later.offset().fix() != before.offset().fix())
        };
        let from = match local(after.saturating_sub(NEAR)) {
            Some(before) if near_a_change(&before) => before,
            _ => here,
        };
        self.schedule
            .after(&from)
            .filter(|slot| slot.timestamp_millis() > after)
            // Second occurrences are at most a repeated hour's slots.
            .find(|slot| self.every_hour || !self.is_second_occurrence(slot))
            .map(|slot| slot.timestamp_millis())
    }

    /// Whether `slot`'s wall time occurred once already (a DST fall-back).
    fn is_second_occurrence(&self, slot: &DateTime<chrono_tz::Tz>) -> bool {
        matches!(
            self.tz.from_local_datetime(&slot.naive_local()),
            LocalResult::Ambiguous(first, _) if first != *slot
        )
    }
}

/// The standard day-of-week field (0–7, Sunday 0 and 7, names, ranges,
/// lists and steps) as the `cron` crate's, by name: its numbers start at 1.
fn standard_days(field: &str) -> Result<String, String> {
    if field == "*" || field == "?" {
        return Ok("*".into());
    }
    let day = |s: &str| -> Result<usize, String> {
        if let Ok(n) = s.parse::<usize>() {
            return if n <= 7 {
                Ok(n % 7)
            } else {
                Err(format!("day of week {n} is past 7"))
            };
        }
        DAYS.iter()
            .position(|d| d.eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("`{s}` is not a day of the week"))
    };
    let mut set = [false; 7];
    for item in field.split(',') {
        let (base, step) = match item.split_once('/') {
            Some((b, s)) => (
                b,
                s.parse::<usize>()
                    .ok()
                    .filter(|s| *s > 0)
                    .ok_or_else(|| format!("`{s}` is not a step"))?,
            ),
            None => (item, 1),
        };
        let (from, to) = match base.split_once('-') {
            _ if base == "*" => (0, 6),
            Some((a, b)) => {
                // `5-7` is Friday to Sunday: 7 counts as 7 here.
                let to = if b == "7" { 7 } else { day(b)? };
                (day(a)?, to)
            }
            None if item.contains('/') => (day(base)?, 6),
            None => (day(base)?, day(base)?),
        };
        if from > to {
            return Err(format!("the range `{base}` runs backwards"));
        }
        for d in (from..=to).step_by(step) {
            set[d % 7] = true;
        }
    }
    Ok(DAYS
        .iter()
        .zip(set)
        .filter(|(_, on)| *on)
        .map(|(d, _)| *d)
        .collect::<Vec<_>>()
        .join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Millis {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    fn slots(e: &CronExpr, from: &str, n: usize) -> Vec<String> {
        let mut t = at(from);
        (0..n)
            .map(|_| {
                t = e.next_after(t).unwrap();
                Utc.timestamp_millis_opt(t).unwrap().to_rfc3339()
            })
            .collect()
    }

    #[test]
    fn five_fields_are_standard_cron() {
        let e = CronExpr::parse("*/15 9 * * 1-5", None).unwrap();
        // 2026-11-27 is a Friday: then Monday.
        assert_eq!(
            slots(&e, "2026-11-27T09:40:00Z", 3),
            [
                "2026-11-27T09:45:00+00:00",
                "2026-11-30T09:00:00+00:00",
                "2026-11-30T09:15:00+00:00"
            ]
        );
        // Sunday is 0 and 7; names work; the slot is strictly after.
        for sunday in ["0 0 * * 0", "0 0 * * 7", "0 0 * * sun", "0 0 * * 6-7"] {
            let e = CronExpr::parse(sunday, None).unwrap();
            assert_eq!(
                slots(&e, "2026-11-28T00:00:00Z", 1),
                ["2026-11-29T00:00:00+00:00"],
                "{sunday}"
            );
        }
        assert_eq!(standard_days("1-5").unwrap(), "MON,TUE,WED,THU,FRI");
        assert_eq!(standard_days("*/2").unwrap(), "SUN,TUE,THU,SAT");
        assert_eq!(standard_days("5-7").unwrap(), "SUN,FRI,SAT");
    }

    #[test]
    fn six_and_seven_fields_have_seconds() {
        let e = CronExpr::parse("*/20 * * * * *", None).unwrap();
        assert_eq!(
            slots(&e, "2026-11-26T10:00:05.500Z", 2),
            ["2026-11-26T10:00:20+00:00", "2026-11-26T10:00:40+00:00"]
        );
        let e = CronExpr::parse("0 0 12 1 1 * 2030", None).unwrap();
        assert_eq!(
            slots(&e, "2026-11-26T10:00:00Z", 1),
            ["2030-01-01T12:00:00+00:00"]
        );
        assert!(e.next_after(at("2030-01-02T00:00:00Z")).is_none());
    }

    #[test]
    fn bad_expressions_and_zones_say_what_is_wrong() {
        for (expr, says) in [
            ("* * * *", "it has 4 fields"),
            ("61 * * * *", "`61 * * * *` is not a cron expression"),
            ("0 0 * * 8", "day of week 8 is past 7"),
            ("0 0 * * funday", "`funday` is not a day of the week"),
            ("0 0 * * 5-1", "runs backwards"),
            ("0 0 30 2 *", "it never fires"),
        ] {
            let e = CronExpr::parse(expr, None).unwrap_err().to_string();
            assert!(e.contains(says), "{expr}: {e}");
        }
        assert_eq!(
            CronExpr::parse("* * * * *", Some("Mars/Olympus")).unwrap_err(),
            CronError::TimeZone("Mars/Olympus".into())
        );
    }

    #[test]
    fn a_zone_with_dst_fires_at_the_right_instants() {
        // Berlin: 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST
        // → 02:00 CET.
        let daily = CronExpr::parse("30 2 * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            slots(&daily, "2026-03-27T12:00:00Z", 3),
            [
                "2026-03-28T01:30:00+00:00", // 02:30 CET
                // 02:30 does not exist on the 29th: no slot that day.
                "2026-03-30T00:30:00+00:00", // 02:30 CEST
                "2026-03-31T00:30:00+00:00",
            ]
        );
        assert_eq!(
            slots(&daily, "2026-10-24T12:00:00Z", 2),
            [
                // 02:30 occurs twice on the 25th: it fires at the first.
                "2026-10-25T00:30:00+00:00",
                "2026-10-26T01:30:00+00:00",
            ]
        );
        // Every five minutes of 02:xx: the repeated 02:xx fires no more,
        // and the next day's come as usual.
        let fives = CronExpr::parse("*/5 2 * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            slots(&fives, "2026-10-25T00:50:00Z", 2),
            ["2026-10-25T00:55:00+00:00", "2026-10-26T01:00:00+00:00"]
        );
        // An hourly schedule fires in each real hour, the repeated too.
        let hourly = CronExpr::parse("0 * * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            slots(&hourly, "2026-10-24T23:30:00Z", 3),
            [
                "2026-10-25T00:00:00+00:00", // 02:00 CEST
                "2026-10-25T01:00:00+00:00", // 02:00 CET
                "2026-10-25T02:00:00+00:00", // 03:00 CET
            ]
        );
        // 9:00 local is 08:00 UTC in winter and 07:00 in summer.
        let nine = CronExpr::parse("0 9 * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            slots(&nine, "2026-03-28T12:00:00Z", 2),
            ["2026-03-29T07:00:00+00:00", "2026-03-30T07:00:00+00:00"]
        );
    }
}
