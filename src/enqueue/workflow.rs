//! A job of a workflow as `POST /v1/jobs {"workflow": …}` asks for it: the
//! workflow's newest version and every task it names pinned as they are
//! now (each step's retry, limits and budget with it), its input checked
//! against the workflow's schema, and the job's first stage set to its
//! first step. The job and its stages are written in one transaction.
//! Part of the enqueue, which calls it; the runner moves the job on from
//! there (`workflow::plan`).

use super::spec::{place, EnqueueError, JobSpec};
use crate::bounds::MAX_FALLBACK_DEPTH;
use crate::registry::{Registry, RegistryError, TaskVersion};
use crate::store::{
    Idempotency, NewJob, StepConfig, StepKind, StepRecord, StepStatus, TaskRef, WorkflowStart,
};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

fn pinned(tv: &TaskVersion) -> TaskRef {
    TaskRef {
        name: tv.record.name.clone(),
        version: tv.record.version,
        digest: tv.record.digest.clone(),
    }
}

/// The job and its stages, ready to insert together.
pub async fn prepare(
    registry: &Registry,
    id: String,
    tenant: &str,
    mut b: JobSpec,
    idempotency: Option<Idempotency>,
) -> Result<(NewJob, WorkflowStart), EnqueueError> {
    let bad = |m: String| EnqueueError::BadRequest(m);
    let name = b.workflow.take().unwrap_or_default();
    if b.task.is_some() {
        return Err(bad(
            "give \"task\" or \"workflow\", not both: a job runs one of them".into(),
        ));
    }
    if b.debounce.is_some() {
        return Err(bad(
            "\"debounce\" is for a task's jobs; a workflow job is not debounced (debounce the \
             job that starts it, or its steps' tasks)"
                .into(),
        ));
    }
    if b.throttle.is_some() {
        return Err(bad(
            "\"throttle\" is for a task's jobs; a workflow job's stages start as its steps \
             come, unthrottled (throttle the steps' tasks instead)"
                .into(),
        ));
    }
    let wf = registry.workflow(tenant, &name, None).await?;
    let input = match b.input.take() {
        None | Some(serde_json::Value::Null) => json!({}),
        Some(v) => v,
    };
    if !input.is_object() {
        return Err(bad(
            "a workflow job's input is an object: its steps' outputs are merged into it".into(),
        ));
    }
    let input = registry.check_workflow_input(&wf, input).await?;
    let placed = place(
        &mut b,
        wf.spec.queue.as_deref().unwrap_or("default"),
        wf.spec.deadline_ms,
    )?;

    let mut tasks: HashMap<String, Arc<TaskVersion>> = HashMap::new();
    let mut steps = Vec::new();
    let chains = [
        (StepKind::Step, &wf.spec.steps),
        (StepKind::OnError, &wf.spec.on_error),
        (StepKind::OnCancel, &wf.spec.on_cancel),
    ];
    for (kind, chain) in chains {
        for s in chain.iter() {
            let tv = task(registry, tenant, &id, &mut tasks, &s.task).await?;
            let row = |kind, tv: &TaskVersion, config: StepConfig, seq: usize| StepRecord {
                seq: u32::try_from(seq).unwrap_or(u32::MAX),
                kind,
                name: s.name.clone(),
                task: pinned(tv),
                max_attempts: config
                    .retry
                    .as_ref()
                    .map_or(tv.retry.max_attempts, |r| r.max_attempts),
                config,
                status: StepStatus::Pending,
                attempts: 0,
                output: None,
                error: None,
                started_at: None,
                finished_at: None,
            };
            let config = StepConfig {
                retry: s.retry.clone(),
                limits: s.limits,
                budget_ms: s.timeout_ms,
            };
            steps.push(row(kind, &tv, config, steps.len()));
            // The step's own fallback, else its task's; one level, since a
            // workflow names what happens after it (`on_error`).
            let fallback = s.fallback.clone().or_else(|| tv.spec.fallback.clone());
            if let Some(f) = fallback.filter(|_| MAX_FALLBACK_DEPTH > 0) {
                let fv = task(registry, tenant, &id, &mut tasks, &f).await?;
                steps.push(row(
                    StepKind::Fallback,
                    &fv,
                    StepConfig::default(),
                    steps.len(),
                ));
            }
        }
    }
    let first = steps
        .first_mut()
        .ok_or_else(|| bad(format!("workflow {name:?} has no steps")))?;
    first.status = StepStatus::Active;
    let (first_task, max_attempts) = (first.task.clone(), first.max_attempts);
    let job = NewJob {
        id: id.clone(),
        tenant: tenant.to_owned(),
        // The job is named by its workflow; the digest is its first step's
        // (what runs is always the stage, pinned in the rows).
        task: TaskRef {
            name: wf.name.clone(),
            version: wf.version,
            digest: first_task.digest,
        },
        queue: placed.queue.clone(),
        priority: placed.priority,
        input: input.to_string(),
        max_attempts,
        run_at: placed.run_at,
        deadline_ms: placed.deadline_ms,
        expire_after_ms: b.expire_after_ms,
        concurrency_key: b.concurrency_key,
        concurrency_limit: None,
        supersedes: false,
        unique_key: b.unique_key,
        on_conflict: b.on_conflict.unwrap_or_default(),
        reuse: b.reuse.unwrap_or_default(),
        idempotency,
        callback_depth: 0,
        cache: None,
        throttle: None,
        debounce: None,
        fairness_key: b.fairness_key,
        fairness_weight: b.fairness_weight,
        traceparent: crate::otel::TraceParent::stored_for(&id, b.trace.as_ref()),
    };
    let start = WorkflowStart {
        id,
        tenant: tenant.to_owned(),
        queue: placed.queue,
        workflow: wf.name.clone(),
        version: wf.version,
        steps,
    };
    Ok((job, start))
}

/// The version of a task a step names, looked up once a job: the live
/// one, or a staged one for a rollout's share of job ids (all of a job's
/// steps choose by the workflow job's id).
async fn task(
    registry: &Registry,
    tenant: &str,
    job_id: &str,
    seen: &mut HashMap<String, Arc<TaskVersion>>,
    name: &str,
) -> Result<Arc<TaskVersion>, EnqueueError> {
    if let Some(tv) = seen.get(name) {
        return Ok(tv.clone());
    }
    let tv = registry
        .task_for(tenant, name, job_id)
        .await
        .map_err(|e| match e {
            RegistryError::TaskNotFound(t) => EnqueueError::BadRequest(format!(
                "the workflow names task {t:?}, which no longer exists; define it again or \
                 push a new version of the workflow"
            )),
            e => e.into(),
        })?;
    seen.insert(name.to_owned(), tv.clone());
    Ok(tv)
}
