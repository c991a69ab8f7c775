//! Cron schedules: define (`PUT /v1/schedules/{name}`), read, list,
//! delete, trigger, pause and resume. Changing one needs the scope
//! `schedules:write`; reading one, that or `jobs:read`.

use super::auth::{Across, Principal};
use super::body::{JsonBody, QueryParams};
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::job::JobStatus;
use crate::registry::spec::check_name;
use crate::registry::{RegistryError, Which};
use crate::schedule::firer::{FireError, Firer};
use crate::schedule::spec::Overlap;
use crate::schedule::spec::{ScheduleSpec, SpecError};
use crate::store::clock::rfc3339;
use crate::store::{SchedulePut, ScheduleRecord, ScheduleState, Scope, StoreError};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use utoipa::ToSchema;

/// How often a write that lost a race with the firer is made again.
const RACES: usize = 5;

/// A schedule as the API shows it: its definition and where its firing
/// stands, with its last job's status.
#[derive(Serialize, Deserialize, ToSchema)]
#[schema(as = Schedule)]
pub struct ScheduleView {
    pub tenant: String,
    pub name: String,
    pub cron: String,
    /// An IANA zone (`UTC` when the definition left it out).
    pub timezone: String,
    pub task: Option<String>,
    pub workflow: Option<String>,
    pub input: Value,
    pub queue: Option<String>,
    pub overlap: Overlap,
    pub catchup_window_ms: u64,
    pub before: Option<String>,
    pub enabled: bool,
    /// `cron` in words ("at 09:30, on Monday through Friday"); null for
    /// an expression with parts it has no words for.
    pub cron_words: Option<String>,
    /// The next slot it fires at; null while paused.
    pub next_slot: Option<String>,
    /// The next five slots from now, paused or not (UTC; the page shows
    /// them in `timezone`).
    pub next_slots: Vec<String>,
    pub last_slot: Option<String>,
    pub last_job: Option<LastJob>,
    /// The `before` task's job of a slot, while it runs.
    pub before_job: Option<BeforeJob>,
    /// A slot held for its last job's end (`overlap: buffer_one`).
    pub buffered_slot: Option<String>,
    pub fired: u64,
    pub skipped: u64,
    pub last_error: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// The job the schedule's last slot made, with its status now (null once
/// it is pruned).
#[derive(Serialize, Deserialize, ToSchema)]
pub struct LastJob {
    pub id: String,
    pub status: Option<JobStatus>,
}

/// A slot's `before` job.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct BeforeJob {
    pub id: String,
    pub slot: Option<String>,
}

/// The tenant's schedules.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct ScheduleList {
    pub schedules: Vec<ScheduleView>,
}

async fn view(state: &ApiState, r: &ScheduleRecord) -> Result<ScheduleView, ApiError> {
    let spec = ScheduleSpec::from_stored(&r.spec).map_err(ApiError::Internal)?;
    let st = &r.state;
    let last_job = match &st.last_job {
        Some(id) => Some(LastJob {
            id: id.clone(),
            status: state.store.job_get(&r.tenant, id).await?.map(|j| j.status),
        }),
        None => None,
    };
    let cron_words = crate::schedule::words::describe(&spec.cron);
    let next_slots = next_slots(&spec, state.store.now());
    Ok(ScheduleView {
        tenant: r.tenant.clone(),
        name: r.name.clone(),
        catchup_window_ms: spec.catchup_ms(),
        timezone: spec.timezone.unwrap_or_else(|| "UTC".into()),
        cron: spec.cron,
        task: spec.task,
        workflow: spec.workflow,
        input: spec.input,
        queue: spec.queue,
        overlap: spec.overlap,
        before: spec.before,
        enabled: r.enabled,
        cron_words,
        next_slots,
        next_slot: st.next_at.filter(|_| r.enabled).map(rfc3339),
        last_slot: st.last_slot.map(rfc3339),
        last_job,
        before_job: st.pending.as_ref().map(|id| BeforeJob {
            id: id.clone(),
            slot: st.pending_slot.map(rfc3339),
        }),
        buffered_slot: st.buffered.map(rfc3339),
        fired: st.fired,
        skipped: st.skipped,
        last_error: st.last_error.clone(),
        created_at: rfc3339(r.created_at),
        updated_at: rfc3339(r.updated_at),
    })
}

