//! Jobs: enqueue, show, list, cancel, run now, resume, attempts.

use super::auth::{Across, Principal};
use super::body::{JsonBody, OptionalJson, QueryParams};
use super::error::ApiError;
use super::openapi::Errors;
use super::recheck::TokenWatch;
use super::views::{AttemptView, JobDetail, JobOut, JobView};
use super::{views, ApiState};
use crate::enqueue::{EnqueueError, JobSpec, MAX_KEY_LEN};
use crate::job::{ErrorKind, JobStatus};
use crate::redrive::{Filter, Version, MAX_REDRIVE};
use crate::registry::Which;
use crate::runner::{RunNowError, Waited};
use crate::store::{
    AttemptQuery, CancelOutcome, Idempotency, Inserted, JobQuery, JobRecord, NewInput, Scope,
    StoreError,
};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{IntoParams, PartialSchema, ToSchema};

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

/// Enqueues a job of a task (or a workflow) on an input the task's
/// `input_schema` accepts. Needs `jobs:queue`.
#[utoipa::path(
    post,
    path = "/v1/jobs",
    tag = "jobs",
    request_body = JobSpec,
    params(
        ("Idempotency-Key" = Option<String>, Header, description = "The same key and body within 24 h answers the first request's job (200); another body with it is a 409"),
        ("traceparent" = Option<String>, Header, description = "A W3C trace context: the job's trace continues it, under this span (one that does not read is ignored)")
    ),
    responses(
        (status = 201, description = "Enqueued", body = JobView, links(
            ("show" = (operation_id = "jobs_show", parameters(("id" = "$response.body#/id")))),
            ("attempts" = (operation_id = "jobs_attempts", parameters(("id" = "$response.body#/id")))),
            ("cancel" = (operation_id = "jobs_cancel", parameters(("id" = "$response.body#/id")))),
            ("run" = (operation_id = "jobs_run_now", parameters(("id" = "$response.body#/id")))),
            ("resume" = (operation_id = "jobs_resume", parameters(("id" = "$response.body#/id")))),
            ("retry" = (operation_id = "jobs_retry", parameters(("id" = "$response.body#/id")))),
            ("bundle" = (operation_id = "jobs_bundle", parameters(("id" = "$response.body#/id"))))
        )),
        (status = 200, description = "The job an idempotency key or `on_conflict: use_existing` named", body = JobView),
        Errors
    )
)]
pub async fn enqueue(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    headers: HeaderMap,
    body: JsonBody<JobSpec>,
) -> Result<(StatusCode, Json<JobOut>), ApiError> {
    who.require(Scope::JobsQueue)?;
    let start = std::time::SystemTime::now();
    let JsonBody {
        value: mut spec,
        raw,
    } = body;
    let idempotency = idempotency_key(&headers)?.map(|key| Idempotency {
        key,
        body_hash: hex::encode(Sha256::digest(&raw)),
    });
    spec.trace = super::traced::request_trace(&headers);
    let client = spec.trace;
    match state
        .enqueuer
        .enqueue(&who.tenant, spec, idempotency)
        .await?
    {
        Inserted::Created(j) => {
            let by = crate::enqueue::traced::MadeBy {
                parent: client.as_ref(),
                remote: client.is_some(),
                via: "request",
            };
            crate::enqueue::traced::enqueued(state.registry.traces(), &j, by, start);
            Ok((StatusCode::CREATED, Json(JobOut(j))))
        }
        Inserted::Existing(j) => Ok((StatusCode::OK, Json(JobOut(j)))),
    }
}

async fn job_of(state: &ApiState, who: &Principal, id: &str) -> Result<JobRecord, ApiError> {
    state
        .store
        .job_get(&who.tenant, id)
        .await?
        .ok_or_else(|| ApiError::JobNotFound(id.to_owned()))
}

