//! What a job's orchestration calls did (`job_calls`), as the seam keeps
//! them, and the SQL both backends share: an `invoke`'s output or a
//! `spawn`'s child, keyed by the call's place in the job's order of calls.

use super::exec::args;
use super::records::{CallKind, CallRecord};
use super::Millis;

/// A row's columns as both backends read them, in `COLUMNS`' order.
pub type CallColumns = (String, String, String, String, String, i64);

pub const COLUMNS: &str = "job_id, call, kind, task, result, created_at";

/// A row's record.
fn of_row(
    (job_id, call, kind, task, result, created_at): CallColumns,
) -> Result<CallRecord, String> {
    let kind = match kind.as_str() {
        "invoke" => CallKind::Invoke,
        "spawn" => CallKind::Spawn,
        "verify" => CallKind::Verify,
        "callback" => CallKind::Callback,
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

/// The call that made this job as a callback, if one did: its columns.
pub fn callback_of(p: &str) -> String {
    format!("SELECT {COLUMNS} FROM job_calls WHERE kind = 'callback' AND result = {p}")
}

/// The record of callback `job`, made by the end of `of` in `status`
/// (Completed: its `on_success`; Failed: its `on_fail`). Its place names
/// the callback's id, so a job re-driven and ended again keeps each.
pub fn callback(
    of: &str,
    status: crate::job::JobStatus,
    job: &super::NewJob,
    now: Millis,
) -> CallRecord {
    let which = match status {
        crate::job::JobStatus::Completed => "on_success",
        _ => "on_fail",
    };
    CallRecord {
        job_id: of.to_owned(),
        call: format!("{which}:{}", job.id),
        kind: CallKind::Callback,
        task: job.task.name.clone(),
        result: job.id.clone(),
        created_at: now,
    }
}

/// Records a call, unless its place is taken (the first record stands):
/// job_id, call, kind, task, result, created_at.
pub fn insert(p: [&str; 6]) -> String {
    format!(
        "INSERT INTO job_calls ({COLUMNS}) VALUES ({}) ON CONFLICT (job_id, call) DO NOTHING",
        p.join(", ")
    )
}

/// Records a call in the write `tx`; answers whether it was the first.
pub async fn record(tx: &mut dyn super::exec::Exec, c: &CallRecord) -> super::StoreResult<bool> {
    let sql = insert(["$1", "$2", "$3", "$4", "$5", "$6"]);
    let args = args![
        &c.job_id,
        &c.call,
        c.kind.as_str(),
        &c.task,
        &c.result,
        c.created_at
    ];
    Ok(tx.execute(&sql, args).await? == 1)
}

fn records(rows: Vec<CallColumns>) -> super::StoreResult<Vec<CallRecord>> {
    rows.into_iter()
        .map(|r| of_row(r).map_err(super::StoreError::Internal))
        .collect()
}

impl dyn super::JobStore {
    /// One orchestration call a job recorded, by its place.
    pub async fn job_call(&self, id: &str, call: &str) -> super::StoreResult<Option<CallRecord>> {
        let sql = get(["$1", "$2"]);
        let rows: Vec<CallColumns> = self.read().await?.all(&sql, args![id, call]).await?;
        Ok(records(rows)?.pop())
    }

    /// Every orchestration call a job recorded (its children are its
    /// spawns).
    pub async fn job_calls(&self, id: &str) -> super::StoreResult<Vec<CallRecord>> {
        let rows: Vec<CallColumns> = self.read().await?.all(&list("$1"), args![id]).await?;
        records(rows)
    }

    /// The job whose spawn made this one, if one did.
    pub async fn job_parent(&self, id: &str) -> super::StoreResult<Option<String>> {
        self.read().await?.scalar(&parent("$1"), args![id]).await
    }

    /// The call of the job whose end made this one as its callback, if
    /// one did (`CallKind::Callback`).
    pub async fn job_callback_of(&self, id: &str) -> super::StoreResult<Option<CallRecord>> {
        let sql = callback_of("$1");
        let rows: Vec<CallColumns> = self.read().await?.all(&sql, args![id]).await?;
        Ok(records(rows)?.pop())
    }
}
