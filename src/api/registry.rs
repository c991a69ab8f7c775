//! Components (`POST /v1/components`) and task versions (`PUT/GET /v1/tasks`).

use super::auth::{Across, Principal};
use super::body::{parse_json, read_limited, QueryParams};
use super::error::ApiError;
use super::openapi::Errors;
use super::views::{TaskSummary, TaskView};
use super::{views, ApiState};
use crate::abi::Abi;
use crate::registry::spec::TaskSpec;
use crate::store::{RolloutChange, Scope};
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;

/// A stored component.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Component {
    /// `sha256:` and the hex of its bytes' sha256: what a task names.
    pub digest: String,
    /// Bytes.
    pub size: u64,
    #[schema(value_type = Abi)]
    pub abi: String,
}

/// A task version, as its definition made it.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TaskDefined {
    pub name: String,
    pub version: u32,
    pub digest: String,
    /// Set when the version was staged: the share of new jobs it gets
    /// until it is promoted or rolled back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_percent: Option<u8>,
}

/// The tenant's tasks.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TaskList<'a> {
    #[schema(value_type = Vec<TaskSummary>)]
    pub tasks: Vec<TaskSummary<'a>>,
}

/// Uploads a component: the body is its bytes (a WebAssembly component
/// of the `taskbox:task` world, or a WASI preview-1 command). Needs
/// `tasks:write`.
#[utoipa::path(post, path = "/v1/components", tag = "tasks",
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The component's bytes (`.wasm`)"),
    responses(
        (status = 201, description = "Stored", body = Component),
        (status = 200, description = "Stored already", body = Component),
        Errors
    ))]
pub async fn upload_component(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    req: Request,
) -> Result<(StatusCode, Json<Component>), ApiError> {
    who.require(Scope::TasksWrite)?;
    let bytes = read_limited(
        req,
        state.limits.max_component_bytes,
        state.limits.body_timeout,
    )
    .await?;
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
        Json(Component {
            digest: c.digest,
            size: c.size,
            abi: c.abi,
        }),
    ))
}

/// Defines a task's next version. Needs `tasks:write`, and `secrets:write`
/// too for a version that declares secrets or changes which it declares.
#[utoipa::path(put, path = "/v1/tasks/{name}", tag = "tasks",
    params(("name" = String, Path, description = "The task's name")),
    request_body = TaskSpec,
    responses((status = 201, description = "The new version", body = TaskDefined, links(
            ("show" = (operation_id = "tasks_show_task", parameters(("name" = "$response.body#/name"))))
        )), Errors))]
pub async fn define_task(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    req: Request,
) -> Result<(StatusCode, Json<TaskDefined>), ApiError> {
    who.require(Scope::TasksWrite)?;
    let raw = read_limited(req, state.limits.max_json_bytes, state.limits.body_timeout).await?;
    let spec: TaskSpec = parse_json(&raw)?;
    require_secrets_scope(&state, &who, &name, &spec).await?;
    let tv = state.registry.define(&who.tenant, &name, spec).await?;
    Ok((
        StatusCode::CREATED,
        Json(TaskDefined {
            name: tv.record.name.clone(),
            version: tv.record.version,
            digest: tv.record.digest.clone(),
            rollout_percent: tv.record.rollout_percent,
        }),
    ))
}

/// A task that reads a secret can send it wherever its grant (and its
/// output) reaches, so a secret is only as safe as the set of tokens that
/// may name it in a task: a version that declares secrets, or declares
/// other ones than the newest version did (dropping them included), needs
/// `secrets:write` beside `tasks:write`. A version that keeps them also
/// may change the component and the hosts, so it needs the scope too.
async fn require_secrets_scope(
    state: &ApiState,
    who: &Principal,
    name: &str,
    spec: &TaskSpec,
) -> Result<(), ApiError> {
    if who.has(Scope::SecretsWrite) {
        return Ok(());
    }
    // The stored definition, not a compiled version: whether its schemas
    // still compile is not this question.
    let declared_before = state
        .store
        .task_get(&who.tenant, name, None)
        .await?
        .and_then(|t| serde_json::from_str::<TaskSpec>(&t.spec).ok())
        .map(|s| s.secrets)
        .unwrap_or_default();
    if spec.secrets.is_empty() && declared_before.is_empty() {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!(
        "a task version that declares secrets (or changes which ones; its newest version declares \
         {declared_before:?}, this one {:?}) needs the scope \"secrets:write\" beside \
         \"tasks:write\": a task that reads a secret can send it wherever it reaches. Use a token \
         with both scopes",
        spec.secrets
    )))
}

/// The tenant's tasks, each at its newest version. Needs `jobs:read` or
/// `tasks:write`.
#[utoipa::path(get, path = "/v1/tasks", tag = "tasks", params(Across),
    responses((status = 200, body = TaskList), Errors))]
