//! Tables for people: aligned columns, and the times and durations that go in them.

use chrono::{DateTime, Local, TimeZone};
use serde_json::Value;
use std::time::Duration;

/// Rows under a header, each column as wide as its widest cell.
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

/// Between columns.
const GAP: &str = "  ";

impl Table {
    /// A table with these column titles.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
            right: vec![false; header.len()],
        }
    }

    /// Aligns these columns to the right (numbers read better that way).
    pub fn right(mut self, columns: &[usize]) -> Table {
        for &c in columns {
            if let Some(r) = self.right.get_mut(c) {
                *r = true;
            }
        }
        self
    }

    /// Adds a row; missing cells are blank and extra ones are kept.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The header line, then one line per row, without trailing spaces.
    pub fn lines(&self) -> Vec<String> {
        let columns = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        let mut widths = vec![0; columns];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|row| {
                let mut line = String::new();
                for (i, w) in widths.iter().enumerate() {
                    let cell = row.get(i).map(String::as_str).unwrap_or("");
                    if i > 0 {
                        line.push_str(GAP);
                    }
                    let pad = " ".repeat(w - width(cell));
                    if self.right.get(i).copied().unwrap_or(false) {
                        line.push_str(&pad);
                        line.push_str(cell);
                    } else {
                        line.push_str(cell);
                        line.push_str(&pad);
                    }
                }
                line.trim_end().to_owned()
            })
            .collect()
    }

    /// The whole table, one line each, ending in a newline.
    pub fn render(&self) -> String {
        let mut out = self.lines().join("\n");
        out.push('\n');
        out
    }

    /// Prints the table on stdout.
    pub fn print(&self) {
        print!("{}", self.render());
    }
}

/// Characters, not bytes: `…` and `µ` take one column each.
fn width(cell: &str) -> usize {
    cell.chars().count()
}

/// `label  value` lines with the values aligned, skipping empty values.
pub fn fields(pairs: &[(&str, String)]) -> String {
    let shown: Vec<_> = pairs.iter().filter(|(_, v)| !v.is_empty()).collect();
    let w = shown.iter().map(|(k, _)| width(k)).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in shown {
        out.push_str(&format!("{k}{}  {v}\n", " ".repeat(w - width(k))));
    }
    out
}

/// A JSON value as a cell: strings bare, null as `-`, anything else as compact JSON.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `sha256:0123456789abcdef…` → `sha256:0123456789ab…`; the full digest is in `--json`.
pub fn short_digest(digest: &str) -> String {
    let (algo, hex) = digest.split_once(':').unwrap_or(("", digest));
    if hex.chars().count() <= 12 {
        return digest.to_owned();
    }
    let head: String = hex.chars().take(12).collect();
    if algo.is_empty() {
        format!("{head}…")
    } else {
        format!("{algo}:{head}…")
    }
}

/// An RFC 3339 time for people: `HH:MM:SS.mmm` in local time when it is today, else as given.
pub fn time(text: &str) -> String {
    time_at(text, Local::now())
}

/// [`time`] against a given "now", whose time zone is the one shown.
pub fn time_at<Tz: TimeZone>(text: &str, now: DateTime<Tz>) -> String
where
    Tz::Offset: std::fmt::Display,
{
    match DateTime::parse_from_rfc3339(text) {
        Ok(t) => {
            let t = t.with_timezone(&now.timezone());
            if t.date_naive() == now.date_naive() {
                t.format("%H:%M:%S%.3f").to_string()
            } else {
                text.to_owned()
            }
        }
        Err(_) => text.to_owned(),
    }
}

/// A time field of the API as a cell: `-` when null or absent.
pub fn time_cell(t: Option<&str>) -> String {
    t.map(time).unwrap_or_else(|| "-".to_owned())
}

/// The local clock now, as `HH:MM:SS.mmm`, to stamp what the CLI sees happen.
pub fn clock() -> String {
    Local::now().format("%H:%M:%S%.3f").to_string()
}

