//! Queues: `GET /v1/queues`, each of the tenant's queues with its jobs by
//! status, how long the oldest due job has waited and whether it is
//! paused; `POST /v1/queues/{name}/pause` and `/resume`.

use super::auth::Principal;
use super::error::ApiError;
use super::ApiState;
use crate::registry::spec::check_name;
use crate::store::Scope;
use axum::extract::{Path, State};
use axum::Json;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsRead)?;
    let now = state.store.now();
    let queues = state.store.queue_list(&who.tenant).await?;
    let queues: Vec<Value> = queues
        .iter()
        .map(|q| {
            let depth: Map<String, Value> = q
                .counts
                .iter()
                .map(|(s, n)| (s.as_str().to_owned(), json!(n)))
                .collect();
            json!({
                "name": q.queue,
                "depth": depth,
                "oldest_queued_age_ms": q.oldest_due_run_at.map(|t| (now - t).max(0)),
                "paused": q.paused,
            })
        })
        .collect();
    Ok(Json(json!({ "queues": queues })))
}

/// Pauses a queue: from the answer on, none of its jobs is claimed (those
/// running go on); enqueue still works. A queue with no jobs yet may be
/// paused. `changed` is false when it was paused already.
pub async fn pause(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    switch(&state, &who, name, true).await
}

/// Resumes a paused queue: its jobs are claimed again, in their order.
/// `changed` is false when it was not paused.
pub async fn resume(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    switch(&state, &who, name, false).await
}

async fn switch(
    state: &ApiState,
    who: &Principal,
    name: String,
    pause: bool,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsRun)?;
    check_name("queue", &name).map_err(ApiError::BadRequest)?;
    let changed = if pause {
        state.store.queue_pause(&who.tenant, &name).await?
    } else {
        let changed = state.store.queue_resume(&who.tenant, &name).await?;
        state.runner.queued_again(&who.tenant);
        changed
    };
    Ok(Json(
        json!({"queue": name, "paused": pause, "changed": changed}),
    ))
}
