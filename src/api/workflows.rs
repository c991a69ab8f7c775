//! Workflow definitions: `PUT /v1/workflows/{name}` adds a version (as a
//! task's PUT does; it needs `tasks:write`), `GET` shows the newest (or
//! `?version=N`), `GET /v1/workflows` lists them. Running one comes with
//! `POST /v1/jobs {"workflow": name}`.

use super::auth::{Across, Principal};
use super::body::{JsonBody, QueryParams};
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::registry::workflow::WorkflowSpec;
use crate::store::clock::rfc3339;
use crate::store::{Scope, WorkflowRecord};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

/// A version as the API shows it: its definition, with its name, version
/// and when it was made.
/// A workflow version: its definition (as `PUT` took it) with its name,
/// version and time.
#[derive(Serialize, Deserialize, ToSchema)]
#[schema(as = Workflow)]
pub struct WorkflowView {
    pub tenant: String,
    pub name: String,
    pub version: i32,
    pub created_at: String,
    /// Every version of the workflow, oldest first (`GET
    /// /v1/workflows/{name}` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<WorkflowVersion>,
    #[serde(flatten)]
    #[schema(inline, value_type = WorkflowSpec)]
    pub definition: Map<String, Value>,
}

/// One version of a workflow, as its `versions` lists it.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct WorkflowVersion {
    pub version: u32,
    pub created_at: String,
}

/// The tenant's workflows.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct WorkflowList {
    pub workflows: Vec<WorkflowView>,
}

fn view(w: &WorkflowRecord) -> Result<WorkflowView, ApiError> {
    let mut definition: Map<String, Value> = serde_json::from_str(&w.spec)
        .map_err(|e| ApiError::Internal(format!("unreadable workflow {}: {e}", w.name)))?;
    // The record's own say on these wins over anything stored with the spec.
    for key in ["tenant", "name", "version", "created_at", "versions"] {
        definition.remove(key);
    }
    Ok(WorkflowView {
        tenant: w.tenant.clone(),
        name: w.name.clone(),
        version: w.version,
        created_at: rfc3339(w.created_at),
        versions: Vec::new(),
        definition,
    })
}

/// Defines a workflow's next version. Needs `tasks:write`.
#[utoipa::path(put, path = "/v1/workflows/{name}", tag = "workflows",
    params(("name" = String, Path, description = "The workflow's name")),
    request_body = WorkflowSpec,
    responses((status = 201, description = "The new version", body = WorkflowView, links(
            ("show" = (operation_id = "workflows_show", parameters(("name" = "$response.body#/name"))))
        )), Errors))]
pub async fn define(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    body: JsonBody<WorkflowSpec>,
) -> Result<(StatusCode, Json<WorkflowView>), ApiError> {
    who.require(Scope::TasksWrite)?;
    let w = state
        .registry
        .define_workflow(&who.tenant, &name, body.value)
        .await?;
    Ok((StatusCode::CREATED, Json(view(&w)?)))
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ShowQuery {
    /// A version; the newest when left out.
    version: Option<u32>,
}

/// A workflow version, with the list of every version. Needs `jobs:read`
/// or `tasks:write`.
#[utoipa::path(get, path = "/v1/workflows/{name}", tag = "workflows",
    params(("name" = String, Path, description = "The workflow's name"), ShowQuery),
    responses((status = 200, body = WorkflowView), Errors))]
pub async fn show(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    QueryParams(q): QueryParams<ShowQuery>,
) -> Result<Json<WorkflowView>, ApiError> {
    who.require_any(&[Scope::JobsRead, Scope::TasksWrite])?;
    let w = state
        .store
        .workflow_get(&who.tenant, &name, q.version)
        .await?
        .ok_or_else(|| ApiError::WorkflowNotFound(crate::text::bounded(&name, 64)))?;
    let mut out = view(&w)?;
    out.versions = state
        .store
        .workflow_versions(&who.tenant, &name)
        .await?
        .into_iter()
        .map(|(version, at)| WorkflowVersion {
            version,
            created_at: rfc3339(at),
        })
        .collect();
    Ok(Json(out))
}

/// The tenant's workflows, each at its newest version. Needs `jobs:read`
/// or `tasks:write`.
#[utoipa::path(get, path = "/v1/workflows", tag = "workflows", params(Across),
    responses((status = 200, body = WorkflowList), Errors))]
pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(q): QueryParams<Across>,
) -> Result<Json<WorkflowList>, ApiError> {
    who.require_any(&[Scope::JobsRead, Scope::TasksWrite])?;
    let all = state
        .store
        .workflow_list(who.listing(q.all_tenants)?)
        .await?;
    let workflows = all.iter().map(view).collect::<Result<_, _>>()?;
    Ok(Json(WorkflowList { workflows }))
}
