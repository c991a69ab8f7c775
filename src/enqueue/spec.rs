//! What an enqueue asks for (`JobSpec`), why one is refused
//! (`EnqueueError`), and the rules of where and when any new job runs
//! (`place`): the part of enqueue that a workflow's start shares, so it
//! sits below both.

use crate::admission::Over;
use crate::bounds::MAX_DELAY_MS;
use crate::registry::schema::{CheckError, Violation};
use crate::registry::spec::check_name;
use crate::registry::RegistryError;
use crate::store::{OnConflict, Reuse, RunAt, StoreError};
use crate::time::parse_rfc3339;
use serde::Deserialize;
use serde_json::Value;

/// Priorities run lowest first, within these bounds.
pub const PRIORITY_RANGE: std::ops::RangeInclusive<i32> = -1000..=1000;
/// Longest key (unique, concurrency, idempotency) a job may carry.
pub const MAX_KEY_LEN: usize = 255;

/// One job to enqueue, as `POST /v1/jobs` takes it (and each item of a
/// batch). Unknown fields are refused, so that a misspelled one is not
/// silently ignored.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"task": "echo", "input": {"op": "echo", "value": 1}}))]
pub struct JobSpec {
    pub task: Option<String>,
    pub workflow: Option<String>,
    #[serde(default)]
    pub input: Option<Value>,
    pub queue: Option<String>,
    pub priority: Option<i32>,
    /// An RFC 3339 time; one in the past is now.
    pub run_at: Option<String>,
    pub delay_ms: Option<u64>,
    pub deadline_ms: Option<u64>,
    /// Schedule-to-start timeout (Temporal's): still queued this long
    /// after it came due, the job fails with kind `expired` and never runs.
    pub expire_after_ms: Option<u64>,
    pub unique_key: Option<String>,
    /// With a `unique_key` an unfinished job holds: `error` (409, the
    /// default) or `use_existing` (that job, 200).
    pub on_conflict: Option<OnConflict>,
    /// Whether the `unique_key` of finished jobs may be used again:
    /// `allow` (the default), `allow_failed_only`, `reject`.
    pub reuse: Option<Reuse>,
    pub concurrency_key: Option<String>,
    /// In place of its task's throttle (its key read as the task's is).
    #[serde(default, deserialize_with = "crate::strict::optional_object")]
    pub throttle: Option<crate::store::throttle::Throttle>,
    /// In place of its task's debounce (its key read as the task's is).
    #[serde(default, deserialize_with = "crate::strict::optional_object")]
    pub debounce: Option<crate::store::debounce::Debounce>,
    /// The key its tenant's claims share the runners' time by (1 to 64
    /// bytes; its concurrency key when left out): the tenant's keys are
    /// served in turn, as tenants are.
    pub fairness_key: Option<String>,
    /// Its fairness key's weight, 1 to 1000 (1 when left out); the weight
    /// of a key's next job is the key's.
    pub fairness_weight: Option<u32>,
    /// The trace the job continues: a request's `traceparent` header, or
    /// the attempt of the job that made it. Not part of the body.
    #[serde(skip)]
    #[schema(ignore)]
    pub trace: Option<crate::otel::TraceParent>,
}

impl JobSpec {
    /// A job of `task` on `input`, with the task's defaults for the rest.
    pub fn of(task: impl Into<String>, input: Value) -> Self {
        JobSpec {
            task: Some(task.into()),
            input: Some(input),
            ..JobSpec::default()
        }
    }
}

