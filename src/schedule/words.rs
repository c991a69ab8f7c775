//! A cron expression in words, as the dashboard shows a schedule: "at
//! 09:30, Monday through Friday", "every 15 minutes". Only what it can say
//! plainly: an expression with parts it has no words for (seconds other
//! than 0, a year, `L`, `W`, `#`, `?`) is `None`, and is shown as written.

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// One part of a field: a value, a range, or a step over either.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Part {
    One(u32),
    Range(u32, u32),
    Every(u32),
    StepFrom(u32, u32),
}

/// A field: every value (`*`) or its parts.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    Any,
    Parts(Vec<Part>),
}

fn parse_value(s: &str, names: Option<&[&str]>, max: u32) -> Option<u32> {
    if let Ok(n) = s.parse::<u32>() {
        return (n <= max).then_some(n);
    }
    let names = names?;
    let lower = s.to_ascii_lowercase();
    names
        .iter()
        .position(|n| n[..3].eq_ignore_ascii_case(&lower))
        .map(|i| i as u32 + u32::from(max == 12))
}

fn parse_field(s: &str, names: Option<&[&str]>, max: u32) -> Option<Field> {
    if s == "*" {
        return Some(Field::Any);
    }
    let mut parts = Vec::new();
    for p in s.split(',') {
        let (base, step) = match p.split_once('/') {
            Some((b, st)) => (b, Some(st.parse::<u32>().ok().filter(|n| *n > 0)?)),
            None => (p, None),
        };
        let part = match (base, step) {
            ("*", Some(n)) => Part::Every(n),
            (b, Some(n)) if !b.contains('-') => Part::StepFrom(parse_value(b, names, max)?, n),
            (b, None) => match b.split_once('-') {
                Some((from, to)) => {
                    Part::Range(parse_value(from, names, max)?, parse_value(to, names, max)?)
                }
                None => Part::One(parse_value(b, names, max)?),
            },
            _ => return None,
        };
        parts.push(part);
    }
    Some(Field::Parts(parts))
}

fn joined(items: Vec<String>) -> String {
    match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        n => format!("{} and {}", items[..n - 1].join(", "), items[n - 1]),
    }
}

fn say_parts(parts: &[Part], name: &dyn Fn(u32) -> String, unit: &str) -> String {
    joined(
        parts
            .iter()
            .map(|p| match *p {
                Part::One(v) => name(v),
                Part::Range(a, b) => format!("{} through {}", name(a), name(b)),
                Part::Every(n) => format!("every {n} {unit}s"),
                Part::StepFrom(a, n) => format!("every {n} {unit}s from {}", name(a)),
            })
            .collect(),
    )
}

