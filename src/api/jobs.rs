//! Jobs: enqueue, show, list, cancel, run now, resume, attempts.

use super::auth::Principal;
use super::body::{JsonBody, OptionalJson};
use super::error::ApiError;
use super::{views, ApiState};
use crate::enqueue::{Caller, EnqueueError, JobSpec, MAX_KEY_LEN};
use crate::job::{ErrorKind, JobStatus};
use crate::redrive::{Filter, Version, MAX_REDRIVE};
use crate::registry::Which;
use crate::runner::{RunNowError, Waited};
use crate::store::{
    AttemptQuery, CancelOutcome, Idempotency, Inserted, JobQuery, JobRecord, Scope, StoreError,
};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 500;
const DEFAULT_ATTEMPTS_PAGE: u32 = 100;
const MAX_ATTEMPTS_PAGE: u32 = 1000;
/// Beyond the task's own timeout, how long `run?wait=true` waits for the
/// attempt to end (it may wait for a slot first); then it answers 202.
const RUN_WAIT_SLACK: Duration = Duration::from_secs(60);

fn not_found(e: StoreError, id: &str) -> ApiError {
    match e {
        StoreError::NotFound => ApiError::JobNotFound(id.to_owned()),
        other => other.into(),
    }
}

/// The `Idempotency-Key` header, if sent.
pub(super) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(v) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = v
        .to_str()
        .ok()
        .filter(|k| !k.is_empty() && k.len() <= MAX_KEY_LEN)
        .ok_or_else(|| {
            ApiError::BadRequest(format!(
                "the Idempotency-Key header must be 1 to {MAX_KEY_LEN} characters of text"
            ))
        })?;
    Ok(Some(key.to_owned()))
}

pub async fn enqueue(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    headers: HeaderMap,
    body: JsonBody<JobSpec>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require(Scope::JobsQueue)?;
    let JsonBody { value: spec, raw } = body;
    let idempotency = idempotency_key(&headers)?.map(|key| Idempotency {
        key,
        body_hash: hex::encode(Sha256::digest(&raw)),
    });
    match state
        .enqueuer
        .enqueue(&who.tenant, spec, idempotency, Caller::Tenant)
        .await?
    {
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
    let job = job_of(&state, &who, &id).await?;
    let steps = state.store.job_steps(&job.id).await?;
    let calls = state.store.job_calls(&job.id).await?;
    let parent = state.store.job_parent(&job.id).await?;
    Ok(Json(views::job_with_steps(
        &job,
        &steps,
        &calls,
        parent.as_deref(),
    )))
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
    match cancel_one(&state, &who.tenant, &id)
        .await
        .map_err(|e| not_found(e, &id))?
    {
        CancelOutcome::Cancelled(j) | CancelOutcome::Handed(j) => Ok(Json(views::job(&j))),
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

/// Cancels a job (`workflow::cancel`); a job whose `on_cancel` chain took
/// over is due now.
async fn cancel_one(state: &ApiState, tenant: &str, id: &str) -> Result<CancelOutcome, StoreError> {
    let o = crate::workflow::cancel::cancel(state.store.as_ref(), tenant, id, true).await?;
    if matches!(o, CancelOutcome::Handed(_)) {
        state.runner.queued_again(tenant);
    }
    Ok(o)
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
    state.runner.queued_again(&j.tenant);
    Ok(Json(views::job(&j)))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RetryBody {
    /// `"latest"`: on the task's newest version; absent or `"pinned"`: on
    /// the version the job pinned.
    digest: Option<String>,
}

fn version_of(d: Option<&str>) -> Result<Version, ApiError> {
    match d {
        None | Some("pinned") => Ok(Version::Pinned),
        Some("latest") => Ok(Version::Latest),
        Some(other) => Err(ApiError::BadRequest(format!(
            "digest must be \"latest\" (the task's newest version) or \"pinned\" (the job's own, the default), not {other:?}"
        ))),
    }
}

/// `POST /v1/jobs/{id}/retry` `{digest?: "latest"}`: a failed job back to
/// the queue for a new series of attempts.
pub async fn retry(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    OptionalJson(body): OptionalJson<RetryBody>,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsQueue)?;
    let version = version_of(body.digest.as_deref())?;
    let j = state
        .redriver
        .one(&who.tenant, &id, version)
        .await
        .map_err(|e| match e {
            EnqueueError::Store(s) => not_found(s, &id),
            other => other.into(),
        })?;
    Ok(Json(views::job(&j)))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RetryFilter {
    task: Option<String>,
    queue: Option<String>,
    /// The error's kind, e.g. `timeout`.
    kind: Option<ErrorKind>,
    /// The error's code.
    code: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryManyBody {
    #[serde(default)]
    filter: RetryFilter,
    digest: Option<String>,
    limit: Option<u32>,
}

/// `POST /v1/jobs/retry` `{filter?: {task?, queue?, kind?, code?}, digest?,
/// limit?}`: re-drives the tenant's failed jobs that match, newest first,
/// up to `limit` (default and most: `MAX_REDRIVE`), and says how many.
pub async fn retry_many(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    body: JsonBody<RetryManyBody>,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsQueue)?;
    let b = body.value;
    let version = version_of(b.digest.as_deref())?;
    let limit = b.limit.unwrap_or(MAX_REDRIVE);
    if !(1..=MAX_REDRIVE).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_REDRIVE}"
        )));
    }
    let filter = Filter {
        task: b.filter.task.filter(|s| !s.is_empty()),
        queue: b.filter.queue.filter(|s| !s.is_empty()),
        kind: b.filter.kind,
        code: b.filter.code,
    };
    let done = state
        .redriver
        .many(&who.tenant, &filter, version, limit)
        .await?;
    Ok(Json(json!({
        "retried": done.retried,
        "refused": done.refused,
        "more": done.more,
    })))
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