/// How many coming slots a schedule shows.
const SHOWN_SLOTS: usize = 5;

fn next_slots(spec: &ScheduleSpec, now: crate::store::Millis) -> Vec<String> {
    let Ok(expr) = spec.check() else {
        return Vec::new();
    };
    std::iter::successors(expr.next_after(now), |at| expr.next_after(*at))
        .take(SHOWN_SLOTS)
        .map(rfc3339)
        .collect()
}

fn firer(state: &ApiState) -> Result<&Arc<Firer>, ApiError> {
    state.firer.as_ref().ok_or_else(|| {
        ApiError::Unavailable("this server does not run schedules; ask another".into())
    })
}

async fn find(state: &ApiState, tenant: &str, name: &str) -> Result<ScheduleRecord, ApiError> {
    state
        .store
        .schedule_get(tenant, name)
        .await?
        .ok_or_else(|| ApiError::ScheduleNotFound(crate::text::bounded(name, 64)))
}

/// Checks what the definition names: its task (and `before` task) exist,
/// and its input is one the task takes.
async fn check_tasks(state: &ApiState, tenant: &str, spec: &ScheduleSpec) -> Result<(), ApiError> {
    let missing = |which: &str, name: &str| {
        ApiError::InvalidSchedule(format!(
            "its {which} {name:?} was not found; define it with PUT /v1/tasks/{name} first"
        ))
    };
    if let Some(name) = &spec.workflow {
        let wf = match state.registry.workflow(tenant, name, None).await {
            Ok(w) => w,
            Err(RegistryError::WorkflowNotFound(_)) => {
                return Err(ApiError::InvalidSchedule(format!(
                    "its workflow {name:?} was not found; define it with PUT /v1/workflows/{name} first"
                )))
            }
            Err(e) => return Err(e.into()),
        };
        if !(spec.input.is_object() || spec.input.is_null()) {
            return Err(ApiError::BadRequest(
                "a workflow's input is an object: its steps' outputs are merged into it".into(),
            ));
        }
        state
            .registry
            .check_workflow_input(&wf, spec.input.clone())
            .await?;
    } else {
        let task = match state.registry.task(tenant, spec.target(), None).await {
            Ok(t) => t,
            Err(RegistryError::TaskNotFound(_)) => return Err(missing("task", spec.target())),
            Err(e) => return Err(e.into()),
        };
        state
            .registry
            .check(&task, Which::Input, spec.input.clone())
            .await?;
    }
    if let Some(before) = &spec.before {
        match state.registry.task(tenant, before, None).await {
            Ok(_) => {}
            Err(RegistryError::TaskNotFound(_)) => return Err(missing("before task", before)),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Defines (or redefines) a schedule. Needs `schedules:write`.
#[utoipa::path(put, path = "/v1/schedules/{name}", tag = "schedules", params(("name" = String, Path, description = "The schedule's name")),
    request_body = ScheduleSpec,
    responses(
        (status = 201, description = "Made", body = ScheduleView, links(
            ("show" = (operation_id = "schedules_show", parameters(("name" = "$response.body#/name")))),
            ("trigger" = (operation_id = "schedules_trigger", parameters(("name" = "$response.body#/name")))),
            ("pause" = (operation_id = "schedules_pause", parameters(("name" = "$response.body#/name")))),
            ("resume" = (operation_id = "schedules_resume", parameters(("name" = "$response.body#/name")))),
            ("delete" = (operation_id = "schedules_delete", parameters(("name" = "$response.body#/name"))))
        )),
        (status = 200, description = "Redefined", body = ScheduleView),
        Errors
    ))]
pub async fn put(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    body: JsonBody<ScheduleSpec>,
) -> Result<(StatusCode, Json<ScheduleView>), ApiError> {
    who.require(Scope::SchedulesWrite)?;
    check_name("schedule", &name).map_err(ApiError::BadRequest)?;
    let spec = body.value;
    let cron = spec.check().map_err(|e| match e {
        SpecError::Cron(c) => ApiError::BadRequest(c.to_string()),
        SpecError::Invalid(m) => ApiError::InvalidSchedule(m),
    })?;
    let floor = firer(&state)?.min_interval();
    let floor_ms = i64::try_from(floor.as_millis()).unwrap_or(i64::MAX);
    if let Some(gap) = cron
        .shortest_gap(state.store.now(), crate::schedule::firer::GAP_SLOTS)
        .filter(|g| *g < floor_ms)
    {
        return Err(ApiError::InvalidSchedule(format!(
            "cron {:?} fires {gap} ms apart; a schedule fires at most once every {floor_ms} ms \
             on this server (--schedule-min-interval-ms)",
            spec.cron
        )));
    }
    check_tasks(&state, &who.tenant, &spec).await?;
    for _ in 0..RACES {
        let now = state.store.now();
        let old = state.store.schedule_get(&who.tenant, &name).await?;
        let (state_now, rev) = match &old {
            None => (
                ScheduleState {
                    next_at: cron.next_after(now),
                    ..ScheduleState::default()
                },
                None,
            ),
            Some(old) => {
                let old_spec = ScheduleSpec::from_stored(&old.spec).ok();
                let mut st = old.state.clone();
                // New slots, or slots that stood still while it was
                // paused, start from now; otherwise the next one stands.
                let keep = old.enabled
                    && old_spec.is_some_and(|o| o.same_slots(&spec))
                    && st.next_at.is_some();
                if !keep {
                    st.next_at = cron.next_after(now);
                }
                if !spec.enabled || spec.overlap != crate::schedule::spec::Overlap::BufferOne {
                    st.buffered = None;
                }
                (st, Some(old.rev))
            }
        };
        let put = SchedulePut {
            tenant: who.tenant.clone(),
            name: name.clone(),
            spec: spec.to_stored(),
            enabled: spec.enabled,
            state: state_now,
            rev,
        };
        match state.store.schedule_put(put).await {
            Ok(r) => {
                if let Some(f) = &state.firer {
                    f.changed();
                }
                let code = if old.is_none() {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                };
                return Ok((code, Json(view(&state, &r).await?)));
            }
            // The firer (or another request) wrote it between the read
            // and the write: read it again.
            Err(StoreError::Conflict(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::Conflict(format!(
        "the schedule {name:?} kept changing while this request ran; try again"
    )))
}

/// A schedule and where its firing stands. Needs `schedules:write` or
/// `jobs:read`.
#[utoipa::path(get, path = "/v1/schedules/{name}", tag = "schedules", params(("name" = String, Path, description = "The schedule's name")),
    responses((status = 200, body = ScheduleView), Errors))]
pub async fn show(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<ScheduleView>, ApiError> {
    who.require_any(&[Scope::SchedulesWrite, Scope::JobsRead])?;
    let r = find(&state, &who.tenant, &name).await?;
    Ok(Json(view(&state, &r).await?))
}

/// The tenant's schedules. Needs `schedules:write` or `jobs:read`.
#[utoipa::path(get, path = "/v1/schedules", tag = "schedules", params(Across),
    responses((status = 200, body = ScheduleList), Errors))]
pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(q): QueryParams<Across>,
) -> Result<Json<ScheduleList>, ApiError> {
    who.require_any(&[Scope::SchedulesWrite, Scope::JobsRead])?;
    let mut out = Vec::new();
    for r in state
        .store
        .schedule_list(who.listing(q.all_tenants)?)
        .await?
    {
        out.push(view(&state, &r).await?);
    }
    Ok(Json(ScheduleList { schedules: out }))
}