fn single(f: &Field) -> Option<u32> {
    match f {
        Field::Parts(p) if p.len() == 1 => match p[0] {
            Part::One(v) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// `expr` (five fields, or six or seven with seconds first) in words.
pub fn describe(expr: &str) -> Option<String> {
    let fields: Vec<&str> = expr.split_whitespace().collect();
    let five: &[&str] = match fields.len() {
        5 => &fields,
        6 if fields[0] == "0" => &fields[1..],
        7 if fields[0] == "0" && fields[6] == "*" => &fields[1..6],
        _ => return None,
    };
    let minute = parse_field(five[0], None, 59)?;
    let hour = parse_field(five[1], None, 23)?;
    let dom = parse_field(five[2], None, 31)?;
    let month = parse_field(five[3], Some(&MONTHS), 12)?;
    // Sunday is 0 or 7 in the five-field form.
    let dow = parse_field(five[4], Some(&DAYS), 7)?;

    let num = |v: u32| v.to_string();
    let hh = |v: u32| format!("{v:02}:00");
    let time = match (&minute, &hour, single(&minute), single(&hour)) {
        (_, _, Some(m), Some(h)) => format!("at {h:02}:{m:02}"),
        (Field::Any, Field::Any, _, _) => "every minute".to_owned(),
        (Field::Any, Field::Parts(h), _, _) => {
            format!(
                "every minute during the hours {}",
                say_parts(h, &hh, "hour")
            )
        }
        (_, Field::Any, Some(0), _) => "every hour, on the hour".to_owned(),
        (Field::Parts(m), Field::Any, _, _) => match m.as_slice() {
            [Part::Every(n)] => format!("every {n} minutes"),
            _ => format!("at minute {} of every hour", say_parts(m, &num, "minute")),
        },
        (Field::Parts(m), Field::Parts(h), _, _) => match m.as_slice() {
            [Part::Every(n)] => format!(
                "every {n} minutes during the hours {}",
                say_parts(h, &hh, "hour")
            ),
            _ => format!(
                "at minute {} of the hours {}",
                say_parts(m, &num, "minute"),
                say_parts(h, &hh, "hour")
            ),
        },
    };
    let day_name = |v: u32| DAYS[(v % 7) as usize].to_owned();
    let month_name = |v: u32| {
        MONTHS
            .get((v as usize).wrapping_sub(1))
            .map_or_else(|| v.to_string(), |m| (*m).to_owned())
    };
    let mut words = time;
    match (&dom, &dow) {
        (Field::Any, Field::Any) => {
            if single(&minute).is_some() && single(&hour).is_some() {
                words.push_str(" every day");
            }
        }
        (Field::Parts(d), Field::Any) => {
            words.push_str(&format!(
                " on day {} of the month",
                say_parts(d, &num, "day")
            ));
        }
        (Field::Any, Field::Parts(w)) => {
            words.push_str(&format!(", on {}", say_parts(w, &day_name, "day")));
        }
        (Field::Parts(d), Field::Parts(w)) => {
            words.push_str(&format!(
                " on day {} of the month or on {}",
                say_parts(d, &num, "day"),
                say_parts(w, &day_name, "day")
            ));
        }
    }
    if let Field::Parts(m) = &month {
        words.push_str(&format!(", in {}", say_parts(m, &month_name, "month")));
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn common_expressions_read_plainly() {
        let cases = [
            ("* * * * *", Some("every minute")),
            ("*/15 * * * *", Some("every 15 minutes")),
            ("0 * * * *", Some("every hour, on the hour")),
            ("5 * * * *", Some("at minute 5 of every hour")),
            ("0,30 * * * *", Some("at minute 0 and 30 of every hour")),
            ("30 9 * * *", Some("at 09:30 every day")),
            ("30 9 * * 1-5", Some("at 09:30, on Monday through Friday")),
            ("0 9 * * MON-FRI", Some("at 09:00, on Monday through Friday")),
            ("0 0 * * 0", Some("at 00:00, on Sunday")),
            ("0 0 * * 7", Some("at 00:00, on Sunday")),
            ("0 6 1,15 * *", Some("at 06:00 on day 1 and 15 of the month")),
            ("0 0 1 1 *", Some("at 00:00 on day 1 of the month, in January")),
            ("0 8 * 6-8 *", Some("at 08:00 every day, in June through August")),
            (
                "* 9-17 * * *",
                Some("every minute during the hours 09:00 through 17:00"),
            ),
            (
                "*/10 9-17 * * 1-5",
                Some("every 10 minutes during the hours 09:00 through 17:00, on Monday through Friday"),
            ),
            ("0 30 9 * * *", Some("at 09:30 every day")),
            ("0 30 9 * * * *", Some("at 09:30 every day")),
        ];
        for (expr, want) in cases {
            assert_eq!(describe(expr).as_deref(), want, "{expr}");
        }
    }

    #[test]
    fn what_it_has_no_words_for_is_none() {
        for expr in [
            "15 * * * * *",
            "0 0 0 * * * 2030",
            "0 0 L * *",
            "0 0 ? * MON#2",
            "61 * * * *",
            "0 25 * * *",
            "* *",
            "*/0 * * * *",
        ] {
            assert_eq!(describe(expr), None, "{expr}");
        }
    }
}
