//! How an attempt ended, as one value: what `classify` makes of every way
//! a guest can stop, what `attempt` reports, and what the runner decides
//! on.

use crate::job::JobError;

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Finished; the output's JSON text.
    Done(String),
    /// Run again after this many milliseconds, without using up an attempt.
    Snooze(u64),
    /// Park until resumed; JSON text saying what it waits for.
    Wait(String),
    /// Failed, for the reason given.
    Failed(JobError),
    /// Stopped because the job was cancelled.
    Cancelled,
    /// The host could not run it now (e.g. every instance slot is busy);
    /// not the guest's doing, so it should not count as an attempt.
    Unavailable(String),
}
