//! slot-gate: a schedule's `before` task. It gets `{"schedule", "slot", "input"}` (the slot an
//! RFC 3339 UTC time) and lets the slot through — output: the schedule's input without the
//! gate's own keys, with `"slot"` added — or skips it (output `{"skip": true}`). The gate's keys,
//! read from the schedule's input:
//!
//! - `"weekdays": [1, …, 7]`: only slots on these ISO weekdays (Monday 1), in UTC, go through
//!   (a "business days only" schedule is `[1, 2, 3, 4, 5]`);
//! - `"every_nth_second": n`: only slots whose Unix second is a multiple of n go through.
//!
//! A test should expect, for slot `2026-03-06T09:00:00Z` (a Friday) and input
//! `{"weekdays": [1,2,3,4,5], "report": "sales"}`, output
//! `{"report": "sales", "slot": "2026-03-06T09:00:00Z"}`, and `{"skip": true}` for the Saturday
//! after; `err(bad_input, retryable=false)` for input it cannot read.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Deserialize)]
struct Call {
    slot: String,
    #[serde(default)]
    input: Map<String, Value>,
}

fn bad_input(message: impl Into<String>) -> Failure {
    Failure { code: "bad_input".into(), message: message.into(), retryable: false }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The Unix second of `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
fn unix_seconds(slot: &str) -> Option<i64> {
    let b = slot.as_bytes();
    if b.len() < 20 || !slot.ends_with('Z') {
        return None;
    }
    let num = |from: usize, to: usize| slot.get(from..to)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, s) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3_600 + mi * 60 + s)
}

struct Gate;

impl Guest for Gate {
    fn run(_job: Job, input: String) -> Result<Outcome, Failure> {
        let call: Call =
            serde_json::from_str(&input).map_err(|e| bad_input(format!("not a slot: {e}")))?;
        let secs = unix_seconds(&call.slot)
            .ok_or_else(|| bad_input(format!("slot {:?} is not an RFC 3339 UTC time", call.slot)))?;
        let mut rest = call.input;
        let weekdays = rest.remove("weekdays");
        let nth = rest.remove("every_nth_second");
        // 1970-01-01 was a Thursday (ISO 4).
        let weekday = (secs.div_euclid(86_400) + 3).rem_euclid(7) + 1;
        let day_ok = match &weekdays {
            Some(Value::Array(days)) => days.iter().any(|d| d.as_i64() == Some(weekday)),
            Some(_) => return Err(bad_input("weekdays must be a list of 1 (Monday) to 7")),
            None => true,
        };
        let second_ok = match nth.as_ref().map(Value::as_i64) {
            Some(Some(n)) if n > 0 => secs % n == 0,
            Some(_) => return Err(bad_input("every_nth_second must be a whole number above 0")),
            None => true,
        };
        if !(day_ok && second_ok) {
            return Ok(Outcome::Done(json!({"skip": true}).to_string()));
        }
        rest.insert("slot".into(), Value::String(call.slot));
        Ok(Outcome::Done(Value::Object(rest).to_string()))
    }
}

export!(Gate);