/// Deletes a schedule (its jobs stay). Needs `schedules:write`.
#[utoipa::path(delete, path = "/v1/schedules/{name}", tag = "schedules", params(("name" = String, Path, description = "The schedule's name")),
    responses((status = 204, description = "Deleted"), Errors))]
pub async fn delete(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    who.require(Scope::SchedulesWrite)?;
    if !state.store.schedule_delete(&who.tenant, &name).await? {
        return Err(ApiError::ScheduleNotFound(crate::text::bounded(&name, 64)));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Fires the schedule now, outside its slots, whatever its overlap
/// policy (through its `before` task if it has one).
#[utoipa::path(post, path = "/v1/schedules/{name}/trigger", tag = "schedules", params(("name" = String, Path, description = "The schedule's name")),
    responses((status = 200, description = "Fired", body = ScheduleView), Errors))]
pub async fn trigger(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<ScheduleView>, ApiError> {
    who.require(Scope::SchedulesWrite)?;
    let firer = firer(&state)?;
    for _ in 0..RACES {
        let r = find(&state, &who.tenant, &name).await?;
        match firer.trigger(r).await {
            Ok(r) => return Ok(Json(view(&state, &r).await?)),
            // The firer moved it on meanwhile: read it again.
            Err(FireError::Store(StoreError::Conflict(_))) => continue,
            Err(FireError::Store(e)) => return Err(e.into()),
            Err(e @ FireError::Busy(_)) => return Err(ApiError::Conflict(e.to_string())),
            Err(FireError::RateLimited(over)) => {
                return Err(crate::enqueue::EnqueueError::from(over).into())
            }
            Err(FireError::Unreadable(m)) => return Err(ApiError::Internal(m)),
        }
    }
    Err(ApiError::Conflict(format!(
        "the schedule {name:?} kept changing while this request ran; try again"
    )))
}

/// Pauses a schedule: no slot fires until it is resumed. Needs
/// `schedules:write`.
#[utoipa::path(post, path = "/v1/schedules/{name}/pause", tag = "schedules", params(("name" = String, Path, description = "The schedule's name")),
    responses((status = 200, body = ScheduleView), Errors))]
