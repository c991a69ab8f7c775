//! A job's stages' rows (`job_steps`): the SQL both backends share to read
//! and write them; the records are the core's (`records::steps`).

use super::records::{StepKind, StepRecord, StepStatus, TaskRef, WorkflowStart};
/// A row's columns as both backends read them, in `COLUMNS`' order.
pub type StepColumns = (
    i32,
    String,
    String,
    String,
    i32,
    String,
    i32,
    String,
    String,
    i32,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<i64>,
);

pub const COLUMNS: &str = "seq, kind, name, task, task_version, digest, max_attempts, config, \
    status, attempts, output, error, started_at, finished_at";

fn u32_of(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// A row's record.
pub fn record(c: StepColumns) -> Result<StepRecord, String> {
    let (seq, kind, name, task, version, digest, max, config, status, attempts) =
        (c.0, c.1, c.2, c.3, c.4, c.5, c.6, c.7, c.8, c.9);
    Ok(StepRecord {
        seq: u32_of(seq),
        kind: StepKind::parse(&kind).ok_or_else(|| format!("step kind {kind:?}"))?,
        name,
        task: TaskRef {
            name: task,
            version: u32_of(version),
            digest,
        },
        max_attempts: u32_of(max),
        config: serde_json::from_str(&config).map_err(|e| format!("step config: {e}"))?,
        status: StepStatus::parse(&status).ok_or_else(|| format!("step status {status:?}"))?,
        attempts: u32_of(attempts),
        output: c.10,
        error: c.11.and_then(|e| serde_json::from_str(&e).ok()),
        started_at: c.12,
        finished_at: c.13,
    })
}

/// A job's stages in order: parameter 1 is the job's id.
pub fn list(p: &str) -> String {
    format!("SELECT {COLUMNS} FROM job_steps WHERE job_id = {p} ORDER BY seq")
}

/// Inserts one row: job_id, seq, kind, name, task, task_version, digest,
/// max_attempts, config, status, started_at.
pub fn insert(p: [&str; 11]) -> String {
    format!(
        "INSERT INTO job_steps (job_id, seq, kind, name, task, task_version, digest, \
         max_attempts, config, status, started_at) VALUES ({})",
        p.join(", ")
    )
}

/// Sets the job's stage to its first row as it starts: parameters
/// workflow, version, task, task_version, digest, id. Only a job this
/// insert made (no stage yet, no attempt) is changed.
pub fn start(p: [&str; 6]) -> String {
    let [workflow, version, task, task_version, digest, id] = p;
    let no_key = super::ending_sql::NO_CACHE_KEY;
    format!(
        "UPDATE jobs SET workflow = {workflow}, workflow_version = {version}, \
         fallback_task = {task}, fallback_version = {task_version}, fallback_digest = {digest}, \
         fallback_input = input, {no_key} WHERE id = {id} AND workflow IS NULL AND fallback_task IS NULL \
         AND attempts = 0"
    )
}

/// Writes one `StepWrite` with its whole row, making the row if it is
/// missing: job_id, seq, kind, name, task, task_version, digest,
/// max_attempts, config, status, attempts, output, error, started_at,
/// finished_at.
pub fn upsert(p: [&str; 15]) -> String {
    format!(
        "INSERT INTO job_steps (job_id, {COLUMNS}) VALUES ({}) ON CONFLICT (job_id, seq) DO UPDATE \
         SET status = excluded.status, attempts = COALESCE(excluded.attempts, job_steps.attempts), \
         output = COALESCE(excluded.output, job_steps.output), \
         error = COALESCE(excluded.error, job_steps.error), \
         started_at = COALESCE(excluded.started_at, job_steps.started_at), \
         finished_at = COALESCE(excluded.finished_at, job_steps.finished_at)",
        p.join(", ")
    )
}

/// Writes one `StepWrite`: parameters status, attempts, output, error,
/// started_at, finished_at, job_id, seq. What a write leaves out (NULL)
/// keeps its value.
pub fn update(p: [&str; 8]) -> String {
    let [status, attempts, output, error, started, finished, id, seq] = p;
    format!(
        "UPDATE job_steps SET status = {status}, attempts = COALESCE({attempts}, attempts), \
         output = COALESCE({output}, output), error = COALESCE({error}, error), \
         started_at = COALESCE({started}, started_at), \
         finished_at = COALESCE({finished}, finished_at) WHERE job_id = {id} AND seq = {seq}"
    )
}

/// What a workflow's start's events name.
pub fn about(w: &WorkflowStart) -> super::outbox::About<'_> {
    super::outbox::About {
        id: &w.id,
        tenant: &w.tenant,
        task: &w.workflow,
        queue: &w.queue,
        attempt: 0,
    }
}
