//! Cancelling a job, whoever asks (the API, or a parent's `parent_close`):
//! a workflow job that is queued or waiting settles its stages and hands
//! over to its `on_cancel` chain, if it has one; any other job is cancelled
//! as the store cancels (a running one is asked to stop).

use super::Plan;
use crate::job::JobStatus;
use crate::parent_close::ParentClose;
use crate::store::{
    CallKind, CancelOutcome, CancelStages, JobStore, StoreError, StoreResult, Write, Written,
};

/// Cancels job `id` of `tenant`; `chains: false` skips a workflow's
/// `on_cancel` chain (a parent's `terminate`).
pub async fn cancel(
    store: &dyn JobStore,
    tenant: &str,
    id: &str,
    chains: bool,
) -> StoreResult<CancelOutcome> {
    let job = store
        .job_get(tenant, id)
        .await?
        .ok_or(StoreError::NotFound)?;
    let plan = match job.status {
        JobStatus::Queued | JobStatus::Waiting => Plan::of(store.job_steps(id).await?),
        _ => None,
    };
    let Some(plan) = plan else {
        return store.job_cancel(tenant, id).await;
    };
    let (on_cancel, steps) = plan.cancel_waiting(&job.input);
    let written = store
        .apply(vec![Write::JobCancelStages(CancelStages {
            tenant: tenant.to_owned(),
            id: id.to_owned(),
            on_cancel: on_cancel.filter(|_| chains),
            steps,
        })])
        .await?;
    match written.into_iter().next() {
        Some(Written::JobCancelled(o)) => Ok(o),
        _ => Err(StoreError::Internal("a cancel answered nothing".into())),
    }
}

/// Applies a parent's `parent_close` policy to its unfinished children
/// once it has ended; answers the children asked to stop while running
/// (their runner, if it is this process, should be told at once).
pub async fn close_children(
    store: &dyn JobStore,
    tenant: &str,
    parent: &str,
    policy: ParentClose,
) -> StoreResult<Vec<String>> {
    if policy == ParentClose::Abandon {
        return Ok(Vec::new());
    }
    let mut running = Vec::new();
    for call in store.job_calls(parent).await? {
        if call.kind != CallKind::Spawn {
            continue;
        }
        match cancel(
            store,
            tenant,
            &call.result,
            policy == ParentClose::RequestCancel,
        )
        .await
        {
            Ok(CancelOutcome::Requested(_)) => running.push(call.result),
            Ok(_) | Err(StoreError::NotFound) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(running)
}