/// A job, with its stages, children and parent. Needs `jobs:read`.
#[utoipa::path(get, path = "/v1/jobs/{id}", tag = "jobs", params(("id" = String, Path, description = "The job's id")),
    responses((status = 200, body = JobDetail), Errors))]
pub async fn show(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    who.require(Scope::JobsRead)?;
    let job = job_of(&state, &who, &id).await?;
    let steps = state.store.job_steps(&job.id).await?;
    let calls = state.store.job_calls(&job.id).await?;
    let parent = state.store.job_parent(&job.id).await?;
    let callback_of = state.store.job_callback_of(&job.id).await?;
    let origin = views::Origin {
        parent: parent.as_deref(),
        callback_of: callback_of.as_ref(),
    };
    Ok(Json(views::job_with_steps(&job, &steps, &calls, origin)).into_response())
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Only jobs in this status (empty: any).
    #[param(value_type = Option<StatusFilter>, inline)]
    status: Option<String>,
    /// Only jobs of this task.
    task: Option<String>,
    /// Only jobs in this queue.
    queue: Option<String>,
    /// Most jobs in the page (1 to 500; default 50).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    cursor: Option<String>,
    /// Every tenant's jobs (the admin token's alone; 403 for a tenant's).
    all_tenants: Option<bool>,
}

/// A job status, or empty for any (as a form with no choice sends it).
pub struct StatusFilter;

impl utoipa::PartialSchema for StatusFilter {
    fn schema() -> RefOr<Schema> {
        let any = ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some([""]));
        OneOfBuilder::new()
            .item(Ref::from_schema_name("JobStatus"))
            .item(any)
            .into()
    }
}

impl ToSchema for StatusFilter {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push(("JobStatus".into(), JobStatus::schema()));
    }
}

/// A page of jobs, newest first.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct JobPage<'a> {
    #[schema(value_type = Vec<JobView>)]
    pub jobs: Vec<JobView<'a>>,
    /// Where the next page starts; null on the last.
    pub next_cursor: Option<String>,
}

/// The tenant's jobs (the admin's: with `all_tenants`, every tenant's),
/// newest first, a page at a time. Needs `jobs:read`.
#[utoipa::path(get, path = "/v1/jobs", tag = "jobs", params(ListParams),
    responses((status = 200, body = JobPage), Errors))]
pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(p): QueryParams<ListParams>,
) -> Result<Response, ApiError> {
    who.require(Scope::JobsRead)?;
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
            tenant: who.listing(p.all_tenants)?.map(str::to_owned),
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
    Ok(Json(JobPage {
        jobs: jobs.iter().map(JobView::of).collect(),
        next_cursor: next,
    })
    .into_response())
}

/// Cancels a queued, waiting or running job (a running one is stopped
/// within an epoch tick; the answer waits briefly for it). Needs
/// `jobs:cancel`.
#[utoipa::path(post, path = "/v1/jobs/{id}/cancel", tag = "jobs", params(("id" = String, Path, description = "The job's id")),
    responses((status = 200, description = "The job, cancelled (or `cancel_requested` while its attempt stops)", body = JobView), Errors))]
