//! The API's one error shape, `{"error": {"code", "message", "details"}}`,
//! and the whole mapping from error to HTTP status (DESIGN §3.4).
//! Internal errors are logged here and answered without their text.

use crate::enqueue::EnqueueError;
use crate::quota::Exceeded;
use crate::registry::schema::{CheckError, Violation};
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
    #[error("tenant {0:?} was not found; create it with POST /v1/tenants or PUT /v1/tenants/{0}")]
    TenantNotFound(String),
    #[error("task {0:?} was not found")]
    TaskNotFound(String),
    #[error("component {0} was not found; upload it with POST /v1/components")]
    ComponentNotFound(String),
    #[error("webhook {0} was not found")]
    WebhookNotFound(String),
    #[error(
        "webhook {webhook} has no delivery {id}; GET /v1/webhooks/{webhook}/deliveries lists them"
    )]
    DeliveryNotFound { webhook: String, id: i64 },
    #[error("schedule {0:?} was not found")]
    ScheduleNotFound(String),
    #[error("secret {0:?} was not found; GET /v1/secrets lists the tenant's secrets")]
    SecretNotFound(String),
    #[error("token {0:?} was not found (or was revoked already); GET /v1/tokens lists the tokens")]
    TokenNotFound(String),
    #[error("no such route: {0}")]
    NoRoute(String),
    #[error("{0}")]
    Conflict(String),
    #[error("the request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// The body did not arrive in time; the connection is closed.
    #[error("the request body did not arrive within {timeout_ms} ms (the server's --http-body-timeout-ms); send it at once, or ask for a longer timeout")]
    RequestTimeout { timeout_ms: u64 },
    #[error("{0}")]
    InvalidComponent(String),
    #[error("invalid task definition: {}", .0.join("; "))]
    InvalidTask(Vec<String>),
    #[error("invalid schedule: {0}")]
    InvalidSchedule(String),
    #[error("invalid workflow definition: {}", .0.join("; "))]
    InvalidWorkflow(Vec<String>),
    #[error("workflow {0:?} was not found")]
    WorkflowNotFound(String),
    #[error("{0}")]
    Unavailable(String),
    /// Over the tenant's enqueue rate; try again after `retry_after_ms`.
    #[error(
        "the tenant's enqueue rate ({limit} per second, {burst} at once) is used up; try again in {} s",
        retry_after_secs(*.retry_after_ms)
    )]
    RateLimited {
        limit: u64,
        burst: u64,
        retry_after_ms: u64,
    },
    /// Over the tenant's rate of reads that scan its records (the series,
    /// the usage export); try again after `retry_after_ms`.
    #[error(
        "the tenant's rate of series and usage reads ({limit} per second, {burst} at once) is used up; try again in {} s (the server's --reads-per-second sets it)",
        retry_after_secs(*.retry_after_ms)
    )]
    ReadRateLimited {
        limit: u64,
        burst: u64,
        retry_after_ms: u64,
    },
    /// Over another of the tenant's quotas.
    #[error("{0}; it refuses new work until some is done (the admin sets it with PUT /v1/tenants/{{name}})")]
    QuotaExceeded(Exceeded),
    /// A synchronous run failed; the job is in `details`.
    #[error("{message}")]
    Execution { message: String, job: Value },
    #[error("internal error")]
    Internal(String),
}

/// Every code an error answer may carry; part of the HTTP contract (DESIGN
/// §3.4), and listed in the OpenAPI spec from this enum.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    JobInvalidInput,
    BadRequest,
    Unauthenticated,
    JobAccessDenied,
    JobNotFound,
    TenantNotFound,
    TaskNotFound,
    ComponentNotFound,
    WebhookNotFound,
    ScheduleNotFound,
    SecretNotFound,
    TokenNotFound,
    NotFound,
    Conflict,
    PayloadTooLarge,
    RequestTimeout,
    InvalidComponent,
    InvalidTask,
    InvalidSchedule,
    InvalidWorkflow,
    WorkflowNotFound,
    Unavailable,
    RateLimited,
    QuotaExceeded,
    JobExecutionError,
    InternalError,
}

/// The error answer's shape, as the OpenAPI spec shows it.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorAnswer {
    pub error: ErrorBody,
}

