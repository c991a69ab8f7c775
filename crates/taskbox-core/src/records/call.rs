//! What a job's orchestration calls did: an `invoke`'s output or a
//! `spawn`'s child, keyed by the call's place in the job's order of calls.

use crate::time::Millis;
use serde::{Deserialize, Serialize};

/// Which import made the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    Invoke,
    Spawn,
    /// One recorded job a verification ran again: the run's result, kept
    /// so that the verification's next attempt goes on from it.
    Verify,
    /// A callback the job's end made (its task's `on_success` or
    /// `on_fail`): written with the end, so a job's page can name it.
    Callback,
}

impl CallKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::Invoke => "invoke",
            CallKind::Spawn => "spawn",
            CallKind::Verify => "verify",
            CallKind::Callback => "callback",
        }
    }
}

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    pub job_id: String,
    /// Its place in the job's order of calls: `"3"`, or `"3/1"` for the
    /// first call of the sub-task that call 3 ran.
    pub call: String,
    pub kind: CallKind,
    pub task: String,
    /// An invoke's output (JSON text); a spawn's child job id; a
    /// verification's run (`verify::report::Pair` as JSON); a callback's
    /// job id.
    pub result: String,
    pub created_at: Millis,
}

impl CallRecord {
    /// A callback's place says which: `on_success` or `on_fail`.
    pub fn callback_kind(&self) -> &str {
        self.call
            .split_once(':')
            .map_or(self.call.as_str(), |(k, _)| k)
    }
}
