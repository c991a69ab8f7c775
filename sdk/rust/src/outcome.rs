//! What a finished attempt asks of the queue: its output, a snooze, or a wait.

use crate::bindings;
use crate::Failure;
use serde::Serialize;
use std::time::Duration;

/// How an attempt ends when it does not fail.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    /// Finished with this output.
    Done(T),
    /// Run again after this long; it does not use up an attempt.
    Snooze(Duration),
    /// Park the job until it is resumed through the API; the value says what it waits for.
    Wait(serde_json::Value),
}

/// What a task's function may return inside `Ok`: any `Serialize` output (the job is done), or
/// an [`Outcome`] of one.
pub trait IntoOutcome {
    #[doc(hidden)]
    fn into_wit(self) -> Result<bindings::Outcome, Failure>;
}

impl<T: Serialize> IntoOutcome for T {
    fn into_wit(self) -> Result<bindings::Outcome, Failure> {
        done(&self)
    }
}

impl<T: Serialize> IntoOutcome for Outcome<T> {
    fn into_wit(self) -> Result<bindings::Outcome, Failure> {
        match self {
            Outcome::Done(out) => done(&out),
            Outcome::Snooze(after) => Ok(bindings::Outcome::Snooze(
                u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
            )),
            Outcome::Wait(what) => Ok(bindings::Outcome::Wait(what.to_string())),
        }
    }
}

fn done(out: &impl Serialize) -> Result<bindings::Outcome, Failure> {
    serde_json::to_string(out)
        .map(bindings::Outcome::Done)
        .map_err(|e| {
            Failure::fatal(
                "bad_output",
                format!("the output does not serialize as JSON: {e}"),
            )
        })
}
