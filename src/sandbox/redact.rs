//! Takes the values of an attempt's secrets out of everything the host
//! keeps of it: log lines (host, stdout, stderr), a command's stderr tail,
//! error messages, progress notes and outputs. Each occurrence becomes
//! [`MARKER`], which keeps JSON text JSON. Text is redacted before it is
//! cut or held to a cap, never after: a cut could leave the start of a
//! secret, and a marker longer than its value could take text past a cap
//! checked before.
//!
//! Redaction is best effort: it finds the value as written, as JSON
//! escapes it and line by line; an encoding the guest chooses (base64,
//! hex, percent-encoding) is not found.

use std::borrow::Cow;
use std::sync::Arc;

/// The lines of a multi-line secret (a PEM key) are redacted on their own
/// too, since logs are split into lines; shorter ones would redact common
/// text (`-----END`).
const MIN_LINE_SECRET: usize = 8;

/// What a secret's value becomes: short, so that a short value repeated
/// makes text at most [`MARKER`]`.len() / MIN_VALUE_BYTES` times longer
/// before the caps are checked, and the same for every secret, so that it
/// tells nothing of which one (or of its length).
pub const MARKER: &str = "[redacted]";

/// What to take out; cheap to clone, free when empty.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Longest first, so a secret containing another is taken out whole.
    values: Arc<Vec<String>>,
}

impl Redactor {
    /// From `(name, value)` pairs; empty values are skipped.
    pub fn new(secrets: &[(String, String)]) -> Redactor {
        Redactor::default().with(secrets)
    }

    /// These values and `secrets`' too: what an invoked task's results are
    /// redacted with (its own secrets, and every caller's above it).
    pub fn with(&self, secrets: &[(String, String)]) -> Redactor {
        if secrets.is_empty() {
            return self.clone();
        }
        let mut values: Vec<String> = self.values.as_ref().clone();
        for (_, value) in secrets {
            if value.is_empty() {
                continue;
            }
            if value.contains('\n') {
                for line in value.lines().map(|l| l.trim_end_matches('\r')) {
                    if line.len() >= MIN_LINE_SECRET {
                        values.push(line.to_owned());
                    }
                }
            }
            // As JSON text writes it (a quote or a backslash escaped), so a
            // value inside a JSON output or log line goes too.
            let escaped = serde_json::to_string(value).unwrap_or_default();
            let escaped = &escaped[1..escaped.len().saturating_sub(1).max(1)];
            if escaped != value {
                values.push(escaped.to_owned());
            }
            values.push(value.clone());
        }
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
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
        self.values.first().map_or(0, String::len)
    }

    /// `text` with every secret value replaced by the marker.
    pub fn apply<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for value in self.values.iter() {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), MARKER));
            }
        }
        out
    }

    /// [`apply`](Self::apply) for text held to `cap` bytes: `Err` with
    /// the length it would have once it would pass the cap, before that
    /// text is made (a value shorter than the marker makes text longer).
    pub fn apply_within<'a>(&self, text: &'a str, cap: usize) -> Result<Cow<'a, str>, usize> {
        let mut out = Cow::Borrowed(text);
        for value in self.values.iter() {
            let n = out.matches(value.as_str()).count();
            if n == 0 {
                continue;
            }
            let len = (out.len() - n * value.len()).saturating_add(n.saturating_mul(MARKER.len()));
            if len > cap {
                return Err(len);
            }
            out = Cow::Owned(out.replace(value.as_str(), MARKER));
        }
        if out.len() > cap {
            return Err(out.len());
        }
        Ok(out)
    }

    /// [`apply`](Self::apply), then cut to at most `max` bytes (on a
    /// character boundary): redacted first, so no cut keeps a piece of a
    /// secret.
    pub fn apply_bounded(&self, text: &str, max: usize) -> String {
        crate::text::bounded(&self.apply(text), max)
    }

    /// Like [`apply`](Self::apply), for text that was cut at `cut_end`
    /// (its end is not the end of what the guest wrote): the last bytes,
    /// which may begin a secret, go too.
    pub fn apply_cut(&self, text: &str) -> String {
        let whole = self.apply(text);
        if self.is_empty() {
            return whole.into_owned();
        }
        let keep = whole.len().saturating_sub(self.longest().saturating_sub(1));
        crate::text::prefix(&whole, keep).to_owned()
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
        assert_eq!(out, r#"{"a":"[redacted]","b":"x[redacted]x"}"#);
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
        assert!(matches!(red.apply("nothing here"), Cow::Borrowed(_)));
        assert!(Redactor::default().apply("s3cr3t-value") == "s3cr3t-value");
    }

    #[test]
    fn a_value_escaped_in_json_goes_too() {
        let red = r(&[("Q", r#"pa"ss\word"#)]);
        let json = serde_json::json!({"echo": r#"pa"ss\word"#}).to_string();
        assert_eq!(red.apply(&json), r#"{"echo":"[redacted]"}"#);
    }

    #[test]
    fn a_longer_secret_is_taken_out_before_one_it_contains() {
        let red = r(&[("SHORT", "abcd1234"), ("LONG", "xx-abcd1234-yy")]);
        assert_eq!(
            red.apply("xx-abcd1234-yy abcd1234"),
            "[redacted] [redacted]"
        );
    }

    #[test]
    fn lines_of_a_multi_line_secret_go_on_their_own() {
        let pem = "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END KEY-----";
        let red = r(&[("PEM", pem)]);
        assert_eq!(
            red.apply("line MIIBOgIBAAJBAKj34GkxFhD9"),
            "line [redacted]"
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

    /// A short value repeated makes text longer: the cap holds the text
    /// as redacted, and too long is known before it is made.
    #[test]
    fn a_cap_holds_the_redacted_text() {
        let red = r(&[("K", "abcdefgh")]);
        let text = "abcdefgh".repeat(100);
        assert_eq!(red.apply_within(&text, 1000).unwrap().len(), 1000);
        assert_eq!(red.apply_within(&text, 999), Err(1000));
        // Longer values shrink it: what passes is the redacted length.
        let red = r(&[("K", "0123456789abcdef")]);
        let text = "0123456789abcdef".repeat(10);
        assert_eq!(red.apply_within(&text, 100).unwrap(), MARKER.repeat(10));
        assert_eq!(Redactor::default().apply_within("abc", 2), Err(3));
    }

    /// Redacted before cut: the cut never keeps the start of a secret.
    #[test]
    fn text_is_redacted_before_it_is_cut() {
        let red = r(&[("K", "SUPERSECRET")]);
        let text = format!("{}SUPERSECRET tail", "x".repeat(70));
        let cut = red.apply_bounded(&text, 80);
        assert!(!cut.contains("SUPER"), "{cut}");
        assert!(cut.starts_with(&"x".repeat(70)), "{cut}");
    }

    #[test]
    fn with_adds_a_callers_values() {
        let inner = r(&[("CHILD", "child-secret")]);
        let both = inner.with(&[("PARENT".into(), "parent-secret".into())]);
        assert_eq!(
            both.apply("child-secret parent-secret"),
            "[redacted] [redacted]"
        );
        assert_eq!(inner.apply("parent-secret"), "parent-secret");
    }
}
