//! `GET /metrics`: the process's Prometheus figures (`crate::metrics`),
//! with what is read when scraped: jobs not ended by queue and status,
//! guest instances alive, leases held. On the API it needs the admin token
//! or `metrics:read`; `--metrics-listen` serves it on an address of its
//! own without a token (for a scraper on a private network, and for
//! workers, which have no API).

use super::auth::Principal;
use super::error::ApiError;
use super::ApiState;
use crate::metrics::{self, Scraped};
use crate::store::Scope;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The process's Prometheus figures. Needs the admin token or
/// `metrics:read`.
#[utoipa::path(get, path = "/metrics", tag = "operate",
    responses((status = 200, description = "The Prometheus text format", content_type = "application/openmetrics-text", body = String), super::openapi::Errors))]
pub async fn scrape(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Response, ApiError> {
    who.require(Scope::MetricsRead)?;
    answer(&state).await
}

/// The scrape on `--metrics-listen`'s address: no token.
pub async fn scrape_open(State(state): State<Arc<ApiState>>) -> Result<Response, ApiError> {
    answer(&state).await
}

async fn answer(state: &ApiState) -> Result<Response, ApiError> {
    let jobs = state
        .store
        .job_depths()
        .await?
        .into_iter()
        .map(|(queue, status, n)| (queue, status.as_str(), n))
        .collect();
    let sandbox = state.registry.sandbox();
    let text = metrics::get().encode(Scraped {
        jobs,
        rollouts: rollouts(state).await?,
        instances: sandbox.alive(),
        instances_max: i64::from(sandbox.config().max_instances),
        held: i64::try_from(state.runner.held()).unwrap_or(i64::MAX),
    });
    Ok(([(CONTENT_TYPE, metrics::CONTENT_TYPE)], text).into_response())
}

/// The rollouts in progress, the newest `MAX_ROLLOUTS`: each version's
/// figures since its rollout began.
async fn rollouts(state: &ApiState) -> Result<Vec<metrics::RolloutScraped>, ApiError> {
    let mut out = Vec::new();
    for staged in state
        .store
        .tasks_staged(None, metrics::MAX_ROLLOUTS as u32)
        .await?
    {
        let Some(live) = state
            .store
            .task_get(&staged.tenant, &staged.name, None)
            .await?
        else {
            continue;
        };
        let since = staged.rollout_since();
        let figures = state
            .store
            .version_figures(
                &staged.tenant,
                &staged.name,
                [staged.version, live.version],
                since,
            )
            .await?;
        out.push(metrics::RolloutScraped {
            percent: staged.rollout_percent.unwrap_or(0),
            versions: figures
                .into_iter()
                .map(|f| metrics::VersionScraped {
                    role: if f.version == staged.version {
                        "staged"
                    } else {
                        "live"
                    },
                    version: f.version,
                    completed: f.completed,
                    failed: f.failed,
                    attempts: f.attempts,
                    fuel: f.fuel,
                })
                .collect(),
            tenant: staged.tenant,
            task: staged.name,
        });
    }
    Ok(out)
}

/// The router of `--metrics-listen`: `/metrics` only.
pub fn open_router(state: Arc<ApiState>) -> axum::Router {
    axum::Router::new()
        .route("/metrics", axum::routing::get(scrape_open))
        .with_state(state)
}