/// What an error answer's `error` holds.
#[derive(serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub code: ErrorCode,
    /// What was wrong and, where it helps, how to fix it.
    pub message: String,
    /// More, by code: the input's violations (`JOB_INVALID_INPUT`), the
    /// definition's problems (`INVALID_TASK`, `INVALID_WORKFLOW`), the
    /// limit (`PAYLOAD_TOO_LARGE`, `REQUEST_TIMEOUT`, `RATE_LIMITED`,
    /// `QUOTA_EXCEEDED`), the
    /// job (`JOB_EXECUTION_ERROR`); else null.
    pub details: serde_json::Value,
}

impl ApiError {
    /// The whole status mapping.
    pub fn status_code(&self) -> StatusCode {
        match self {
            ApiError::InvalidInput(_) | ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::JobNotFound(_)
            | ApiError::TenantNotFound(_)
            | ApiError::TaskNotFound(_)
            | ApiError::ComponentNotFound(_)
            | ApiError::WebhookNotFound(_)
            | ApiError::DeliveryNotFound { .. }
            | ApiError::ScheduleNotFound(_)
            | ApiError::SecretNotFound(_)
            | ApiError::TokenNotFound(_)
            | ApiError::WorkflowNotFound(_)
            | ApiError::NoRoute(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RequestTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            ApiError::InvalidComponent(_)
            | ApiError::InvalidTask(_)
            | ApiError::InvalidSchedule(_)
            | ApiError::InvalidWorkflow(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::RateLimited { .. }
            | ApiError::ReadRateLimited { .. }
            | ApiError::QuotaExceeded(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Execution { .. } | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::InvalidInput(_) => ErrorCode::JobInvalidInput,
            ApiError::BadRequest(_) => ErrorCode::BadRequest,
            ApiError::Unauthenticated(_) => ErrorCode::Unauthenticated,
            ApiError::Forbidden(_) => ErrorCode::JobAccessDenied,
            ApiError::JobNotFound(_) => ErrorCode::JobNotFound,
            ApiError::TenantNotFound(_) => ErrorCode::TenantNotFound,
            ApiError::TaskNotFound(_) => ErrorCode::TaskNotFound,
            ApiError::ComponentNotFound(_) => ErrorCode::ComponentNotFound,
            ApiError::WebhookNotFound(_) | ApiError::DeliveryNotFound { .. } => {
                ErrorCode::WebhookNotFound
            }
            ApiError::ScheduleNotFound(_) => ErrorCode::ScheduleNotFound,
            ApiError::SecretNotFound(_) => ErrorCode::SecretNotFound,
            ApiError::TokenNotFound(_) => ErrorCode::TokenNotFound,
            ApiError::NoRoute(_) => ErrorCode::NotFound,
            ApiError::Conflict(_) => ErrorCode::Conflict,
            ApiError::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            ApiError::RequestTimeout { .. } => ErrorCode::RequestTimeout,
            ApiError::InvalidComponent(_) => ErrorCode::InvalidComponent,
            ApiError::InvalidTask(_) => ErrorCode::InvalidTask,
            ApiError::InvalidSchedule(_) => ErrorCode::InvalidSchedule,
            ApiError::InvalidWorkflow(_) => ErrorCode::InvalidWorkflow,
            ApiError::WorkflowNotFound(_) => ErrorCode::WorkflowNotFound,
            ApiError::Unavailable(_) => ErrorCode::Unavailable,
            ApiError::RateLimited { .. } | ApiError::ReadRateLimited { .. } => {
                ErrorCode::RateLimited
            }
            ApiError::QuotaExceeded(_) => ErrorCode::QuotaExceeded,
            ApiError::Execution { .. } => ErrorCode::JobExecutionError,
            ApiError::Internal(_) => ErrorCode::InternalError,
        }
    }

    /// What the answer's `error` holds: `{code, message, details}`.
    pub fn body(&self) -> ErrorBody {
        let message = match self {
            ApiError::InvalidInput(v) => format!(
                "the job's input does not match the task's input_schema ({} problem{}; see details)",
                v.len(),
                if v.len() == 1 { "" } else { "s" }
            ),
            other => other.to_string(),
        };
        ErrorBody {
            code: self.code(),
            message,
            details: self.details(),
        }
    }

    fn details(&self) -> Value {
        match self {
            ApiError::InvalidInput(v) => json!(v),
            ApiError::InvalidTask(p) | ApiError::InvalidWorkflow(p) => json!(p),
            ApiError::PayloadTooLarge { limit } => json!({ "limit_bytes": limit }),
            ApiError::RequestTimeout { timeout_ms } => json!({ "timeout_ms": timeout_ms }),
            ApiError::Execution { job, .. } => json!({ "job": job }),
            ApiError::RateLimited {
                limit,
                burst,
                retry_after_ms,
            } => json!({
                "quota": "enqueue_per_second",
                "limit": limit,
                "burst": burst,
                "retry_after_ms": retry_after_ms,
            }),
            ApiError::ReadRateLimited {
                limit,
                burst,
                retry_after_ms,
            } => json!({
                "quota": "reads_per_second",
                "limit": limit,
                "burst": burst,
                "retry_after_ms": retry_after_ms,
            }),
            ApiError::QuotaExceeded(e) => json!({ "quota": e.quota, "limit": e.limit }),
            _ => Value::Null,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self {
            tracing::error!(%detail, "internal error answered as 500");
        }
        let body = ErrorAnswer { error: self.body() };
        let mut resp = (self.status_code(), axum::Json(body)).into_response();
        if let ApiError::RateLimited { retry_after_ms, .. }
        | ApiError::ReadRateLimited { retry_after_ms, .. } = &self
        {
            resp.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(retry_after_secs(*retry_after_ms)),
            );
        }
        if let ApiError::RequestTimeout { .. } = &self {
            // What is left of the body would be read as the next request.
            resp.headers_mut().insert(
                axum::http::header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
        }
        resp
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict(m) => ApiError::Conflict(m),
            StoreError::NotFound => ApiError::Internal("a store lookup found nothing".into()),
            StoreError::Fenced => ApiError::Conflict(
                "the job moved on while this request ran; read it again and retry".into(),
            ),
            StoreError::Unavailable(m) => {
                // The reason goes to the log; the answer names no internals.
                tracing::warn!(error = %m, "the store is unavailable");
                ApiError::Unavailable(
                    "the database does not answer for now (or the server is stopping); try again shortly"
                        .into(),
                )
            }
            StoreError::Internal(m) => ApiError::Internal(m),
            StoreError::QuotaExceeded(e) => ApiError::QuotaExceeded(e),
        }
    }
}

impl From<EnqueueError> for ApiError {
    fn from(e: EnqueueError) -> Self {
        match e {
            EnqueueError::Registry(r) => r.into(),
            EnqueueError::InvalidInput(v) => ApiError::InvalidInput(v),
            EnqueueError::BadRequest(m) => ApiError::BadRequest(m),
            EnqueueError::RateLimited {
                limit,
                burst,
                retry_after_ms,
            } => ApiError::RateLimited {
                limit,
                burst,
                retry_after_ms,
            },
            EnqueueError::Store(s) => s.into(),
        }
    }
}

impl From<crate::secrets::SecretsError> for ApiError {
    fn from(e: crate::secrets::SecretsError) -> Self {
        use crate::secrets::SecretsError as S;
        match e {
            S::BadName(m) | S::BadValue(m) => ApiError::BadRequest(m),
            S::Store(s) => s.into(),
            // The key and the rows are the operator's: logged, not told.
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<CheckError> for ApiError {
    fn from(e: CheckError) -> Self {
        ApiError::InvalidInput(e.violations())
    }
}

/// Whole seconds to wait, at least one: what `Retry-After` says.
fn retry_after_secs(ms: u64) -> u64 {
    ms.div_ceil(1000).max(1)
}

impl From<RegistryError> for ApiError {
    fn from(e: RegistryError) -> Self {
        if let Some(m) = e.busy() {
            return ApiError::Unavailable(m.to_owned());
        }
        match e {
            RegistryError::ComponentNotFound(d) => ApiError::ComponentNotFound(d),
            RegistryError::TaskNotFound(t) => ApiError::TaskNotFound(t),
            RegistryError::InvalidComponent(i) => ApiError::InvalidComponent(i.to_string()),
            RegistryError::InvalidTask(p) => ApiError::InvalidTask(p),
            RegistryError::InvalidWorkflow(p) => ApiError::InvalidWorkflow(p),
            RegistryError::WorkflowNotFound(w) => ApiError::WorkflowNotFound(w),
            RegistryError::Store(s) => s.into(),
        }
    }
}
