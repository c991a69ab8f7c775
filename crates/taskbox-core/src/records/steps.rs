//! A job's stages: a workflow's steps, each step's fallback, and its
//! `on_error` and `on_cancel` chains, each pinned to a task version at
//! enqueue, with its own status, attempts, output and error. The stage
//! running now is also in the job's `fallback_*` columns, which is all a
//! claim reads: the rows change only with an attempt's end.

use super::TaskRef;
use crate::job::JobError;
use crate::limits_spec::LimitsSpec;
use crate::retry::RetryPolicy;
use crate::time::Millis;
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

    pub fn parse(s: &str) -> Option<StepKind> {
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

    pub fn parse(s: &str) -> Option<StepStatus> {
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
