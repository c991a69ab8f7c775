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