pub async fn list_tasks(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(q): QueryParams<Across>,
) -> Result<Response, ApiError> {
    who.require_any(&[Scope::JobsRead, Scope::TasksWrite])?;
    let tasks = state.store.task_list(who.listing(q.all_tenants)?).await?;
    Ok(Json(TaskList {
        tasks: tasks.iter().map(views::task_summary).collect(),
    })
    .into_response())
}

/// A task: its live definition, its versions, and the rollout of a staged
/// version with what each version did since it began. Needs `jobs:read`
/// or `tasks:write`.
#[utoipa::path(get, path = "/v1/tasks/{name}", tag = "tasks",
    params(("name" = String, Path, description = "The task's name")),
    responses((status = 200, body = TaskView), Errors))]
pub async fn show_task(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    who.require_any(&[Scope::JobsRead, Scope::TasksWrite])?;
    answer_task(&state, &who.tenant, &name, StatusCode::OK).await
}

/// The task as `show_task` answers it.
async fn answer_task(
    state: &ApiState,
    tenant: &str,
    name: &str,
    status: StatusCode,
) -> Result<Response, ApiError> {
    let versions = state.store.task_versions(tenant, name).await?;
    let live = views::live_version(&versions);
    let rollout = match (versions.iter().find(|v| v.rollout_percent.is_some()), live) {
        (Some(staged), Some(live)) => {
            let started = staged.rollout_since();
            Some(views::RolloutView {
                version: staged.version,
                live_version: live.version,
                percent: staged.rollout_percent.unwrap_or(0),
                started_at: crate::store::clock::rfc3339(started),
                figures: state
                    .store
                    .version_figures(tenant, name, [staged.version, live.version], started)
                    .await?,
            })
        }
        _ => None,
    };
    let view =
        views::task(&versions, rollout).ok_or_else(|| ApiError::TaskNotFound(name.to_owned()))?;
    Ok((status, Json(view)).into_response())
}

/// The body of `POST /v1/tasks/{name}/rollout`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RolloutShare {
    /// The share of new jobs that pins the staged version, 0 to 100.
    #[schema(minimum = 0, maximum = 100)]
    pub percent: u8,
}

/// Changes the share of new jobs that pins the staged version (a ramp:
/// a job's choice is a hash of its id, so each job that pinned it at a
/// smaller share pins it at a larger one too). Needs `tasks:write`.
#[utoipa::path(post, path = "/v1/tasks/{name}/rollout", tag = "tasks",
    params(("name" = String, Path, description = "The task's name")),
    request_body = RolloutShare,
    responses((status = 200, description = "The task, its rollout at the new share", body = TaskView), Errors))]
pub async fn set_rollout(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    req: Request,
) -> Result<Response, ApiError> {
    who.require(Scope::TasksWrite)?;
    let raw = read_limited(req, state.limits.max_json_bytes, state.limits.body_timeout).await?;
    let share: RolloutShare = parse_json(&raw)?;
    if share.percent > 100 {
        return Err(ApiError::InvalidTask(vec![format!(
            "percent must be between 0 and 100, not {}",
            share.percent
        )]));
    }
    change(&state, &who, &name, RolloutChange::Percent(share.percent)).await
}

/// Makes the staged version the task's live one: every new job pins it.
/// Needs `tasks:write`.
#[utoipa::path(post, path = "/v1/tasks/{name}/promote", tag = "tasks",
    params(("name" = String, Path, description = "The task's name")),
    responses((status = 200, description = "The task, the promoted version live", body = TaskView), Errors))]
pub async fn promote(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    who.require(Scope::TasksWrite)?;
    change(&state, &who, &name, RolloutChange::Promote).await
}

/// Drops the staged version: every new job pins the live one again. Jobs
/// already pinned to the staged version still run it. Needs
/// `tasks:write`.
#[utoipa::path(post, path = "/v1/tasks/{name}/rollback", tag = "tasks",
    params(("name" = String, Path, description = "The task's name")),
    responses((status = 200, description = "The task, its staged version rolled back", body = TaskView), Errors))]
pub async fn rollback(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    who.require(Scope::TasksWrite)?;
    change(&state, &who, &name, RolloutChange::Rollback).await
}

async fn change(
    state: &ApiState,
    who: &Principal,
    name: &str,
    change: RolloutChange,
) -> Result<Response, ApiError> {
    if state
        .registry
        .change_rollout(&who.tenant, name, change)
        .await?
        .is_none()
    {
        if state
            .store
            .task_get(&who.tenant, name, None)
            .await?
            .is_none()
        {
            return Err(ApiError::TaskNotFound(name.to_owned()));
        }
        return Err(ApiError::Conflict(format!(
            "task {name:?} has no version being rolled out; stage one with PUT /v1/tasks/{name} \
             and \"rollout\": {{\"percent\": P}}"
        )));
    }
    answer_task(state, &who.tenant, name, StatusCode::OK).await
}
