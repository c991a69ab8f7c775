//! Verifying a candidate component against a task's recorded jobs before
//! it runs: a verification is a job the host runs itself (its task is
//! `verify:<task>`, a name no task can have), pinned to the candidate's
//! digest, whose input names the recorded jobs it runs again and whose
//! output is the report. `prepare` makes the job; the runner runs it
//! (`runner::verify`); `report` compares.

pub mod report;

use crate::registry::{Registry, RegistryError};
use crate::store::{NewJob, StoreError, TaskRef};
use serde::{Deserialize, Serialize};

/// What a verification job's task name starts with (`:` is in no task's
/// name).
pub const PREFIX: &str = "verify:";
/// Most recorded jobs one verification runs again.
pub const MAX_SAMPLE: u32 = 1_000;
pub const DEFAULT_SAMPLE: u32 = 100;
/// Attempts of a verification job: it starts over from its recorded
/// runs after a lost runner.
const MAX_ATTEMPTS: u32 = 3;

/// A verification job's input: the task, the version whose limits the
/// candidate runs under, the candidate's digest, and the recorded jobs,
/// chosen when it was asked for (so an attempt after a lost runner runs
/// the same ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub task: String,
    pub version: u32,
    pub component: String,
    pub jobs: Vec<String>,
}

/// The task a verification job verifies, when the job is one.
pub fn task_of(job_task: &str) -> Option<&str> {
    job_task.strip_prefix(PREFIX)
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("sample must be between 1 and {MAX_SAMPLE}, not {0}")]
    Sample(u32),
    #[error(
        "task {0:?} has no ended job to verify against: run some jobs first (a job served \
         from a result cache, or ended by a fallback, does not count)"
    )]
    NothingRecorded(String),
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

impl From<StoreError> for VerifyError {
    fn from(e: StoreError) -> Self {
        VerifyError::Registry(e.into())
    }
}

/// The verification job of `component` against task `name`'s last
/// `sample` ended jobs, with id `id`: the task's live version gives the
/// limits, the queue and the recorded jobs' task. The component must be
/// the tenant's.
pub async fn prepare(
    registry: &Registry,
    id: String,
    tenant: &str,
    name: &str,
    component: &str,
    sample: Option<u32>,
) -> Result<NewJob, VerifyError> {
    let sample = sample.unwrap_or(DEFAULT_SAMPLE);
    if !(1..=MAX_SAMPLE).contains(&sample) {
        return Err(VerifyError::Sample(sample));
    }
    let tv = registry.task(tenant, name, None).await?;
    let store = registry.store();
    if store.component_get(tenant, component).await?.is_none() {
        return Err(RegistryError::ComponentNotFound(component.to_owned()).into());
    }
    let jobs = store.ended_sample(tenant, name, sample).await?;
    if jobs.is_empty() {
        return Err(VerifyError::NothingRecorded(name.to_owned()));
    }
    let plan = Plan {
        task: name.to_owned(),
        version: tv.record.version,
        component: component.to_owned(),
        jobs,
    };
    let input = serde_json::to_string(&plan).map_err(|e| StoreError::Internal(e.to_string()))?;
    let mut job = NewJob::plain(
        id,
        tenant,
        TaskRef {
            name: format!("{PREFIX}{name}"),
            version: tv.record.version,
            digest: component.to_owned(),
        },
        input,
    );
    job.queue = tv.queue().to_owned();
    job.max_attempts = MAX_ATTEMPTS;
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verification_is_named_by_a_prefix_no_task_has() {
        assert_eq!(task_of("verify:invoice"), Some("invoice"));
        assert_eq!(task_of("invoice"), None);
        assert!(crate::registry::spec::check_name("task", "verify:invoice").is_err());
        let plan: Plan = serde_json::from_str(
            r#"{"task": "t", "version": 2, "component": "sha256:c", "jobs": ["a", "b"]}"#,
        )
        .unwrap();
        assert_eq!(plan.jobs, ["a", "b"]);
        assert!(serde_json::from_str::<Plan>(r#"{"task": "t"}"#).is_err());
    }
}
