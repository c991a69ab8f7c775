//! What a job's orchestration calls did (`job_calls`), as the seam keeps
//! them, and the SQL both backends share: an `invoke`'s output or a
//! `spawn`'s child, keyed by the call's place in the job's order of calls.

use super::Millis;
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
}

impl CallKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::Invoke => "invoke",
            CallKind::Spawn => "spawn",
            CallKind::Verify => "verify",
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
    /// verification's run (`verify::report::Pair` as JSON).
    pub result: String,
    pub created_at: Millis,
}

/// A row's columns as both backends read them, in `COLUMNS`' order.
pub type CallColumns = (String, String, String, String, String, i64);

pub const COLUMNS: &str = "job_id, call, kind, task, result, created_at";

impl TryFrom<CallColumns> for CallRecord {
    type Error = String;

    fn try_from(
        (job_id, call, kind, task, result, created_at): CallColumns,
    ) -> Result<Self, String> {
        let kind = match kind.as_str() {
            "invoke" => CallKind::Invoke,
            "spawn" => CallKind::Spawn,
            "verify" => CallKind::Verify,
            other => return Err(format!("call kind {other:?}")),
        };
        Ok(CallRecord {
            job_id,
            call,
            kind,
            task,
            result,
            created_at,
        })
    }
}

/// One call of a job: job_id, call.
pub fn get(p: [&str; 2]) -> String {
    let [job, call] = p;
    format!("SELECT {COLUMNS} FROM job_calls WHERE job_id = {job} AND call = {call}")
}

/// A job's calls in the order they were recorded: job_id.
pub fn list(p: &str) -> String {
    format!("SELECT {COLUMNS} FROM job_calls WHERE job_id = {p} ORDER BY created_at, call")
}

/// The job whose spawn made this one: its id.
pub fn parent(p: &str) -> String {
    format!("SELECT job_id FROM job_calls WHERE kind = 'spawn' AND result = {p}")
}

/// Records a call, unless its place is taken (the first record stands):
/// job_id, call, kind, task, result, created_at.
pub fn insert(p: [&str; 6]) -> String {
    format!(
        "INSERT INTO job_calls ({COLUMNS}) VALUES ({}) ON CONFLICT (job_id, call) DO NOTHING",
        p.join(", ")
    )
}