pub async fn cancel(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Json<JobOut>, ApiError> {
    who.require(Scope::JobsCancel)?;
    match cancel_one(&state, &who.tenant, &id)
        .await
        .map_err(|e| not_found(e, &id))?
    {
        CancelOutcome::Cancelled(j) | CancelOutcome::Handed(j) => Ok(Json(JobOut(j))),
        CancelOutcome::Requested(_) => {
            state.runner.interrupt(&id);
            // The attempt stops within an epoch tick; answer its end when it
            // comes soon, else the job as it is (cancel_requested: true).
            let (Waited::Ended(last) | Waited::StillGoing(last)) = state
                .runner
                .wait_stopped(&who.tenant, &id, state.limits.cancel_wait)
                .await
                .map_err(|e| not_found(e, &id))?;
            Ok(Json(JobOut(last)))
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

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RunParams {
    /// Wait for the attempt's end (up to the task's timeout and a minute).
    wait: Option<bool>,
}

/// `POST /v1/jobs/{id}/run`: the job goes first in its tenant's line and a
/// runner claims it like any other (within the tenant's share and quotas).
/// With `?wait=true` the request waits for that attempt's end, but does not
/// own it: a client that goes away leaves it running, and so does one whose
/// token is revoked or expires meanwhile (answered 401 within 5 s).
#[utoipa::path(post, path = "/v1/jobs/{id}/run", tag = "jobs",
    params(("id" = String, Path, description = "The job's id"), RunParams),
    responses(
        (status = 200, description = "Due now (with `wait`: the attempt ended and the job did not fail)", body = JobView),
        (status = 202, description = "With `wait`: the attempt has not ended yet", body = JobView),
        Errors
    ))]
pub async fn run_now(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    QueryParams(p): QueryParams<RunParams>,
) -> Result<(StatusCode, Json<JobOut>), ApiError> {
    who.require(Scope::JobsRun)?;
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
    let run = state.runner.run_now(&who.tenant, &id, wait);
    let waited = if wait.is_some() {
        // A wait lasts up to the task's timeout and a minute: its token is
        // looked up again meanwhile, as an event stream's is, and a refusal
        // answers at once (the attempt goes on, as when a client goes away).
        tokio::select! {
            r = run => r,
            e = TokenWatch::new(state.clone(), &who).refused() => return Err(e),
        }
    } else {
        run.await
    };
    let j = match waited.map_err(run_err)? {
        Waited::StillGoing(j) => return Ok((StatusCode::ACCEPTED, Json(JobOut(j)))),
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
    Ok((StatusCode::OK, Json(JobOut(j))))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeBody {
    /// A new input for the job (checked against the task's `input_schema`).
    input: Option<Value>,
}

/// Sends a waiting job back to the queue, on a new input if one is given.
/// The body may be left out. Needs `jobs:queue`.
#[utoipa::path(post, path = "/v1/jobs/{id}/resume", tag = "jobs", params(("id" = String, Path, description = "The job's id")),
    request_body(content = Option<ResumeBody>),
    responses((status = 200, body = JobView), Errors))]
pub async fn resume(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    OptionalJson(body): OptionalJson<ResumeBody>,
) -> Result<Json<JobOut>, ApiError> {
    who.require(Scope::JobsQueue)?;
    let job = job_of(&state, &who, &id).await?;
    let input = match (body.input, &job.fallback) {
        (Some(input), None) => {
            let tv = state
                .registry
                .task(&who.tenant, &job.task.name, Some(job.task.version))
                .await?;
            let input = state.registry.check(&tv, Which::Input, input).await?;
            // The job now ends with the new input's output: its cache key
            // is the new input's, by the rule an enqueue keys it by.
            Some(NewInput {
                cache_key: crate::enqueue::cache::probe(&tv, &input).map(|p| p.key),
                input: input.to_string(),
            })
        }
        // A fallback's input: the job keeps no key in its fallback.
        (input, _) => input.map(|v| NewInput::plain(v.to_string())),
    };
    let j = state
        .store
        .job_resume(&who.tenant, &id, input)
        .await
        .map_err(|e| not_found(e, &id))?;
    state.runner.queued_again(&j.tenant);
    Ok(Json(JobOut(j)))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryBody {
    /// `"latest"`: on the task's newest version; absent or `"pinned"`: on
    /// the version the job pinned.
    #[schema(value_type = Option<RetryVersion>)]
    digest: Option<String>,
}

/// Which version of its task a re-driven job runs.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
enum RetryVersion {
    /// The version the job pinned (the default).
    Pinned,
    /// The task's newest version.
    Latest,
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
#[utoipa::path(post, path = "/v1/jobs/{id}/retry", tag = "jobs", params(("id" = String, Path, description = "The job's id")),
    request_body(content = Option<RetryBody>),
    responses((status = 200, description = "The job, queued for a new series of attempts", body = JobView), Errors))]
pub async fn retry(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    OptionalJson(body): OptionalJson<RetryBody>,
) -> Result<Json<JobOut>, ApiError> {
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
    Ok(Json(JobOut(j)))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryFilter {
    task: Option<String>,
    queue: Option<String>,
    /// The error's kind, e.g. `timeout`.
    kind: Option<ErrorKind>,
    /// The error's code.
    code: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryManyBody {
    #[serde(default, deserialize_with = "crate::strict::object")]
    filter: RetryFilter,
    #[schema(value_type = Option<RetryVersion>)]
    digest: Option<String>,
    /// Most jobs to re-drive (1 to 10000, the default).
    #[schema(minimum = 1, maximum = 10000)]
    limit: Option<u32>,
}

/// What a re-drive of many did.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct RetriedMany {
    /// Jobs queued again.
    pub retried: u64,
    /// Jobs that matched but were refused (a unique key taken since,
    /// `max_queued`).
    pub refused: u64,
    /// Whether more failed jobs match past `limit`.
    pub more: bool,
}

/// `POST /v1/jobs/retry` `{filter?: {task?, queue?, kind?, code?}, digest?,
/// limit?}`: re-drives the tenant's failed jobs that match (the admin's,
/// with `?all_tenants=true`: every tenant's, each charged to its own
/// tenant's enqueue rate), newest first, up to `limit` (default and most:
/// `MAX_REDRIVE`), and says how many.
#[utoipa::path(post, path = "/v1/jobs/retry", tag = "jobs", params(Across),
    request_body = RetryManyBody, responses((status = 200, body = RetriedMany), Errors))]
pub async fn retry_many(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(q): QueryParams<Across>,
    body: JsonBody<RetryManyBody>,
) -> Result<Json<RetriedMany>, ApiError> {
    who.require(Scope::JobsQueue)?;
    let tenant = who.listing(q.all_tenants)?;
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
    let done = state.redriver.many(tenant, &filter, version, limit).await?;
    Ok(Json(RetriedMany {
        retried: done.retried,
        refused: done.refused,
        more: done.more,
    }))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AttemptParams {
    /// Most attempts in the page (1 to 1000; default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
    /// The last attempt number of the previous page.
    cursor: Option<u32>,
}

/// `GET /v1/jobs/{id}/attempts?limit=&cursor=`: oldest first, a page at a
/// time (each attempt carries its log).
/// A page of attempts.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct AttemptPage<'a> {
    #[schema(value_type = Vec<AttemptView>)]
    pub attempts: Vec<AttemptView<'a>>,
    /// Where the next page starts; null on the last.
    pub next_cursor: Option<u32>,
}

#[utoipa::path(get, path = "/v1/jobs/{id}/attempts", tag = "jobs",
    params(("id" = String, Path, description = "The job's id"), AttemptParams),
    responses((status = 200, body = AttemptPage), Errors))]
pub async fn attempts(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    QueryParams(p): QueryParams<AttemptParams>,
) -> Result<Response, ApiError> {
    who.require(Scope::JobsRead)?;
    let limit = p.limit.unwrap_or(DEFAULT_ATTEMPTS_PAGE);
    if !(1..=MAX_ATTEMPTS_PAGE).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_ATTEMPTS_PAGE}"
        )));
    }
    let job = job_of(&state, &who, &id).await?;
    let list = state
        .store
        .attempt_list(AttemptQuery {
            tenant: who.tenant.clone(),
            job_id: job.id.clone(),
            after: p.cursor,
            limit,
        })
        .await?;
    let next = (list.len() == limit as usize)
        .then(|| list.last().map(|a| a.attempt))
        .flatten();
    let steps = state.store.job_steps(&job.id).await?;
    Ok(Json(AttemptPage {
        attempts: views::attempts(&list, &steps),
        next_cursor: next,
    })
    .into_response())
}
