//! An attempt's log as data: what the sandbox keeps of what a guest says,
//! and what the store records with the attempt. Neither side owns it.

use serde::{Deserialize, Serialize};

/// Where a log line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The task's own `log` import.
    Guest,
    Stdout,
    Stderr,
    /// Said by the host about the attempt (e.g. a trap's backtrace).
    Host,
}

/// Severity of a log line; the guest's `level` enum, one to one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// One line of an attempt's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LogLine {
    /// Milliseconds since the attempt started.
    pub at_ms: f64,
    pub level: Level,
    pub source: Source,
    pub message: String,
}

/// An attempt's log once it is over.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AttemptLog {
    pub lines: Vec<LogLine>,
    /// Lines that did not fit in the budget.
    pub dropped_lines: u64,
    /// Bytes in those lines (and in the cut-off ends of over-long lines).
    pub dropped_bytes: u64,
}

impl AttemptLog {
    /// What is kept of an attempt's log that could not be stored.
    pub fn unstorable() -> AttemptLog {
        AttemptLog {
            lines: vec![LogLine {
                at_ms: 0.0,
                level: Level::Error,
                source: Source::Host,
                message: "this attempt's log could not be stored".into(),
            }],
            dropped_lines: 0,
            dropped_bytes: 0,
        }
    }
}