pub async fn pause(
    state: State<Arc<ApiState>>,
    who: Principal,
    name: Path<String>,
) -> Result<Json<ScheduleView>, ApiError> {
    set_enabled(state, who, name, false).await
}

/// Resumes a schedule from its next slot after now. Needs
/// `schedules:write`.
#[utoipa::path(post, path = "/v1/schedules/{name}/resume", tag = "schedules", params(("name" = String, Path, description = "The schedule's name")),
    responses((status = 200, body = ScheduleView), Errors))]
pub async fn resume(
    state: State<Arc<ApiState>>,
    who: Principal,
    name: Path<String>,
) -> Result<Json<ScheduleView>, ApiError> {
    set_enabled(state, who, name, true).await
}

/// Pauses or resumes a schedule. A resumed one fires from its next slot
/// after now: the slots it stood still through are neither fired nor
/// counted.
async fn set_enabled(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    enabled: bool,
) -> Result<Json<ScheduleView>, ApiError> {
    who.require(Scope::SchedulesWrite)?;
    for _ in 0..RACES {
        let r = find(&state, &who.tenant, &name).await?;
        if r.enabled == enabled {
            return Ok(Json(view(&state, &r).await?));
        }
        let mut put = r.put();
        put.enabled = enabled;
        if enabled {
            let spec = ScheduleSpec::from_stored(&r.spec).map_err(ApiError::Internal)?;
            let cron = spec
                .check()
                .map_err(|e| ApiError::Internal(e.to_string()))?;
            put.state.next_at = cron.next_after(state.store.now());
        } else {
            put.state.buffered = None;
        }
        match state.store.schedule_put(put).await {
            Ok(r) => {
                if let Some(f) = &state.firer {
                    f.changed();
                }
                return Ok(Json(view(&state, &r).await?));
            }
            Err(StoreError::Conflict(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::Conflict(format!(
        "the schedule {name:?} kept changing while this request ran; try again"
    )))
}
