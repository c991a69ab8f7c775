//! Cron schedules: define (`PUT /v1/schedules/{name}`), read, list,
//! delete, trigger, pause and resume. Changing one needs the scope
//! `schedules:write`; reading one, that or `jobs:read`.

use super::auth::Principal;
use super::body::JsonBody;
use super::error::ApiError;
use super::ApiState;
use crate::registry::spec::check_name;
use crate::registry::{RegistryError, Which};
use crate::schedule::firer::{FireError, Firer};
use crate::schedule::spec::{ScheduleSpec, SpecError};
use crate::store::clock::rfc3339;
use crate::store::{SchedulePut, ScheduleRecord, ScheduleState, Scope, StoreError};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

/// How often a write that lost a race with the firer is made again.
const RACES: usize = 5;

/// A schedule as the API shows it: its definition and where its firing
/// stands, with its last job's status.
async fn view(state: &ApiState, r: &ScheduleRecord) -> Result<Value, ApiError> {
    let spec = ScheduleSpec::from_stored(&r.spec).map_err(ApiError::Internal)?;
    let st = &r.state;
    let last_job = match &st.last_job {
        Some(id) => {
            let status = state
                .store
                .job_get(&r.tenant, id)
                .await?
                .map(|j| j.status.as_str());
            json!({"id": id, "status": status})
        }
        None => Value::Null,
    };
    Ok(json!({
        "name": r.name,
        "cron": spec.cron,
        "timezone": spec.timezone.as_deref().unwrap_or("UTC"),
        "task": spec.task,
        "workflow": spec.workflow,
        "input": spec.input,
        "queue": spec.queue,
        "overlap": spec.overlap.as_str(),
        "catchup_window_ms": spec.catchup_ms(),
        "before": spec.before,
        "enabled": r.enabled,
        "next_slot": st.next_at.filter(|_| r.enabled).map(rfc3339),
        "last_slot": st.last_slot.map(rfc3339),
        "last_job": last_job,
        "before_job": st.pending.as_ref().map(|id| json!({
            "id": id,
            "slot": st.pending_slot.map(rfc3339),
        })),
        "buffered_slot": st.buffered.map(rfc3339),
        "fired": st.fired,
        "skipped": st.skipped,
        "last_error": st.last_error,
        "created_at": rfc3339(r.created_at),
        "updated_at": rfc3339(r.updated_at),
    }))
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

pub async fn put(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    body: JsonBody<ScheduleSpec>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require(Scope::SchedulesWrite)?;
    check_name("schedule", &name).map_err(ApiError::BadRequest)?;
    let spec = body.value;
    let cron = spec.check().map_err(|e| match e {
        SpecError::Cron(c) => ApiError::BadRequest(c.to_string()),
        SpecError::Invalid(m) => ApiError::InvalidSchedule(m),
    })?;
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

pub async fn show(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require_any(&[Scope::SchedulesWrite, Scope::JobsRead])?;
    let r = find(&state, &who.tenant, &name).await?;
    Ok(Json(view(&state, &r).await?))
}

pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require_any(&[Scope::SchedulesWrite, Scope::JobsRead])?;
    let mut out = Vec::new();
    for r in state.store.schedule_list(&who.tenant).await? {
        out.push(view(&state, &r).await?);
    }
    Ok(Json(json!({ "schedules": out })))
}

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
pub async fn trigger(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
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
            Err(FireError::Unreadable(m)) => return Err(ApiError::Internal(m)),
        }
    }
    Err(ApiError::Conflict(format!(
        "the schedule {name:?} kept changing while this request ran; try again"
    )))
}

pub async fn pause(
    state: State<Arc<ApiState>>,
    who: Principal,
    name: Path<String>,
) -> Result<Json<Value>, ApiError> {
    set_enabled(state, who, name, false).await
}

pub async fn resume(
    state: State<Arc<ApiState>>,
    who: Principal,
    name: Path<String>,
) -> Result<Json<Value>, ApiError> {
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
) -> Result<Json<Value>, ApiError> {
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