/// How long from one RFC 3339 time to another; `None` if either does not parse or time ran back.
pub fn between(start: &str, end: &str) -> Option<Duration> {
    let start = DateTime::parse_from_rfc3339(start).ok()?;
    let end = DateTime::parse_from_rfc3339(end).ok()?;
    (end - start).to_std().ok()
}

/// True when the RFC 3339 time is later than now.
pub fn is_future(text: &str) -> bool {
    DateTime::parse_from_rfc3339(text).is_ok_and(|t| t > Local::now())
}

/// A count of milliseconds from the API (integer or float) as a duration cell.
pub fn millis(ms: Option<f64>) -> String {
    match ms {
        Some(ms) if ms.is_finite() && ms >= 0.0 => {
            super::format::duration(Duration::from_secs_f64(ms / 1000.0))
        }
        _ => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use serde_json::json;

    #[test]
    fn columns_align_to_the_widest_cell() {
        let mut t = Table::new(&["NAME", "VERSION", "DIGEST"]).right(&[1]);
        t.row(vec!["resize".into(), "12".into(), "sha256:ab…".into()]);
        t.row(vec!["a".into(), "3".into(), "-".into()]);
        assert_eq!(
            t.render(),
            "NAME    VERSION  DIGEST\n\
             resize       12  sha256:ab…\n\
             a             3  -\n"
        );
    }

    #[test]
    fn ragged_rows_and_empty_tables() {
        let mut t = Table::new(&["A", "B"]);
        assert_eq!(t.render(), "A  B\n");
        t.row(vec!["x".into()]);
        t.row(vec!["yyy".into(), "z".into(), "extra".into()]);
        assert_eq!(t.lines(), vec!["A    B", "x", "yyy  z  extra"]);
    }

    #[test]
    fn fields_skip_empty_values() {
        let out = fields(&[
            ("id", "01J".into()),
            ("error", String::new()),
            ("status", "queued".into()),
        ]);
        assert_eq!(out, "id      01J\nstatus  queued\n");
    }

    #[test]
    fn cells_from_json() {
        assert_eq!(cell(&json!(null)), "-");
        assert_eq!(cell(&json!("q")), "q");
        assert_eq!(cell(&json!(3)), "3");
        assert_eq!(cell(&json!({"a": 1})), "{\"a\":1}");
    }

    #[test]
    fn digests_shorten() {
        assert_eq!(
            short_digest("sha256:0123456789abcdef0123"),
            "sha256:0123456789ab…"
        );
        assert_eq!(short_digest("sha256:01"), "sha256:01");
        assert_eq!(short_digest("0123456789abcdef"), "0123456789ab…");
    }

    #[test]
    fn times_today_are_short() {
        let now = Utc.with_ymd_and_hms(2025, 3, 4, 12, 0, 0).unwrap();
        assert_eq!(time_at("2025-03-04T11:59:58.125Z", now), "11:59:58.125");
        assert_eq!(
            time_at("2025-03-03T23:59:58.125Z", now),
            "2025-03-03T23:59:58.125Z"
        );
        assert_eq!(time_at("not a time", now), "not a time");
        // Another offset is converted to the zone of "now" before comparing days.
        assert_eq!(
            time_at("2025-03-04T13:00:00.000+02:00", now),
            "11:00:00.000"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(
            between("2025-03-04T12:00:00.000Z", "2025-03-04T12:00:01.500Z"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            between("2025-03-04T12:00:01Z", "2025-03-04T12:00:00Z"),
            None
        );
        assert_eq!(millis(Some(1500.0)), "1.50 s");
        assert_eq!(millis(Some(2.5)), "2.50 ms");
        assert_eq!(millis(None), "-");
        assert!(!is_future("2000-01-01T00:00:00Z"));
        assert_eq!(time_cell(None), "-");
    }
}
