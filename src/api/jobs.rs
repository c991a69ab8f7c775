//! Jobs: enqueue, show, list, cancel, run now, resume, attempts.

use super::auth::Principal;
use super::body::{JsonBody, OptionalJson};
use super::error::ApiError;
use super::{views, ApiState};
use crate::job::JobStatus;
use crate::registry::spec::{check_name, ConcurrencyMode};
use crate::registry::{TaskVersion, Which};
use crate::runner::{RunNowError, Waited};
use crate::store::clock::parse_rfc3339;
use crate::store::{
    AttemptQuery, CancelOutcome, Idempotency, Inserted, JobQuery, JobRecord, NewJob, RunAt, Scope,
    StoreError,
};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// Priorities run lowest first, within these bounds.
const PRIORITY_RANGE: std::ops::RangeInclusive<i32> = -1000..=1000;
/// Longest delay (or deadline) an enqueue may ask for: one year.
const MAX_DELAY_MS: u64 = 366 * 24 * 60 * 60 * 1000;
const MAX_KEY_LEN: usize = 255;
const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 500;
const DEFAULT_ATTEMPTS_PAGE: u32 = 100;
const MAX_ATTEMPTS_PAGE: u32 = 1000;
/// Beyond the task's own timeout, how long `run?wait=true` waits for the
/// attempt to end (it may wait for a slot first); then it answers 202.
const RUN_WAIT_SLACK: Duration = Duration::from_secs(60);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnqueueBody {
    task: Option<String>,
    workflow: Option<String>,
    #[serde(default)]
    input: Option<Value>,
    queue: Option<String>,
    priority: Option<i32>,
    run_at: Option<String>,
    delay_ms: Option<u64>,
    deadline_ms: Option<u64>,
    unique_key: Option<String>,
    concurrency_key: Option<String>,
}

fn not_found(e: StoreError, id: &str) -> ApiError {
    match e {
        StoreError::NotFound => ApiError::JobNotFound(id.to_owned()),
        other => other.into(),
    }
}

fn check_key(field: &str, key: &Option<String>) -> Result<(), ApiError> {
    match key {
        Some(k) if k.is_empty() || k.len() > MAX_KEY_LEN => Err(ApiError::BadRequest(format!(
            "{field} must be 1 to {MAX_KEY_LEN} bytes long"
        ))),
        _ => Ok(()),
    }
}

/// The concurrency key of a new job: the one it names, or the task's. A
/// task's key that starts with `/` is a JSON pointer into the input.
fn concurrency_key(
    tv: &TaskVersion,
    body: &EnqueueBody,
    input: &Value,
) -> Result<Option<String>, ApiError> {
    if body.concurrency_key.is_some() {
        return Ok(body.concurrency_key.clone());
    }
    let Some(c) = &tv.spec.concurrency else {
        return Ok(None);
    };
    if !c.key.starts_with('/') {
        return Ok(Some(c.key.clone()));
    }
    let violation = |message: String| {
        ApiError::InvalidInput(vec![crate::registry::schema::Violation {
            pointer: c.key.clone(),
            message,
        }])
    };
    let key =
        match input.pointer(&c.key) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => return Err(violation(
                "the task's concurrency key is read from here, and the input has no value at it"
                    .into(),
            )),
            Some(other) => other.to_string(),
        };
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(violation(format!(
            "the task's concurrency key is read from here, and must be 1 to {MAX_KEY_LEN} bytes long"
        )));
    }
    Ok(Some(key))
}

/// Takes one enqueue from the tenant's bucket, or refuses with 429.
async fn meter_enqueue(state: &ApiState, tenant: &str) -> Result<(), ApiError> {
    let quotas = match state.quotas.get(tenant) {
        Some(q) => q,
        None => {
            let own = state
                .store
                .tenant_get(tenant)
                .await?
                .map(|t| t.quotas)
                .unwrap_or_default();
            state.quotas.put(tenant, own)
        }
    };
    let Some((rate, burst)) = quotas.enqueue_bucket() else {
        return Ok(());
    };
    state
        .meter
        .take(tenant, rate, burst, 1.0)
        .map_err(|wait| ApiError::RateLimited {
            limit: quotas.enqueue_per_second.unwrap_or(0),
            burst: burst as u64,
            retry_after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        })
}

