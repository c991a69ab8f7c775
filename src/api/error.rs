//! The API's one error shape, `{"error": {"code", "message", "details"}}`,
//! and the whole mapping from error to HTTP status (DESIGN §3.4).
//! Internal errors are logged here and answered without their text.

use crate::registry::schema::Violation;
use crate::registry::RegistryError;
use crate::store::StoreError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("the job's input does not match the task's input_schema")]
    InvalidInput(Vec<Violation>),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("job {0} was not found")]
    JobNotFound(String),
    #[error("task {0:?} was not found")]
    TaskNotFound(String),
    #[error("component {0} was not found; upload it with POST /v1/components")]
    ComponentNotFound(String),
    #[error("no such route: {0}")]
    NoRoute(String),
    #[error("{0}")]
    Conflict(String),
    #[error("the request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("{0}")]
    InvalidComponent(String),
    #[error("invalid task definition: {}", .0.join("; "))]
    InvalidTask(Vec<String>),
    #[error("{0}")]
    Unavailable(String),
    /// A synchronous run failed; the job is in `details`.
    #[error("{message}")]
    Execution { message: String, job: Value },
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    /// The whole status mapping.
    pub fn status_code(&self) -> StatusCode {
        match self {
            ApiError::InvalidInput(_) | ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::JobNotFound(_)
            | ApiError::TaskNotFound(_)
            | ApiError::ComponentNotFound(_)
            | ApiError::NoRoute(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::InvalidComponent(_) | ApiError::InvalidTask(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Execution { .. } | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::InvalidInput(_) => "JOB_INVALID_INPUT",
            ApiError::BadRequest(_) => "BAD_REQUEST",
            ApiError::Unauthenticated(_) => "UNAUTHENTICATED",
            ApiError::Forbidden(_) => "JOB_ACCESS_DENIED",
            ApiError::JobNotFound(_) => "JOB_NOT_FOUND",
            ApiError::TaskNotFound(_) => "TASK_NOT_FOUND",
            ApiError::ComponentNotFound(_) => "COMPONENT_NOT_FOUND",
            ApiError::NoRoute(_) => "NOT_FOUND",
            ApiError::Conflict(_) => "CONFLICT",
            ApiError::PayloadTooLarge { .. } => "PAYLOAD_TOO_LARGE",
            ApiError::InvalidComponent(_) => "INVALID_COMPONENT",
            ApiError::InvalidTask(_) => "INVALID_TASK",
            ApiError::Unavailable(_) => "UNAVAILABLE",
            ApiError::Execution { .. } => "JOB_EXECUTION_ERROR",
            ApiError::Internal(_) => "INTERNAL_ERROR",
        }
    }

    fn details(&self) -> Value {
        match self {
            ApiError::InvalidInput(v) => json!(v),
            ApiError::InvalidTask(p) => json!(p),
            ApiError::PayloadTooLarge { limit } => json!({ "limit_bytes": limit }),
            ApiError::Execution { job, .. } => json!({ "job": job }),
            _ => Value::Null,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self {
            tracing::error!(%detail, "internal error answered as 500");
        }
        let message = match &self {
            ApiError::InvalidInput(v) => format!(
                "the job's input does not match the task's input_schema ({} problem{}; see details)",
                v.len(),
                if v.len() == 1 { "" } else { "s" }
            ),
            other => other.to_string(),
        };
        let body =
            json!({"error": {"code": self.code(), "message": message, "details": self.details()}});
        (self.status_code(), axum::Json(body)).into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict(m) => ApiError::Conflict(m),
            StoreError::NotFound => ApiError::Internal("a store lookup found nothing".into()),
            StoreError::Unavailable(m) => ApiError::Unavailable(m),
            StoreError::Internal(m) => ApiError::Internal(m),
        }
    }
}

impl From<RegistryError> for ApiError {
    fn from(e: RegistryError) -> Self {
        match e {
            RegistryError::ComponentNotFound(d) => ApiError::ComponentNotFound(d),
            RegistryError::TaskNotFound(t) => ApiError::TaskNotFound(t),
            RegistryError::InvalidComponent(i) => ApiError::InvalidComponent(i.to_string()),
            RegistryError::InvalidTask(p) => ApiError::InvalidTask(p),
            RegistryError::Store(s) => s.into(),
        }
    }
}
