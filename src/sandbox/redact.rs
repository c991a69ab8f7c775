//! Takes the values of an attempt's secrets out of everything the host
//! keeps of it: log lines (host, stdout, stderr), a command's stderr tail,
//! error messages, progress notes and outputs. Each occurrence becomes
//! `[redacted:NAME]`, which keeps JSON text JSON.

use std::borrow::Cow;
use std::sync::Arc;

/// The lines of a multi-line secret (a PEM key) are redacted on their own
/// too, since logs are split into lines; shorter ones would redact common
/// text (`-----END`).
const MIN_LINE_SECRET: usize = 8;

/// What to take out; cheap to clone, free when empty.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Longest first, so a secret containing another is taken out whole.
    values: Arc<Vec<(String, String)>>,
}

impl Redactor {
    /// From `(name, value)` pairs; empty values are skipped.
    pub fn new(secrets: &[(String, String)]) -> Redactor {
        let mut values = Vec::new();
        for (name, value) in secrets {
            if value.is_empty() {
                continue;
            }
            let marker = format!("[redacted:{name}]");
            if value.contains('\n') {
                for line in value.lines().map(|l| l.trim_end_matches('\r')) {
                    if line.len() >= MIN_LINE_SECRET {
                        values.push((line.to_owned(), marker.clone()));
                    }
                }
            }
            // As JSON text writes it (a quote or a backslash escaped), so a
            // value inside a JSON output or log line goes too.
            let escaped = serde_json::to_string(value).unwrap_or_default();
            let escaped = &escaped[1..escaped.len().saturating_sub(1).max(1)];
            if escaped != value {
                values.push((escaped.to_owned(), marker.clone()));
            }
            values.push((value.clone(), marker));
        }
        values.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        values.dedup_by(|a, b| a.0 == b.0);
        Redactor {
            values: Arc::new(values),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The longest value taken out, in bytes: text cut at an edge may hold
    /// a piece of a secret up to one byte shorter than this.
    pub fn longest(&self) -> usize {
        self.values.first().map_or(0, |(v, _)| v.len())
    }

    /// `text` with every secret value replaced by its marker.
    pub fn apply<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (value, marker) in self.values.iter() {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), marker));
            }
        }
        out
    }

    /// Like [`apply`](Self::apply), for text that was cut at `cut_end`
    /// (its end is not the end of what the guest wrote): the last bytes,
    /// which may begin a secret, go too.
    pub fn apply_cut(&self, text: &str) -> String {
        let whole = self.apply(text);
        if self.is_empty() {
            return whole.into_owned();
        }
        let mut keep = whole.len().saturating_sub(self.longest().saturating_sub(1));
        while !whole.is_char_boundary(keep) {
            keep -= 1;
        }
        whole[..keep].to_owned()
    }

    /// Like [`apply_cut`](Self::apply_cut) for text cut at its start.
    pub fn apply_cut_start(&self, text: &str) -> String {
        let whole = self.apply(text);
        if self.is_empty() {
            return whole.into_owned();
        }
        let mut from = self.longest().saturating_sub(1).min(whole.len());
        while !whole.is_char_boundary(from) {
            from += 1;
        }
        whole[from..].to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(pairs: &[(&str, &str)]) -> Redactor {
        Redactor::new(
            &pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn every_occurrence_goes_and_json_stays_json() {
        let red = r(&[("KEY", "s3cr3t-value"), ("EMPTY", "")]);
        let out = red.apply(r#"{"a":"s3cr3t-value","b":"xs3cr3t-valuex"}"#);
        assert_eq!(out, r#"{"a":"[redacted:KEY]","b":"x[redacted:KEY]x"}"#);
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
        assert!(matches!(red.apply("nothing here"), Cow::Borrowed(_)));
        assert!(Redactor::default().apply("s3cr3t-value") == "s3cr3t-value");
    }

    #[test]
    fn a_value_escaped_in_json_goes_too() {
        let red = r(&[("Q", r#"pa"ss\word"#)]);
        let json = serde_json::json!({"echo": r#"pa"ss\word"#}).to_string();
        assert_eq!(red.apply(&json), r#"{"echo":"[redacted:Q]"}"#);
    }

    #[test]
    fn a_longer_secret_is_taken_out_before_one_it_contains() {
        let red = r(&[("SHORT", "abcd1234"), ("LONG", "xx-abcd1234-yy")]);
        assert_eq!(
            red.apply("xx-abcd1234-yy abcd1234"),
            "[redacted:LONG] [redacted:SHORT]"
        );
    }

    #[test]
    fn lines_of_a_multi_line_secret_go_on_their_own() {
        let pem = "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END KEY-----";
        let red = r(&[("PEM", pem)]);
        assert_eq!(
            red.apply("line MIIBOgIBAAJBAKj34GkxFhD9"),
            "line [redacted:PEM]"
        );
    }

    #[test]
    fn cut_text_loses_what_may_begin_or_end_a_secret() {
        let red = r(&[("K", "0123456789")]);
        // Up to 9 bytes (one less than the secret) go from the cut edge.
        assert_eq!(red.apply_cut("log line 01234"), "log l");
        assert_eq!(red.apply_cut_start("56789 tail of it"), "l of it");
        assert_eq!(Redactor::default().apply_cut("abc"), "abc");
    }
}
