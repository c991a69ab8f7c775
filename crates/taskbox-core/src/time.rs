//! Time as every layer passes it: Unix milliseconds, and their text
//! (RFC 3339). The store's clock reads it; quotas, the runner and the API
//! reckon in it.

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// A Unix-ms time as RFC 3339 with milliseconds, UTC.
pub fn rfc3339(ms: Millis) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Parses an RFC 3339 time into Unix ms.
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// `ms` milliseconds after `now`; the far future, never a wrap, when that
/// is past what a Unix-ms time holds.
pub fn after(now: Millis, ms: u64) -> Millis {
    now.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX))
}
