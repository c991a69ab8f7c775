//! Queues: `GET /v1/queues`, each of the tenant's queues with its jobs by
//! status, how long the oldest due job has waited and whether it is
//! paused; `POST /v1/queues/{name}/pause` and `/resume`.

use super::auth::{Across, Principal};
use super::body::QueryParams;
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::registry::spec::check_name;
use crate::store::Scope;
use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use utoipa::ToSchema;

/// One of the tenant's queues.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Queue {
    pub tenant: String,
    pub name: String,
    /// Jobs not ended, by status (`queued`, `waiting`, `running`).
    pub depth: BTreeMap<String, u64>,
    /// How long the oldest due queued job has waited; null when none waits.
    pub oldest_queued_age_ms: Option<i64>,
    pub paused: bool,
}

/// The tenant's queues.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct QueueList {
    pub queues: Vec<Queue>,
}

/// What a pause or resume did.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct QueueSwitched {
    pub queue: String,
    pub paused: bool,
    /// Whether the queue was otherwise before.
    pub changed: bool,
}

/// The tenant's queues with their depths. Needs `jobs:read`.
#[utoipa::path(get, path = "/v1/queues", tag = "queues", params(Across),
    responses((status = 200, body = QueueList), Errors))]
pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(q): QueryParams<Across>,
) -> Result<Json<QueueList>, ApiError> {
    who.require(Scope::JobsRead)?;
    let now = state.store.now();
    let queues = state.store.queue_list(who.listing(q.all_tenants)?).await?;
    let queues = queues
        .into_iter()
        .map(|q| Queue {
            depth: q
                .counts
                .iter()
                .map(|(s, n)| (s.as_str().to_owned(), *n))
                .collect(),
            oldest_queued_age_ms: q.oldest_due_run_at.map(|t| (now - t).max(0)),
            paused: q.paused,
            tenant: q.tenant,
            name: q.queue,
        })
        .collect();
    Ok(Json(QueueList { queues }))
}

/// Pauses a queue: from the answer on, none of its jobs is claimed (those
/// running go on); enqueue still works. A queue with no jobs yet may be
/// paused. `changed` is false when it was paused already.
/// Pauses a queue: its jobs stay queued until it is resumed (a queue
/// need not exist yet). Needs `jobs:run`.
#[utoipa::path(post, path = "/v1/queues/{name}/pause", tag = "queues",
    params(("name" = String, Path, description = "The queue's name")),
    responses((status = 200, body = QueueSwitched), Errors))]
pub async fn pause(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<QueueSwitched>, ApiError> {
    switch(&state, &who, name, true).await
}

/// Resumes a paused queue: its jobs are claimed again, in their order.
/// `changed` is false when it was not paused.
/// Resumes a paused queue. Needs `jobs:run`.
#[utoipa::path(post, path = "/v1/queues/{name}/resume", tag = "queues",
    params(("name" = String, Path, description = "The queue's name")),
    responses((status = 200, body = QueueSwitched), Errors))]
pub async fn resume(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<QueueSwitched>, ApiError> {
    switch(&state, &who, name, false).await
}

async fn switch(
    state: &ApiState,
    who: &Principal,
    name: String,
    pause: bool,
) -> Result<Json<QueueSwitched>, ApiError> {
    who.require(Scope::JobsRun)?;
    check_name("queue", &name).map_err(ApiError::BadRequest)?;
    let changed = if pause {
        state.store.queue_pause(&who.tenant, &name).await?
    } else {
        let changed = state.store.queue_resume(&who.tenant, &name).await?;
        state.runner.queued_again(&who.tenant);
        changed
    };
    Ok(Json(QueueSwitched {
        queue: name,
        paused: pause,
        changed,
    }))
}
