//! Workflow definitions: `PUT /v1/workflows/{name}` adds a version (as a
//! task's PUT does; it needs `tasks:write`), `GET` shows the newest (or
//! `?version=N`), `GET /v1/workflows` lists them. Running one comes with
//! `POST /v1/jobs {"workflow": name}`.

use super::auth::Principal;
use super::body::JsonBody;
use super::error::ApiError;
use super::ApiState;
use crate::registry::workflow::WorkflowSpec;
use crate::store::clock::rfc3339;
use crate::store::{Scope, WorkflowRecord};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// A version as the API shows it: its definition, with its name, version
/// and when it was made.
fn view(w: &WorkflowRecord) -> Result<Value, ApiError> {
    let mut v: Value = serde_json::from_str(&w.spec)
        .map_err(|e| ApiError::Internal(format!("unreadable workflow {}: {e}", w.name)))?;
    if let Some(o) = v.as_object_mut() {
        o.insert("name".into(), json!(w.name));
        o.insert("version".into(), json!(w.version));
        o.insert("created_at".into(), json!(rfc3339(w.created_at)));
    }
    Ok(v)
}

pub async fn define(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    body: JsonBody<WorkflowSpec>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require(Scope::TasksWrite)?;
    let w = state
        .registry
        .define_workflow(&who.tenant, &name, body.value)
        .await?;
    Ok((StatusCode::CREATED, Json(view(&w)?)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShowQuery {
    version: Option<u32>,
}

pub async fn show(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    Query(q): Query<ShowQuery>,
) -> Result<Json<Value>, ApiError> {
    who.require_any(&[Scope::JobsRead, Scope::TasksWrite])?;
    let w = state
        .store
        .workflow_get(&who.tenant, &name, q.version)
        .await?
        .ok_or_else(|| ApiError::WorkflowNotFound(crate::text::bounded(&name, 64)))?;
    Ok(Json(view(&w)?))
}

pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require_any(&[Scope::JobsRead, Scope::TasksWrite])?;
    let all = state.store.workflow_list(&who.tenant).await?;
    let views: Result<Vec<Value>, ApiError> = all.iter().map(view).collect();
    Ok(Json(json!({ "workflows": views? })))
}
