//! A job's stages as the seam keeps them (`job_steps`): a workflow's steps,
//! each step's fallback, and its `on_error` and `on_cancel` chains, each
//! pinned to a task version at enqueue, with its own status, attempts,
//! output and error; and the SQL both backends share to read and write
//! them. The stage running now is also in the job's `fallback_*` columns,
//! which is all a claim reads: the rows change only with an attempt's end.

use super::records::TaskRef;
use super::Millis;
use crate::job::JobError;
use crate::limits_spec::LimitsSpec;
use crate::retry::RetryPolicy;
use serde::{Deserialize, Serialize};

/// What a stage is: a step of a chain, or the fallback of the step just
/// before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A job's own task, once a fallback took over from it (a job of one
    /// task has no rows until then).
    Task,
    /// A step of the workflow's main chain.
    Step,
    /// The fallback of the step before it (the row at `seq - 1`).
    Fallback,
    OnError,
    OnCancel,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Task => "task",
            StepKind::Step => "step",
            StepKind::Fallback => "fallback",
            StepKind::OnError => "on_error",
            StepKind::OnCancel => "on_cancel",
        }
    }

    fn parse(s: &str) -> Option<StepKind> {
        Some(match s {
            "task" => StepKind::Task,
            "step" => StepKind::Step,
            "fallback" => StepKind::Fallback,
            "on_error" => StepKind::OnError,
            "on_cancel" => StepKind::OnCancel,
            _ => return None,
        })
    }
}

/// Where a stage stands. `active` is the one stage the job is on (queued,
/// running or waiting, as the job is); a stage the job never reached ends
/// `skipped`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    Active,
    Completed,
    Failed,
    Cancelled,
    Skipped,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Active => "active",
            StepStatus::Completed => "completed",
            StepStatus::Failed => "failed",
            StepStatus::Cancelled => "cancelled",
            StepStatus::Skipped => "skipped",
        }
    }

    fn parse(s: &str) -> Option<StepStatus> {
        Some(match s {
            "pending" => StepStatus::Pending,
            "active" => StepStatus::Active,
            "completed" => StepStatus::Completed,
            "failed" => StepStatus::Failed,
            "cancelled" => StepStatus::Cancelled,
            "skipped" => StepStatus::Skipped,
            _ => return None,
        })
    }

    pub fn is_over(self) -> bool {
        !matches!(self, StepStatus::Pending | StepStatus::Active)
    }
}

/// What a stage runs with besides its task's own settings, pinned at
/// enqueue like its task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsSpec>,
    /// The stage's budget across all its attempts, from when it became
    /// active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ms: Option<u64>,
}

/// One stage of a job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepRecord {
    /// Its place in the job's stages, from 0.
    pub seq: u32,
    pub kind: StepKind,
    /// The step's name (a fallback's is its step's).
    pub name: String,
    pub task: TaskRef,
    /// Attempts it may make.
    pub max_attempts: u32,
    #[serde(skip)]
    pub config: StepConfig,
    pub status: StepStatus,
    pub attempts: u32,
    /// Its output (JSON text), once it completed.
    #[serde(skip)]
    pub output: Option<String>,
    pub error: Option<JobError>,
    pub started_at: Option<Millis>,
    pub finished_at: Option<Millis>,
}

/// A change to one stage, written with the attempt's end that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepWrite {
    pub seq: u32,
    pub status: StepStatus,
    /// Its attempts so far, when the attempt was one of its.
    pub attempts: Option<u32>,
    pub output: Option<String>,
    pub error: Option<JobError>,
    /// Whether it makes the stage active (its start, reported as one);
    /// an active stage's attempt count moving on is not.
    pub starts: bool,
    /// The whole row, for a stage that may have none yet (a fallback's,
    /// made as it takes over): written if missing.
    pub row: Option<Box<StepRecord>>,
    /// What its events name.
    pub name: String,
    pub kind: StepKind,
    pub task: String,
}

/// Starts a workflow job as it is inserted: its rows, the first of them
/// active, and the job's stage set to it.
#[derive(Debug, Clone)]
pub struct WorkflowStart {
    pub id: String,
    pub tenant: String,
    pub queue: String,
    pub workflow: String,
    pub version: u32,
    pub steps: Vec<StepRecord>,
}

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

impl TryFrom<StepColumns> for StepRecord {
    type Error = String;

    fn try_from(c: StepColumns) -> Result<StepRecord, String> {
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

impl StepWrite {
    /// When the write starts the stage (`started_at`) and ends it
    /// (`finished_at`), given the store's clock.
    pub fn times(&self, now: Millis) -> (Option<Millis>, Option<Millis>) {
        (
            self.starts.then_some(now),
            self.status.is_over().then_some(now),
        )
    }

    pub fn error_json(&self) -> Option<String> {
        self.error
            .as_ref()
            .map(|e| serde_json::to_string(e).unwrap_or_else(|_| "null".into()))
    }
}

impl WorkflowStart {
    /// What its events name.
    pub fn about(&self) -> super::outbox::About<'_> {
        super::outbox::About {
            id: &self.id,
            tenant: &self.tenant,
            task: &self.workflow,
            queue: &self.queue,
            attempt: 0,
        }
    }
}

/// The writes of an end that landed in `status`: a job that ended (a
/// pending cancel stopped it where it would have gone on) makes no stage
/// active: the one it would have started is skipped, and the one that
/// ran ends as the job did.
pub fn landing(
    steps: &[StepWrite],
    status: crate::job::JobStatus,
) -> std::borrow::Cow<'_, [StepWrite]> {
    if !status.is_terminal() || !steps.iter().any(|w| w.status == StepStatus::Active) {
        return std::borrow::Cow::Borrowed(steps);
    }
    let ended = match status {
        crate::job::JobStatus::Completed => StepStatus::Completed,
        crate::job::JobStatus::Cancelled => StepStatus::Cancelled,
        _ => StepStatus::Failed,
    };
    let mut out = steps.to_vec();
    for w in &mut out {
        if w.status == StepStatus::Active {
            // One that would have started never did; the one that ran ends
            // as the job did.
            w.status = if w.starts { StepStatus::Skipped } else { ended };
            w.starts = false;
        }
    }
    std::borrow::Cow::Owned(out)
}

impl StepRecord {
    pub fn config_json(&self) -> String {
        serde_json::to_string(&self.config).unwrap_or_else(|_| "{}".into())
    }

    /// The write that makes this stage the active one.
    pub fn activate(&self) -> StepWrite {
        StepWrite {
            starts: true,
            ..self.write(StepStatus::Active, None, None, None)
        }
    }

    pub fn write(
        &self,
        status: StepStatus,
        attempts: Option<u32>,
        output: Option<String>,
        error: Option<JobError>,
    ) -> StepWrite {
        StepWrite {
            seq: self.seq,
            status,
            attempts,
            output,
            error,
            starts: false,
            row: None,
            name: self.name.clone(),
            kind: self.kind,
            task: self.task.name.clone(),
        }
    }
}
