//! Components and task versions as the registry keeps them, and a version pinned into a job.

use super::*;

#[derive(Debug, Clone)]
pub struct NewComponent {
    pub tenant: String,
    pub digest: String,
    pub abi: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComponentRecord {
    pub digest: String,
    pub size: u64,
    pub abi: String,
    #[serde(skip)]
    pub created_at: Millis,
}

#[derive(Debug, Clone)]
pub struct NewTask {
    pub tenant: String,
    pub name: String,
    pub digest: String,
    /// The task definition, JSON text (a `registry::spec::TaskSpec`).
    pub spec: String,
    /// Stages the version for a canary rollout: this share (0–100 %) of
    /// new jobs pins it, the rest the task's live version. Refused when
    /// the task has no live version, or has a staged one already.
    pub rollout: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    pub tenant: String,
    pub name: String,
    pub version: u32,
    pub digest: String,
    pub spec: String,
    pub created_at: Millis,
    /// Set while the version is staged: the share of new jobs it gets.
    pub rollout_percent: Option<u8>,
    /// When the version was staged (kept once it is promoted).
    pub rollout_started_at: Option<Millis>,
    /// When its rollout was rolled back; it is never live after.
    pub rolled_back_at: Option<Millis>,
}

impl TaskRecord {
    /// Whether new jobs may pin it without a rollout's choice: neither
    /// staged nor rolled back.
    pub fn is_live(&self) -> bool {
        self.rollout_percent.is_none() && self.rolled_back_at.is_none()
    }

    /// When its rollout began: what a rollout's figures count from.
    pub fn rollout_since(&self) -> Millis {
        self.rollout_started_at.unwrap_or(self.created_at)
    }
}

/// What new jobs of a task pin: its live version, and the version being
/// rolled out beside it, if one is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskHead {
    pub live: TaskRecord,
    pub staged: Option<TaskRecord>,
}

/// A change to a task's rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RolloutChange {
    /// New jobs pin the staged version at this share (0–100 %).
    Percent(u8),
    /// The staged version becomes the live one.
    Promote,
    /// The staged version is dropped; the live one stays.
    Rollback,
}

/// What one task version did since a rollout began: its jobs that ended,
/// and its attempts and their fuel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct VersionFigures {
    pub version: u32,
    /// Jobs pinned to it that completed (a cache hit included).
    pub completed: u64,
    /// Jobs pinned to it that failed for good.
    pub failed: u64,
    /// Its attempts, whatever they ended in.
    pub attempts: u64,
    /// The fuel its attempts burned.
    pub fuel: u64,
}

/// A task version pinned into a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TaskRef {
    pub name: String,
    pub version: u32,
    pub digest: String,
}

/// Whether task `name` may take a new version now: not while another is
/// being rolled out (promote it or roll it back first), and a rollout
/// needs a live version to share the jobs with.
pub fn may_define(
    name: &str,
    (staged, live): (Option<i64>, i64),
    rollout: bool,
) -> Result<(), crate::store_error::StoreError> {
    if let Some(v) = staged {
        return Err(crate::store_error::StoreError::Conflict(format!(
            "version {v} of task {name:?} is being rolled out; promote it (POST \
             /v1/tasks/{name}/promote) or roll it back (POST /v1/tasks/{name}/rollback) before \
             defining another"
        )));
    }
    if rollout && live == 0 {
        return Err(crate::store_error::StoreError::Conflict(format!(
            "task {name:?} has no live version to roll a new one out beside; define it without \
             \"rollout\""
        )));
    }
    Ok(())
}

/// The versions of `HEAD`, newest first, as what new jobs pin: the newest is staged (then
/// the next is live) or live.
impl TaskHead {
    pub fn of(rows: impl IntoIterator<Item = TaskRecord>) -> Option<TaskHead> {
        let mut rows = rows.into_iter();
        let first = rows.next()?;
        if first.is_live() {
            return Some(TaskHead {
                live: first,
                staged: None,
            });
        }
        // A staged version without a live one beside it cannot be made (a
        // define checks); were one found, its jobs pin nothing rather than it.
        let live = rows.next().filter(TaskRecord::is_live)?;
        Some(TaskHead {
            live,
            staged: Some(first),
        })
    }
}
