//! Workflows run: a job's stages as rows (`store::step_rows`), started at
//! enqueue (`enqueue::workflow`) and moved on after each attempt (`plan`).
//! The runner runs a workflow job's active stage like any job's task; only
//! where the job goes after it differs.

pub mod cancel;
pub mod orchestrate;
pub mod place;
pub mod plan;

/// A workflow job's start is the enqueue's (`enqueue::workflow`), below
/// this folder; its old path stands for callers that still name it.
pub use crate::enqueue::workflow as start;

use crate::store::{ClaimedJob, JobStore, StoreError, StoreResult};
pub use plan::Plan;
use std::sync::Arc;

/// The plan of a claimed job whose stage is not its own task: a workflow
/// job's (a job of one task that fell back has no rows, and no plan).
pub async fn plan_of(store: &dyn JobStore, job: &ClaimedJob) -> StoreResult<Option<Plan>> {
    if job.own_task.is_none() {
        return Ok(None);
    }
    Ok(Plan::of(store.job_steps(&job.id).await?))
}

/// `plan_of`, read on the runtime `home` (the server's): a database
/// connection opened on the guests' runtime would die with it.
pub async fn plan_at(
    home: &tokio::runtime::Handle,
    store: Arc<dyn JobStore>,
    job: &ClaimedJob,
) -> StoreResult<Option<Plan>> {
    if job.own_task.is_none() {
        return Ok(None);
    }
    let id = job.id.clone();
    let rows = home
        .spawn(async move { store.job_steps(&id).await })
        .await
        .map_err(|e| StoreError::Unavailable(format!("the read was dropped: {e}")))??;
    Ok(Plan::of(rows))
}
