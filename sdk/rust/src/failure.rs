//! A failure the task reports itself: what the job's attempt ends with.

use std::fmt;

/// Why an attempt failed. `retryable: false` fails the job now, without further attempts; a
/// task's `non_retryable` list can also match `code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// A machine-readable reason, such as `bad_input` or `upstream_unavailable`.
    pub code: String,
    /// What a person reading the job needs to know.
    pub message: String,
    /// Whether another attempt may succeed.
    pub retryable: bool,
}

impl Failure {
    /// A failure another attempt may get past (the job is retried by its policy).
    pub fn retryable(code: impl Into<String>, message: impl Into<String>) -> Self {
        Failure {
            code: code.into(),
            message: message.into(),
            retryable: true,
        }
    }

    /// A failure no other attempt gets past: the job fails now.
    pub fn fatal(code: impl Into<String>, message: impl Into<String>) -> Self {
        Failure {
            code: code.into(),
            message: message.into(),
            retryable: false,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.retryable { "retryable" } else { "final" };
        write!(f, "{} ({kind}): {}", self.code, self.message)
    }
}

impl std::error::Error for Failure {}

impl From<Failure> for crate::bindings::Failure {
    fn from(f: Failure) -> Self {
        crate::bindings::Failure {
            code: f.code,
            message: f.message,
            retryable: f.retryable,
        }
    }
}

impl From<crate::bindings::Failure> for Failure {
    fn from(f: crate::bindings::Failure) -> Self {
        Failure {
            code: f.code,
            message: f.message,
            retryable: f.retryable,
        }
    }
}