pub async fn enqueue(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    headers: HeaderMap,
    body: JsonBody<EnqueueBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require(Scope::JobsQueue)?;
    meter_enqueue(&state, &who.tenant).await?;
    let JsonBody { value: b, raw } = body;
    if b.workflow.is_some() {
        return Err(ApiError::BadRequest(
            "workflows are not available yet; enqueue a task".into(),
        ));
    }
    let name = b.task.as_deref().ok_or_else(|| {
        ApiError::BadRequest("the body needs \"task\": the name of the task to run".into())
    })?;
    let tv = state.registry.task(&who.tenant, name, None).await?;
    let input = b.input.clone().unwrap_or_else(|| json!({}));
    let input = state.registry.check(&tv, Which::Input, input).await?;
    let queue = b.queue.clone().unwrap_or_else(|| tv.queue().to_owned());
    check_name("queue", &queue).map_err(ApiError::BadRequest)?;
    let priority = b.priority.unwrap_or(0);
    if !PRIORITY_RANGE.contains(&priority) {
        return Err(ApiError::BadRequest(format!(
            "priority must be between {} and {} (lower runs first), not {priority}",
            PRIORITY_RANGE.start(),
            PRIORITY_RANGE.end()
        )));
    }
    // Resolved by the store, by the database's clock.
    let run_at = match (&b.run_at, b.delay_ms) {
        (Some(_), Some(_)) => {
            return Err(ApiError::BadRequest(
                "give run_at or delay_ms, not both".into(),
            ))
        }
        (Some(t), None) => RunAt::At(parse_rfc3339(t).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "run_at {t:?} is not an RFC 3339 time such as 2026-01-31T12:00:00Z"
            ))
        })?),
        (None, Some(d)) if d > MAX_DELAY_MS => {
            return Err(ApiError::BadRequest(format!(
                "delay_ms must be at most {MAX_DELAY_MS} (a year)"
            )))
        }
        (None, Some(d)) => RunAt::After(d),
        (None, None) => RunAt::Now,
    };
    let deadline_ms = b.deadline_ms.or(tv.spec.deadline_ms);
    if deadline_ms.is_some_and(|d| d == 0 || d > MAX_DELAY_MS) {
        return Err(ApiError::BadRequest(format!(
            "deadline_ms must be between 1 and {MAX_DELAY_MS}"
        )));
    }
    check_key("unique_key", &b.unique_key)?;
    check_key("concurrency_key", &b.concurrency_key)?;
    let concurrency_key = concurrency_key(&tv, &b, &input)?;
    let idempotency = match headers.get("idempotency-key") {
        Some(v) => {
            let key = v
                .to_str()
                .ok()
                .filter(|k| !k.is_empty() && k.len() <= MAX_KEY_LEN)
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "the Idempotency-Key header must be 1 to {MAX_KEY_LEN} characters of text"
                    ))
                })?;
            Some(Idempotency {
                key: key.to_owned(),
                body_hash: hex::encode(Sha256::digest(&raw)),
            })
        }
        None => None,
    };
    let new = NewJob {
        id: state.new_job_id(),
        tenant: who.tenant.clone(),
        task: crate::store::TaskRef {
            name: tv.record.name.clone(),
            version: tv.record.version,
            digest: tv.record.digest.clone(),
        },
        queue,
        priority,
        input: input.to_string(),
        max_attempts: tv.retry.max_attempts,
        run_at,
        deadline_ms,
        supersedes: tv
            .spec
            .concurrency
            .as_ref()
            .is_some_and(|c| c.mode == ConcurrencyMode::Supersedes),
        concurrency_key,
        unique_key: b.unique_key,
        idempotency,
    };
    // The runner inserts it, and claims it with the insert if it has room
    // for the tenant.
    let inserted = state
        .runner
        .enqueue(vec![new])
        .await?
        .pop()
        .ok_or_else(|| ApiError::Internal("insert answered nothing".into()))??;
    match inserted {
        Inserted::Created(j) => Ok((StatusCode::CREATED, Json(views::job(&j)))),
        Inserted::Existing(j) => Ok((StatusCode::OK, Json(views::job(&j)))),
    }
}

async fn job_of(state: &ApiState, who: &Principal, id: &str) -> Result<JobRecord, ApiError> {
    state
        .store
        .job_get(&who.tenant, id)
        .await?
        .ok_or_else(|| ApiError::JobNotFound(id.to_owned()))
}

pub async fn show(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsRead)?;
    Ok(Json(views::job(&job_of(&state, &who, &id).await?)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    status: Option<String>,
    task: Option<String>,
    queue: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
}

pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    params: Result<Query<ListParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsRead)?;
    let Query(p) =
        params.map_err(|e| ApiError::BadRequest(format!("bad query string: {}", e.body_text())))?;
    let status = p
        .status
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<JobStatus>().map_err(ApiError::BadRequest))
        .transpose()?;
    let limit = p.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    let page = state
        .store
        .job_list(JobQuery {
            tenant: who.tenant.clone(),
            status,
            task: p.task.filter(|s| !s.is_empty()),
            queue: p.queue.filter(|s| !s.is_empty()),
            limit,
            before: p.cursor.filter(|s| !s.is_empty()),
            max_bytes: state.limits.max_list_bytes,
        })
        .await?;
    // A page cut short by its byte budget has more after it too.
    let more = page.cut || page.jobs.len() == limit as usize;
    let jobs = page.jobs;
    let next = more.then(|| jobs.last().map(|j| j.id.clone())).flatten();
    Ok(Json(json!({
        "jobs": jobs.iter().map(views::job).collect::<Vec<_>>(),
        "next_cursor": next,
    })))
}

