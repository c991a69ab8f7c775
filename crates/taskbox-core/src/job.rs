//! The job's state machine (its statuses and the one table of transitions)
//! and what an attempt can end in: the error kinds of the contract (DESIGN §3.4).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Mutex;

/// Why an attempt (or a job) failed. The names are part of the HTTP contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
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
    /// The job was still queued `expire_after_ms` after it came due, and
    /// failed without running (a schedule-to-start timeout).
    Expired,
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
            ErrorKind::Expired => "expired",
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
    /// `{kind, code, message}`: how the API, callbacks and a fallback's or
    /// an `on_error` step's input show it (without `retryable`). One place,
    /// so that a replay rebuilds a fallback's input exactly.
    pub fn brief(&self) -> serde_json::Value {
        serde_json::json!({"kind": self.kind, "code": self.code, "message": self.message})
    }

    /// An error of a host-detected kind whose code is the kind's own name.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        JobError {
            kind,
            code: kind.as_str().to_owned(),
            message: message.into(),
            retryable: None,
        }
    }

    /// What a job that expired in its queue (`expire_after_ms`) records.
    pub fn expired() -> Self {
        JobError::new(
            ErrorKind::Expired,
            "the job was still queued expire_after_ms after it came due, and did not run",
        )
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

/// Where a job is in its life. The names are part of the HTTP contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Waiting to be claimed (including for `run_at` or a retry's backoff).
    Queued,
    /// Claimed by a runner under a lease.
    Running,
    /// Parked by the guest's `wait` until resumed.
    Waiting,
    Completed,
    Failed,
    Cancelled,
}

/// Everything that moves a job from one status to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// A runner takes the job under a lease.
    Claim,
    /// The attempt finished with `done`.
    Complete,
    /// The job failed for good (no attempts left, or not retryable).
    Fail,
    /// The attempt failed and another is due after a backoff.
    Retry,
    /// The guest asked to run again later without using up an attempt.
    Snooze,
    /// The guest parked the job.
    Wait,
    /// The API resumed a waiting job.
    Resume,
    /// The API re-drove a failed job: a new series of attempts.
    Redrive,
    /// The API cancelled the job.
    Cancel,
    /// Maintenance found the lease expired: queued again, or failed when out of attempts.
    Rescue,
    /// Maintenance found a queued job past its `expire_after_ms`.
    Expire,
}

impl JobStatus {
    pub const ALL: [JobStatus; 6] = [
        JobStatus::Queued,
        JobStatus::Running,
        JobStatus::Waiting,
        JobStatus::Completed,
        JobStatus::Failed,
        JobStatus::Cancelled,
    ];

    /// The one transition table. `None`: not allowed from this status.
    /// Stores guard their updates with the `from` status this table implies.
    pub fn after(self, t: Transition) -> Option<JobStatus> {
        use JobStatus::*;
        use Transition::*;
        match (self, t) {
            (Queued, Claim) => Some(Running),
            (Queued | Waiting, Cancel) => Some(Cancelled),
            (Running, Complete) => Some(Completed),
            (Running, Fail) => Some(Failed),
            (Running, Retry | Snooze) => Some(Queued),
            (Running, Wait) => Some(Waiting),
            (Running, Cancel) => Some(Cancelled),
            // A rescue re-queues; when out of attempts it is a `Fail` instead.
            (Running, Rescue) => Some(Queued),
            (Waiting, Resume) => Some(Queued),
            (Failed, Redrive) => Some(Queued),
            (Queued, Expire) => Some(Failed),
            _ => None,
        }
    }

    /// Whether the job has reached its end and will never change again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobStatus::Completed | JobStatus::Failed | JobStatus::Cancelled
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Waiting => "waiting",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for JobStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        JobStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not a job status; expected one of queued, running, waiting, completed, failed, cancelled"))
    }
}

/// A new job's id: a ULID, increasing within this process on every path that makes a job
/// (enqueues, callbacks, spawns, schedules), so that "newest first" is the order jobs were
/// made, even within one millisecond.
pub fn new_id() -> String {
    static IDS: Mutex<ulid::Generator> = Mutex::new(ulid::Generator::new());
    let mut ids = IDS.lock().unwrap_or_else(|p| p.into_inner());
    ids.generate()
        .unwrap_or_else(|_| ulid::Ulid::generate())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use JobStatus::*;
    use Transition::*;

    #[test]
    fn ids_made_in_one_millisecond_still_come_in_order() {
        let ids: Vec<String> = (0..2000).map(|_| new_id()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "not increasing");
    }

    const TRANSITIONS: [Transition; 10] = [
        Claim, Complete, Fail, Retry, Snooze, Wait, Resume, Cancel, Rescue, Expire,
    ];

    /// The whole table, written out: every (status, transition) pair.
    #[test]
    fn the_transition_table() {
        let allowed = [
            (Queued, Claim, Running),
            (Queued, Cancel, Cancelled),
            (Queued, Expire, Failed),
            (Running, Complete, Completed),
            (Running, Fail, Failed),
            (Running, Retry, Queued),
            (Running, Snooze, Queued),
            (Running, Wait, Waiting),
            (Running, Cancel, Cancelled),
            (Running, Rescue, Queued),
            (Waiting, Resume, Queued),
            (Waiting, Cancel, Cancelled),
        ];
        for from in JobStatus::ALL {
            for t in TRANSITIONS {
                let want = allowed
                    .iter()
                    .find(|(f, tr, _)| *f == from && *tr == t)
                    .map(|a| a.2);
                assert_eq!(from.after(t), want, "{from} --{t:?}-->");
            }
        }
    }

    #[test]
    fn terminal_statuses_never_move() {
        for from in JobStatus::ALL.into_iter().filter(|s| s.is_terminal()) {
            for t in TRANSITIONS {
                assert_eq!(from.after(t), None, "{from} is terminal");
            }
        }
    }

    #[test]
    fn statuses_round_trip_their_names() {
        for s in JobStatus::ALL {
            assert_eq!(s.as_str().parse::<JobStatus>().unwrap(), s);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
        }
        assert!("done".parse::<JobStatus>().is_err());
    }
}
