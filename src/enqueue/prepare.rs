//! A task's job as an enqueue asks for it, under every rule of enqueue
//! but the store's own (uniqueness, idempotency, `max_queued`): its task
//! looked up, its input checked, its place and keys set.

use super::spec::{bad, place, EnqueueError, JobSpec, MAX_KEY_LEN};
use crate::registry::key_template;
use crate::registry::rollout::TaskHead;
use crate::registry::schema::Violation;
use crate::registry::spec::ConcurrencyMode;
use crate::registry::{Registry, TaskVersion, Which};
use crate::store::debounce::Debounced;
use crate::store::flow_key::FlowKey;
use crate::store::{Idempotency, NewJob, TaskRef};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The job `b` asks for, with id `id`, under every rule of enqueue but the
/// store's own: what `Enqueuer::prepare` does, for callers that insert the
/// job in a write of their own (a callback, with the end it follows).
pub async fn prepare_job(
    registry: &Registry,
    id: String,
    tenant: &str,
    mut b: JobSpec,
    idempotency: Option<Idempotency>,
    tasks: Option<&mut HashMap<String, Arc<TaskHead>>>,
) -> Result<NewJob, EnqueueError> {
    if b.workflow.is_some() {
        return Err(bad(
            "a workflow job is enqueued on its own (POST /v1/jobs), not in a batch or by a \
             callback or schedule",
        ));
    }
    let name = b
        .task
        .as_deref()
        .ok_or_else(|| bad("the job needs \"task\": the name of the task to run"))?;
    let head = match tasks {
        Some(tasks) => match tasks.get(name) {
            Some(head) => head.clone(),
            None => {
                let head = registry.head(tenant, name).await?;
                tasks.insert(name.to_owned(), head.clone());
                head
            }
        },
        None => registry.head(tenant, name).await?,
    };
    // A rollout's share of job ids pins the staged version.
    let tv = head.pick(&id).clone();
    let input = b.input.take().unwrap_or_else(|| json!({}));
    let input = registry.check(&tv, Which::Input, input).await?;
    let placed = place(&mut b, tv.queue(), tv.spec.deadline_ms)?;
    let concurrency_key = concurrency_key(&tv, &b, &input)?;
    let throttle = flow(b.throttle.take(), tv.spec.throttle.as_ref(), &input)?;
    // The insert settles its chain and its `run_at`.
    let debounce = flow(b.debounce.take(), tv.spec.debounce.as_ref(), &input)?
        .map(|d| Box::new(Debounced::new(d)));
    Ok(NewJob {
        tenant: tenant.to_owned(),
        task: TaskRef {
            name: tv.record.name.clone(),
            version: tv.record.version,
            digest: tv.record.digest.clone(),
        },
        queue: placed.queue,
        priority: placed.priority,
        input: input.to_string(),
        max_attempts: tv.retry.max_attempts,
        run_at: placed.run_at,
        deadline_ms: placed.deadline_ms,
        expire_after_ms: b.expire_after_ms,
        supersedes: tv
            .spec
            .concurrency
            .as_ref()
            .is_some_and(|c| c.mode == ConcurrencyMode::Supersedes),
        concurrency_limit: tv
            .spec
            .concurrency
            .as_ref()
            .and_then(|c| c.limit)
            .filter(|l| *l > 1 && concurrency_key.is_some()),
        concurrency_key,
        unique_key: b.unique_key,
        on_conflict: b.on_conflict.unwrap_or_default(),
        reuse: b.reuse.unwrap_or_default(),
        idempotency,
        callback_depth: 0,
        cache: super::cache::probe(&tv, &input),
        throttle,
        debounce,
        fairness_key: b.fairness_key,
        fairness_weight: b.fairness_weight,
        traceparent: crate::otel::TraceParent::stored_for(&id, b.trace.as_ref()),
        id,
    })
}

/// A new job's throttle or debounce: its own, or its task's, with its key
/// made from the input.
fn flow<T: FlowKey>(
    own: Option<T>,
    task: Option<&T>,
    input: &Value,
) -> Result<Option<T>, EnqueueError> {
    let Some(f) = own.or_else(|| task.cloned()) else {
        return Ok(None);
    };
    let problems = f.problems();
    if !problems.is_empty() {
        return Err(bad(problems.join("; ")));
    }
    let key = key_from(f.key(), &format!("{} key", T::FIELD), input)?;
    Ok(Some(f.with_key(key)))
}

/// The concurrency key of a new job: the one it names, or the task's. A
/// task's key that starts with `/` is a JSON pointer into the input.
fn concurrency_key(
    tv: &TaskVersion,
    body: &JobSpec,
    input: &Value,
) -> Result<Option<String>, EnqueueError> {
    if body.concurrency_key.is_some() {
        return Ok(body.concurrency_key.clone());
    }
    let Some(c) = &tv.spec.concurrency else {
        return Ok(None);
    };
    key_from(&c.key, "concurrency key", input).map(Some)
}

/// A key as a task declares it (`what` names it), made from the input:
/// plain text as it is, a `{field}` template filled in, a JSON pointer
/// read.
fn key_from(declared: &str, what: &str, input: &Value) -> Result<String, EnqueueError> {
    if key_template::is_template(declared) {
        // A task's was checked when the task was defined.
        let parts = key_template::parse(declared).map_err(bad)?;
        let key = key_template::render(&parts, input).map_err(|(pointer, message)| {
            EnqueueError::InvalidInput(vec![Violation { pointer, message }])
        })?;
        if key.is_empty() || key.len() > MAX_KEY_LEN {
            return Err(EnqueueError::InvalidInput(vec![Violation {
                pointer: String::new(),
                message: format!(
                    "the {what} {declared:?} made from the input must be 1 to {MAX_KEY_LEN} bytes long"
                ),
            }]));
        }
        return Ok(key);
    }
    if !declared.starts_with('/') {
        if declared.is_empty() || declared.len() > MAX_KEY_LEN {
            return Err(bad(format!(
                "the {what} must be 1 to {MAX_KEY_LEN} bytes long"
            )));
        }
        return Ok(declared.to_owned());
    }
    let violation = |message: String| {
        EnqueueError::InvalidInput(vec![Violation {
            pointer: declared.to_owned(),
            message,
        }])
    };
    let key = match input.pointer(declared) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => {
            return Err(violation(format!(
                "the {what} is read from here, and the input has no value at it"
            )))
        }
        Some(other) => other.to_string(),
    };
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(violation(format!(
            "the {what} is read from here, and must be 1 to {MAX_KEY_LEN} bytes long"
        )));
    }
    Ok(key)
}
