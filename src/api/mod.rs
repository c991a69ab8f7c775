//! The HTTP API of DESIGN §3.4: `router(state)` builds it; one file per
//! resource; `error.rs` holds the one error shape and status mapping.

pub mod auth;
mod batch;
pub mod body;
mod bundle;
pub mod error;
mod events;
mod jobs;
pub mod metrics;
mod observe;
mod queues;
mod registry;
mod schedules;
mod tenants;
mod usage;
pub mod views;
mod webhooks;
mod workflows;

pub use events::DEFAULT_MAX_STREAMS as DEFAULT_MAX_EVENT_STREAMS;

use crate::enqueue::Enqueuer;
use crate::events::feed::Feed;
use crate::redrive::Redriver;
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
    /// Largest batch enqueue body (default 16 MiB: a thousand jobs of 16 KiB).
    pub max_batch_bytes: usize,
    /// Event streams (`GET /v1/events`) one tenant may have open at once.
    pub max_event_streams: u32,
    /// Webhooks may target loopback, link-local and private addresses.
    pub webhook_allow_private: bool,
}

impl Default for ApiLimits {
    fn default() -> Self {
        ApiLimits {
            max_json_bytes: 1 << 20,
            max_component_bytes: 64 << 20,
            cancel_wait: Duration::from_secs(2),
            max_list_bytes: 8 << 20,
            max_batch_bytes: 16 << 20,
            max_event_streams: events::DEFAULT_MAX_STREAMS,
            webhook_allow_private: false,
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
    /// The one enqueue path (it holds each tenant's quotas as enqueues are
    /// metered by them).
    pub enqueuer: Arc<Enqueuer>,
    /// Failed jobs sent back for a new series of attempts.
    pub redriver: Redriver,
    /// The outbox as it is written, for event streams.
    pub feed: Arc<Feed>,
    /// Each tenant's open event streams.
    streams: events::Streams,
    /// Every webhook, as the sender reads them.
    pub hooks: Arc<crate::webhooks::Hooks>,
    /// This process's candidacy for the leader's lease, when it has one.
    pub leader: Option<Arc<crate::schedule::leader::Leader>>,
    /// What fires schedules (and triggers them), when this server runs them.
    pub firer: Option<Arc<crate::schedule::firer::Firer>>,
}

impl ApiState {
    pub fn new(
        store: Arc<dyn JobStore>,
        registry: Arc<Registry>,
        runner: Arc<Runner>,
        wake: Arc<Notify>,
        limits: ApiLimits,
        enqueuer: Arc<Enqueuer>,
        hooks: Arc<crate::webhooks::Hooks>,
    ) -> Self {
        ApiState {
            redriver: Redriver::new(registry.clone(), runner.clone()),
            feed: Feed::new(store.clone(), crate::events::feed::DEFAULT_POLL),
            hooks,
            streams: events::Streams::new(limits.max_event_streams),
            store,
            registry,
            runner,
            wake,
            limits,
            tokens: auth::TokenCache::default(),
            enqueuer,
            leader: None,
            firer: None,
        }
    }

    /// With what fires schedules, so that the API can trigger them.
    pub fn with_firer(mut self, firer: Arc<crate::schedule::firer::Firer>) -> Self {
        self.firer = Some(firer);
        self
    }

    /// With this process's candidacy, shown by `/healthz`.
    pub fn with_leader(mut self, leader: Arc<crate::schedule::leader::Leader>) -> Self {
        self.leader = Some(leader);
        self
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
        .route("/v1/whoami", get(auth::whoami))
        .route("/v1/components", post(registry::upload_component))
        .route("/v1/tasks", get(registry::list_tasks))
        .route(
            "/v1/tasks/{name}",
            put(registry::define_task).get(registry::show_task),
        )
        .route("/v1/jobs", post(jobs::enqueue).get(jobs::list))
        .route("/v1/queues", get(queues::list))
        .route("/v1/queues/{name}/pause", post(queues::pause))
        .route("/v1/queues/{name}/resume", post(queues::resume))
        .route("/v1/jobs/batch", post(batch::enqueue_batch))
        .route("/v1/jobs/retry", post(jobs::retry_many))
        .route("/v1/jobs/{id}", get(jobs::show))
        .route("/v1/jobs/{id}/cancel", post(jobs::cancel))
        .route("/v1/jobs/{id}/run", post(jobs::run_now))
        .route("/v1/jobs/{id}/resume", post(jobs::resume))
        .route("/v1/jobs/{id}/retry", post(jobs::retry))
        .route("/v1/jobs/{id}/attempts", get(jobs::attempts))
        .route("/v1/jobs/{id}/bundle", get(bundle::bundle))
        .route("/v1/workflows", get(workflows::list))
        .route(
            "/v1/workflows/{name}",
            put(workflows::define).get(workflows::show),
        )
        .route("/v1/schedules", get(schedules::list))
        .route(
            "/v1/schedules/{name}",
            put(schedules::put)
                .get(schedules::show)
                .delete(schedules::delete),
        )
        .route("/v1/schedules/{name}/trigger", post(schedules::trigger))
        .route("/v1/schedules/{name}/pause", post(schedules::pause))
        .route("/v1/schedules/{name}/resume", post(schedules::resume))
        .route("/v1/events", get(events::stream))
        .route("/v1/webhooks", post(webhooks::create).get(webhooks::list))
        .route("/v1/webhooks/{id}", axum::routing::delete(webhooks::delete))
        .route("/v1/webhooks/{id}/deliveries", get(webhooks::deliveries))
        .route("/metrics", get(metrics::scrape))
        .merge(crate::dashboard::router())
        .fallback(no_route)
        .method_not_allowed_fallback(no_method)
        .layer(axum::middleware::from_fn(observe::observe))
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
    // Which process leads is an operator's question (whose logs say what
    // the cron slots did); it names nothing else.
    let leader = state.leader.as_ref().map(|l| l.leads());
    Ok(axum::Json(
        serde_json::json!({"status": "ok", "leader": leader}),
    ))
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
