//! Components (`POST /v1/components`) and task versions (`PUT/GET /v1/tasks`).

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::error::ApiError;
use super::{views, ApiState};
use crate::registry::spec::TaskSpec;
use crate::store::Scope;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

pub async fn upload_component(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    req: Request,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require(Scope::TasksWrite)?;
    let bytes = read_limited(req, state.limits.max_component_bytes).await?;
    if bytes.is_empty() {
        return Err(ApiError::BadRequest(
            "the request body is empty; send the component's bytes (e.g. curl --data-binary @task.wasm)".into(),
        ));
    }
    let (c, created) = state.registry.upload(&who.tenant, bytes.to_vec()).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(json!({"digest": c.digest, "size": c.size, "abi": c.abi})),
    ))
}

pub async fn define_task(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    req: Request,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require(Scope::TasksWrite)?;
    let raw = read_limited(req, state.limits.max_json_bytes).await?;
    let spec: TaskSpec = parse_json(&raw)?;
    let tv = state.registry.define(&who.tenant, &name, spec).await?;
    Ok((
        StatusCode::CREATED,
        Json(
            json!({"name": tv.record.name, "version": tv.record.version, "digest": tv.record.digest}),
        ),
    ))
}

pub async fn list_tasks(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require_any(&[Scope::JobsRead, Scope::TasksWrite])?;
    let tasks = state.store.task_list(&who.tenant).await?;
    Ok(Json(
        json!({"tasks": tasks.iter().map(views::task_summary).collect::<Vec<_>>()}),
    ))
}

pub async fn show_task(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require_any(&[Scope::JobsRead, Scope::TasksWrite])?;
    let versions = state.store.task_versions(&who.tenant, &name).await?;
    let latest = versions
        .last()
        .ok_or_else(|| ApiError::TaskNotFound(name.clone()))?;
    Ok(Json(views::task(latest, &versions)))
}