/// Why a job was not enqueued; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum EnqueueError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("the job's input does not match the task's input_schema")]
    InvalidInput(Vec<Violation>),
    #[error("{0}")]
    BadRequest(String),
    /// Over the tenant's enqueue rate; try again after `retry_after_ms`.
    #[error("the tenant's enqueue rate ({limit} per second, {burst} at once) is used up")]
    RateLimited {
        limit: u64,
        burst: u64,
        retry_after_ms: u64,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<CheckError> for EnqueueError {
    fn from(e: CheckError) -> Self {
        EnqueueError::InvalidInput(e.violations())
    }
}

pub(crate) fn bad(message: impl Into<String>) -> EnqueueError {
    EnqueueError::BadRequest(message.into())
}

/// Where and when a job runs, held to the rules every job is, whatever it
/// runs; its keys are checked too.
pub(crate) struct Placed {
    pub queue: String,
    pub priority: i32,
    pub run_at: RunAt,
    pub deadline_ms: Option<u64>,
}

/// `b`'s placing, with the defaults of what it runs.
pub(crate) fn place(
    b: &mut JobSpec,
    default_queue: &str,
    default_deadline: Option<u64>,
) -> Result<Placed, EnqueueError> {
    let queue = b.queue.take().unwrap_or_else(|| default_queue.to_owned());
    check_name("queue", &queue).map_err(EnqueueError::BadRequest)?;
    let priority = b.priority.unwrap_or(0);
    if !PRIORITY_RANGE.contains(&priority) {
        return Err(bad(format!(
            "priority must be between {} and {} (lower runs first), not {priority}",
            PRIORITY_RANGE.start(),
            PRIORITY_RANGE.end()
        )));
    }
    let run_at = run_at(b)?;
    let deadline_ms = b.deadline_ms.or(default_deadline);
    if deadline_ms.is_some_and(|d| d == 0 || d > MAX_DELAY_MS) {
        return Err(bad(format!(
            "deadline_ms must be between 1 and {MAX_DELAY_MS}"
        )));
    }
    if b.expire_after_ms
        .is_some_and(|d| d == 0 || d > MAX_DELAY_MS)
    {
        return Err(bad(format!(
            "expire_after_ms must be between 1 and {MAX_DELAY_MS}"
        )));
    }
    check_key("unique_key", &b.unique_key)?;
    if b.unique_key.is_none() && (b.on_conflict.is_some() || b.reuse.is_some()) {
        return Err(bad(
            "on_conflict and reuse are rules of a unique_key; give one, or leave them out",
        ));
    }
    check_key("concurrency_key", &b.concurrency_key)?;
    check_fairness(b)?;
    Ok(Placed {
        queue,
        priority,
        run_at,
        deadline_ms,
    })
}

impl From<Over> for EnqueueError {
    fn from(o: Over) -> Self {
        EnqueueError::RateLimited {
            limit: o.limit,
            burst: o.burst,
            retry_after_ms: o.retry_after_ms,
        }
    }
}

/// When the job is due, resolved later by the store, by its clock.
fn run_at(b: &JobSpec) -> Result<RunAt, EnqueueError> {
    match (&b.run_at, b.delay_ms) {
        (Some(_), Some(_)) => Err(bad("give run_at or delay_ms, not both")),
        (Some(t), None) => Ok(RunAt::At(parse_rfc3339(t).ok_or_else(|| {
            bad(format!(
                "run_at {t:?} is not an RFC 3339 time such as 2026-01-31T12:00:00Z"
            ))
        })?)),
        (None, Some(d)) if d > MAX_DELAY_MS => Err(bad(format!(
            "delay_ms must be at most {MAX_DELAY_MS} (a year)"
        ))),
        (None, Some(d)) => Ok(RunAt::After(d)),
        (None, None) => Ok(RunAt::Now),
    }
}

/// A fairness key is short, and its weight in range.
fn check_fairness(b: &JobSpec) -> Result<(), EnqueueError> {
    use crate::store::fair_keys::{MAX_FAIRNESS_KEY_LEN, MAX_FAIRNESS_WEIGHT};
    if b.fairness_key
        .as_ref()
        .is_some_and(|k| k.is_empty() || k.len() > MAX_FAIRNESS_KEY_LEN)
    {
        return Err(bad(format!(
            "fairness_key must be 1 to {MAX_FAIRNESS_KEY_LEN} bytes long"
        )));
    }
    if b.fairness_weight
        .is_some_and(|w| w == 0 || w > MAX_FAIRNESS_WEIGHT)
    {
        return Err(bad(format!(
            "fairness_weight must be between 1 and {MAX_FAIRNESS_WEIGHT}"
        )));
    }
    Ok(())
}

fn check_key(field: &str, key: &Option<String>) -> Result<(), EnqueueError> {
    match key {
        Some(k) if k.is_empty() || k.len() > MAX_KEY_LEN => Err(bad(format!(
            "{field} must be 1 to {MAX_KEY_LEN} bytes long"
        ))),
        _ => Ok(()),
    }
}
