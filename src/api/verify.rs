//! `POST /v1/tasks/{name}/verify`: a verification of a candidate component
//! against the task's recorded jobs, enqueued as a job of the tenant's
//! (`verify`); its output is the report.

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::error::ApiError;
use super::openapi::Errors;
use super::views::{JobOut, JobView};
use super::ApiState;
use crate::store::{Inserted, Scope};
use crate::verify::{self, VerifyError};
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::ToSchema;

/// The body of `POST /v1/tasks/{name}/verify`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {
    /// The candidate's digest, as `POST /v1/components` answered it.
    pub component: String,
    /// How many of the task's last ended jobs to run again (1 to 1000,
    /// default 100).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1000)]
    pub sample: Option<u32>,
}

impl From<VerifyError> for ApiError {
    fn from(e: VerifyError) -> Self {
        match e {
            VerifyError::Sample(_) => ApiError::BadRequest(e.to_string()),
            VerifyError::NothingRecorded(_) => ApiError::Conflict(e.to_string()),
            VerifyError::Registry(e) => e.into(),
        }
    }
}

/// Verifies a candidate component against the task's last ended jobs
/// (completed and failed): a job of the tenant's, on the runners' slots,
/// charged to its fuel, that runs each recorded input through the
/// candidate under the task's live limits, with no outbound HTTP, no
/// secrets and no sub-tasks, and ends with the report as its output
/// (`GET /v1/jobs/{id}` shows its progress). Cancel it as any job. Needs
/// `tasks:write`.
#[utoipa::path(post, path = "/v1/tasks/{name}/verify", tag = "tasks",
    params(("name" = String, Path, description = "The task's name")),
    request_body = VerifyRequest,
    responses(
        (status = 202, description = "The verification job; its output, once it completed, is the report", body = JobView, links(
            ("show" = (operation_id = "jobs_show", parameters(("id" = "$response.body#/id")))),
            ("cancel" = (operation_id = "jobs_cancel", parameters(("id" = "$response.body#/id"))))
        )),
        Errors
    ))]
pub async fn verify(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    req: Request,
) -> Result<(StatusCode, Json<JobOut>), ApiError> {
    who.require(Scope::TasksWrite)?;
    let raw = read_limited(req, state.limits.max_json_bytes, state.limits.body_timeout).await?;
    let body: VerifyRequest = parse_json(&raw)?;
    let job = verify::prepare(
        &state.registry,
        state.enqueuer.new_job_id(),
        &who.tenant,
        &name,
        &body.component,
        body.sample,
    )
    .await?;
    match state.enqueuer.enqueue_made(&who.tenant, job).await? {
        Inserted::Created(j) | Inserted::Existing(j) => Ok((StatusCode::ACCEPTED, Json(JobOut(j)))),
    }
}
