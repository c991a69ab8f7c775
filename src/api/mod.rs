//! The HTTP API of DESIGN §3.4: `router(state)` builds it; one file per
//! resource; `error.rs` holds the one error shape and status mapping.

pub mod auth;
pub mod batch;
pub mod body;
pub mod bundle;
pub mod error;
/// An event as the API carries it: a wire type of the core crate.
pub use taskbox_core::event_view;
pub mod events;
pub mod feed;
pub mod heavy_reads;
pub mod jobs;
pub mod metrics;
mod observe;
pub mod openapi;
pub mod queues;
pub mod recheck;
pub mod registry;
pub mod schedules;
pub mod secrets;
pub mod series;
pub mod stream_notice;
pub mod tenants;
pub mod tokens;
mod traced;
pub mod usage;
pub mod usage_export;
pub mod verify;
pub mod views;
pub mod webhooks;
pub mod workflows;

use crate::enqueue::Enqueuer;
use crate::redrive::Redriver;
use crate::registry::Registry;
use crate::runner::Runner;
use crate::store::JobStore;
use axum::Router;
use error::ApiError;
use feed::Feed;
use openapi::Errors;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use utoipa::OpenApi as _;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

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
    /// Longest a request's body takes to arrive, from its first read.
    pub body_timeout: Duration,
    /// Each tenant's rate of reads that scan its records (series, usage
    /// export), a second.
    pub reads_per_second: u32,
}

impl Default for ApiLimits {
    fn default() -> Self {
        ApiLimits {
            max_json_bytes: 1 << 20,
            max_component_bytes: crate::bounds::DEFAULT_MAX_COMPONENT_BYTES,
            cancel_wait: Duration::from_secs(2),
            max_list_bytes: 8 << 20,
            max_batch_bytes: 16 << 20,
            max_event_streams: crate::config::DEFAULT_MAX_EVENT_STREAMS,
            webhook_allow_private: false,
            body_timeout: crate::config::HttpSettings::default().body_timeout,
            reads_per_second: heavy_reads::DEFAULT_PER_SECOND,
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
    /// Tokens looked up lately (shared with what hears of revokes made by
    /// other processes).
    pub tokens: Arc<auth::TokenCache>,
    /// The one enqueue path (it holds each tenant's quotas as enqueues are
    /// metered by them).
    pub enqueuer: Arc<Enqueuer>,
    /// Failed jobs sent back for a new series of attempts.
    pub redriver: Redriver,
    /// The outbox as it is written, for event streams.
    pub feed: Arc<Feed>,
    /// Each tenant's open event streams.
    streams: events::Streams,
    /// The gate of reads that scan a tenant's records.
    pub heavy_reads: heavy_reads::HeavyReads,
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
            feed: Feed::new(store.clone(), feed::DEFAULT_POLL),
            hooks,
            streams: events::Streams::new(limits.max_event_streams),
            heavy_reads: heavy_reads::HeavyReads::new(limits.reads_per_second),
            store,
            registry,
            runner,
            wake,
            limits,
            tokens: Arc::default(),
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

    /// With this cache of tokens, which the process's signals also reach.
    pub fn with_tokens(mut self, tokens: Arc<auth::TokenCache>) -> Self {
        self.tokens = tokens;
        self
    }

    /// With this process's candidacy, shown by `/healthz`.
    pub fn with_leader(mut self, leader: Arc<crate::schedule::leader::Leader>) -> Self {
        self.leader = Some(leader);
        self
    }
}

/// Every route of the API, each registered from its handler's
/// `#[utoipa::path]`, so that the OpenAPI document (`openapi.rs`) has
/// exactly the routes the router has.
pub(crate) fn api() -> OpenApiRouter<Arc<ApiState>> {
    OpenApiRouter::with_openapi(openapi::Doc::openapi())
        .routes(routes!(health))
        .routes(routes!(openapi::document))
        .routes(routes!(tenants::create_tenant, tenants::list_tenants))
        .routes(routes!(tenants::put_tenant, tenants::show_tenant))
        .routes(routes!(usage::tenant_usage))
        .routes(routes!(usage::own_usage))
        .routes(routes!(usage_export::export))
        .routes(routes!(series::series))
        .routes(routes!(tokens::create_token, tokens::list_tokens))
        .routes(routes!(tokens::revoke_token))
        .routes(routes!(auth::whoami))
        .routes(routes!(registry::upload_component))
        .routes(routes!(registry::list_tasks))
        .routes(routes!(registry::define_task, registry::show_task))
        .routes(routes!(registry::set_rollout))
        .routes(routes!(registry::promote))
        .routes(routes!(registry::rollback))
        .routes(routes!(verify::verify))
        .routes(routes!(jobs::enqueue, jobs::list))
        .routes(routes!(queues::list))
        .routes(routes!(queues::pause))
        .routes(routes!(queues::resume))
        .routes(routes!(batch::enqueue_batch))
        .routes(routes!(jobs::retry_many))
        .routes(routes!(jobs::show))
        .routes(routes!(jobs::cancel))
        .routes(routes!(jobs::run_now))
        .routes(routes!(jobs::resume))
        .routes(routes!(jobs::retry))
        .routes(routes!(jobs::attempts))
        .routes(routes!(bundle::bundle))
        .routes(routes!(workflows::list))
        .routes(routes!(workflows::define, workflows::show))
        .routes(routes!(schedules::list))
        .routes(routes!(schedules::put, schedules::show, schedules::delete))
        .routes(routes!(schedules::trigger))
        .routes(routes!(schedules::pause))
        .routes(routes!(schedules::resume))
        .routes(routes!(events::stream))
        .routes(routes!(webhooks::create, webhooks::list))
        .routes(routes!(webhooks::delete))
        .routes(routes!(webhooks::deliveries))
        .routes(routes!(webhooks::redeliver))
        .routes(routes!(secrets::list))
        .routes(routes!(secrets::put, secrets::delete))
        .routes(routes!(metrics::scrape))
        .routes(routes!(crate::dashboard::page))
        .routes(routes!(crate::dashboard::file))
}

/// The whole API.
pub fn router(state: Arc<ApiState>) -> Router {
    let (routes, _) = api().split_for_parts();
    routes
        .fallback(no_route)
        .method_not_allowed_fallback(no_method)
        .layer(axum::middleware::from_fn(observe::observe))
        .with_state(state)
}

/// Whether the server and its database answer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok`.
    status: &'static str,
    /// Whether this process holds the leader's lease (it fires cron
    /// schedules); null when it does not run them.
    leader: Option<bool>,
}

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operate",
    security(()),
    responses((status = 200, body = Health), Errors)
)]
async fn health(
    axum::extract::State(state): axum::extract::State<Arc<ApiState>>,
) -> Result<axum::Json<Health>, ApiError> {
    if let Err(e) = state.store.tenant_get(auth::DEFAULT_TENANT).await {
        // The reason goes to the log; the answer names no internals.
        tracing::warn!(error = %e, "health check: the database does not answer");
        return Err(ApiError::Unavailable("the database does not answer".into()));
    }
    // Which process leads is an operator's question (whose logs say what
    // the cron slots did); it names nothing else.
    let leader = state.leader.as_ref().map(|l| l.leads());
    Ok(axum::Json(Health {
        status: "ok",
        leader,
    }))
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
