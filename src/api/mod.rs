//! The HTTP API of DESIGN §3.4: `router(state)` builds it; one file per
//! resource; `error.rs` holds the one error shape and status mapping.

pub mod auth;
pub mod body;
pub mod error;
mod jobs;
mod registry;
mod tenants;
mod usage;
pub mod views;

use crate::quota::{EnqueueMeter, QuotaCache, Quotas};
use crate::registry::Registry;
use crate::runner::Runner;
use crate::store::JobStore;
use axum::routing::{get, post, put};
use axum::Router;
use error::ApiError;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Limits on what a request may send.
#[derive(Debug, Clone)]
pub struct ApiLimits {
    /// Largest JSON body (default 1 MiB).
    pub max_json_bytes: usize,
    /// Largest component upload (default 64 MiB).
    pub max_component_bytes: usize,
    /// Longest a cancel of a running job waits for the attempt to stop.
    pub cancel_wait: Duration,
    /// Most bytes of inputs and outputs one page of a job list holds.
    pub max_list_bytes: usize,
}

impl Default for ApiLimits {
    fn default() -> Self {
        ApiLimits {
            max_json_bytes: 1 << 20,
            max_component_bytes: 64 << 20,
            cancel_wait: Duration::from_secs(2),
            max_list_bytes: 8 << 20,
        }
    }
}

/// What every handler can reach.
pub struct ApiState {
    pub store: Arc<dyn JobStore>,
    pub registry: Arc<Registry>,
    pub runner: Arc<Runner>,
    /// Rung after each enqueue so idle runners claim at once.
    pub wake: Arc<Notify>,
    pub limits: ApiLimits,
    pub tokens: auth::TokenCache,
    /// Each tenant's quotas, as enqueues are metered by them.
    pub quotas: QuotaCache,
    /// Each tenant's bucket of enqueues.
    pub meter: EnqueueMeter,
    ids: std::sync::Mutex<ulid::Generator>,
}

impl ApiState {
    pub fn new(
        store: Arc<dyn JobStore>,
        registry: Arc<Registry>,
        runner: Arc<Runner>,
        wake: Arc<Notify>,
        limits: ApiLimits,
        quotas: Quotas,
    ) -> Self {
        ApiState {
            store,
            registry,
            runner,
            wake,
            limits,
            tokens: auth::TokenCache::default(),
            quotas: QuotaCache::new(quotas),
            meter: EnqueueMeter::default(),
            ids: std::sync::Mutex::new(ulid::Generator::new()),
        }
    }

    /// A new job id: a ULID, increasing within this process so that
    /// "newest first" is the order of enqueue.
    pub fn new_job_id(&self) -> String {
        let mut g = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        g.generate()
            .unwrap_or_else(|_| ulid::Ulid::generate())
            .to_string()
    }
}

/// The whole API.
pub fn router(state: Arc<ApiState>) -> Router {
    Router::new()
        .route("/healthz", get(health))
        .route(
            "/v1/tenants",
            post(tenants::create_tenant).get(tenants::list_tenants),
        )
        .route(
            "/v1/tenants/{name}",
            put(tenants::put_tenant).get(tenants::show_tenant),
        )
        .route("/v1/tenants/{name}/usage", get(usage::tenant_usage))
        .route("/v1/usage", get(usage::own_usage))
        .route("/v1/tokens", post(tenants::create_token))
        .route("/v1/components", post(registry::upload_component))
        .route("/v1/tasks", get(registry::list_tasks))
        .route(
            "/v1/tasks/{name}",
            put(registry::define_task).get(registry::show_task),
        )
        .route("/v1/jobs", post(jobs::enqueue).get(jobs::list))
        .route("/v1/jobs/{id}", get(jobs::show))
        .route("/v1/jobs/{id}/cancel", post(jobs::cancel))
        .route("/v1/jobs/{id}/run", post(jobs::run_now))
        .route("/v1/jobs/{id}/resume", post(jobs::resume))
        .route("/v1/jobs/{id}/attempts", get(jobs::attempts))
        .fallback(no_route)
        .method_not_allowed_fallback(no_method)
        .with_state(state)
}

async fn health(
    axum::extract::State(state): axum::extract::State<Arc<ApiState>>,
) -> Result<axum::Json<serde_json::Value>, ApiError> {
    if let Err(e) = state.store.tenant_get(auth::DEFAULT_TENANT).await {
        // The reason goes to the log; the answer names no internals.
        tracing::warn!(error = %e, "health check: the database does not answer");
        return Err(ApiError::Unavailable("the database does not answer".into()));
    }
    Ok(axum::Json(serde_json::json!({"status": "ok"})))
}

async fn no_route(uri: axum::http::Uri) -> ApiError {
    ApiError::NoRoute(uri.path().chars().take(200).collect())
}

async fn no_method(method: axum::http::Method, uri: axum::http::Uri) -> axum::response::Response {
    use axum::response::IntoResponse;
    let body = serde_json::json!({"error": {
        "code": "BAD_REQUEST",
        "message": format!("{method} is not allowed on {}", uri.path().chars().take(200).collect::<String>()),
        "details": null,
    }});
    (axum::http::StatusCode::METHOD_NOT_ALLOWED, axum::Json(body)).into_response()
}