pub async fn cancel(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsCancel)?;
    match state
        .store
        .job_cancel(&who.tenant, &id)
        .await
        .map_err(|e| not_found(e, &id))?
    {
        CancelOutcome::Cancelled(j) => Ok(Json(views::job(&j))),
        CancelOutcome::Requested(_) => {
            state.runner.interrupt(&id);
            // The attempt stops within an epoch tick; answer its end when it
            // comes soon, else the job as it is (cancel_requested: true).
            let (Waited::Ended(last) | Waited::StillGoing(last)) = state
                .runner
                .wait_stopped(&who.tenant, &id, state.limits.cancel_wait)
                .await
                .map_err(|e| not_found(e, &id))?;
            Ok(Json(views::job(&last)))
        }
        CancelOutcome::AlreadyEnded(j) => Err(ApiError::Conflict(format!(
            "job {id} is {} already; only a queued, waiting or running job can be cancelled",
            j.status
        ))),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunParams {
    wait: Option<bool>,
}

/// `POST /v1/jobs/{id}/run`: the job goes first in its tenant's line and a
/// runner claims it like any other (within the tenant's share and quotas).
/// With `?wait=true` the request waits for that attempt's end, but does not
/// own it: a client that goes away leaves it running.
pub async fn run_now(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    params: Result<Query<RunParams>, axum::extract::rejection::QueryRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require(Scope::JobsRun)?;
    let Query(p) =
        params.map_err(|e| ApiError::BadRequest(format!("bad query string: {}", e.body_text())))?;
    let run_err = |e: RunNowError| match e {
        RunNowError::Store(s) => not_found(s, &id),
        RunNowError::Stopping => ApiError::Unavailable("the server is stopping".into()),
        e @ RunNowError::NoSlots => ApiError::Unavailable(e.to_string()),
    };
    let job = job_of(&state, &who, &id).await?;
    let wait = if p.wait.unwrap_or(false) {
        let task = job.fallback.as_ref().unwrap_or(&job.task);
        let timeout = state
            .registry
            .task(&who.tenant, &task.name, Some(task.version))
            .await
            .map_or(Duration::ZERO, |tv| {
                Duration::from_millis(tv.limits.timeout_ms)
            });
        Some(timeout + RUN_WAIT_SLACK)
    } else {
        None
    };
    let j = match state
        .runner
        .run_now(&who.tenant, &id, wait)
        .await
        .map_err(run_err)?
    {
        Waited::StillGoing(j) => return Ok((StatusCode::ACCEPTED, Json(views::job(&j)))),
        Waited::Ended(j) => j,
    };
    let failed =
        j.status == JobStatus::Failed || (j.status == JobStatus::Queued && j.error.is_some());
    if failed {
        let why = j.error.as_ref().map(|e| e.to_string()).unwrap_or_default();
        let message = if j.status == JobStatus::Failed {
            format!("the job failed: {why}")
        } else {
            format!("the attempt failed and the job will be retried: {why}")
        };
        return Err(ApiError::Execution {
            message,
            job: views::job(&j),
        });
    }
    Ok((StatusCode::OK, Json(views::job(&j))))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ResumeBody {
    input: Option<Value>,
}

pub async fn resume(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    OptionalJson(body): OptionalJson<ResumeBody>,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsQueue)?;
    let job = job_of(&state, &who, &id).await?;
    let input = match (body.input, &job.fallback) {
        (Some(input), None) => {
            let tv = state
                .registry
                .task(&who.tenant, &job.task.name, Some(job.task.version))
                .await?;
            Some(state.registry.check(&tv, Which::Input, input).await?)
        }
        (input, _) => input,
    };
    let j = state
        .store
        .job_resume(&who.tenant, &id, input.map(|v| v.to_string()))
        .await
        .map_err(|e| not_found(e, &id))?;
    state.wake.notify_one();
    state.runner.enqueued(&j.tenant);
    Ok(Json(views::job(&j)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttemptParams {
    limit: Option<u32>,
    /// The last attempt number of the previous page.
    cursor: Option<u32>,
}

/// `GET /v1/jobs/{id}/attempts?limit=&cursor=`: oldest first, a page at a
/// time (each attempt carries its log).
pub async fn attempts(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    params: Result<Query<AttemptParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsRead)?;
    let Query(p) =
        params.map_err(|e| ApiError::BadRequest(format!("bad query string: {}", e.body_text())))?;
    let limit = p.limit.unwrap_or(DEFAULT_ATTEMPTS_PAGE);
    if !(1..=MAX_ATTEMPTS_PAGE).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_ATTEMPTS_PAGE}"
        )));
    }
    job_of(&state, &who, &id).await?;
    let list = state
        .store
        .attempt_list(AttemptQuery {
            tenant: who.tenant.clone(),
            job_id: id,
            after: p.cursor,
            limit,
        })
        .await?;
    let next = (list.len() == limit as usize)
        .then(|| list.last().map(|a| a.attempt))
        .flatten();
    Ok(Json(json!({
        "attempts": list.iter().map(views::attempt).collect::<Vec<_>>(),
        "next_cursor": next,
    })))
}
