//! What a job's attempt can end in: the error kinds of the HTTP contract (DESIGN §3.4).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why an attempt (or a job) failed. The names are part of the HTTP contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The guest returned its own `failure`; `code` is the guest's.
    TaskFailed,
    /// The attempt ran past its wall-clock limit.
    Timeout,
    /// The attempt used up its fuel budget.
    FuelExhausted,
    /// The guest asked for more linear memory than it was allowed.
    MemoryLimit,
    /// The guest overflowed its WebAssembly call stack.
    StackOverflow,
    /// Any other trap; `code` names the trap.
    Trap,
    /// The guest returned output that is not JSON (or breaks the output schema).
    InvalidOutput,
    /// The guest returned more output than the cap allows.
    OutputTooLarge,
    /// The runner holding the job's lease went away.
    RunnerLost,
    /// The job ran past its deadline across attempts.
    DeadlineExceeded,
}

impl ErrorKind {
    /// The kinds a task's retry policy does not retry by default: the same code
    /// on the same input fails the same way.
    pub fn is_deterministic(self) -> bool {
        matches!(
            self,
            ErrorKind::FuelExhausted
                | ErrorKind::MemoryLimit
                | ErrorKind::StackOverflow
                | ErrorKind::Trap
                | ErrorKind::InvalidOutput
                | ErrorKind::OutputTooLarge
        )
    }

    /// The contract's name for this kind, e.g. `fuel_exhausted`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::TaskFailed => "task_failed",
            ErrorKind::Timeout => "timeout",
            ErrorKind::FuelExhausted => "fuel_exhausted",
            ErrorKind::MemoryLimit => "memory_limit",
            ErrorKind::StackOverflow => "stack_overflow",
            ErrorKind::Trap => "trap",
            ErrorKind::InvalidOutput => "invalid_output",
            ErrorKind::OutputTooLarge => "output_too_large",
            ErrorKind::RunnerLost => "runner_lost",
            ErrorKind::DeadlineExceeded => "deadline_exceeded",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed attempt as the job records it: `{kind, code, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobError {
    pub kind: ErrorKind,
    /// The guest's own code for `task_failed`, the trap's name for `trap`,
    /// `exit:<n>` for a command; otherwise the kind again.
    pub code: String,
    pub message: String,
    /// Whether the guest itself allowed a retry (`task_failed` only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub retryable: Option<bool>,
}

impl JobError {
    /// An error of a host-detected kind whose code is the kind's own name.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        JobError {
            kind,
            code: kind.as_str().to_owned(),
            message: message.into(),
            retryable: None,
        }
    }

    pub fn with_code(kind: ErrorKind, code: impl Into<String>, message: impl Into<String>) -> Self {
        JobError {
            kind,
            code: code.into(),
            message: message.into(),
            retryable: None,
        }
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code == self.kind.as_str() {
            write!(f, "{}: {}", self.kind, self.message)
        } else {
            write!(f, "{} ({}): {}", self.kind, self.code, self.message)
        }
    }
}
