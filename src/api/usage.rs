//! What a tenant used: `GET /v1/usage` (a tenant's own, with `jobs:read`)
//! and `GET /v1/tenants/{name}/usage` (the admin's view of any tenant).
//! Fuel against the budget, wall time, attempts, and jobs by status, for
//! the current minute and the last.

use super::auth::Principal;
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::quota::WINDOW_MS;
use crate::store::clock::rfc3339;
use crate::store::{JobGauges, Scope, UsageWindow};
use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;

/// What a tenant used in one window.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Window {
    pub start: String,
    pub end: String,
    pub fuel_used: u64,
    /// The tenant's `fuel_per_minute`; null when it has none.
    pub fuel_budget: Option<u64>,
    pub fuel_left: Option<u64>,
    pub wall_ms: u64,
    pub attempts: u64,
    /// Outbound HTTP requests its guests made.
    pub http_requests: u64,
    /// Outbound HTTP body bytes its guests sent and received.
    pub http_bytes: u64,
    /// Jobs a deterministic task's result cache completed without an attempt.
    #[serde(default)]
    pub cache_hits: u64,
    /// The fuel the cached jobs' sources burned: what the hits saved.
    #[serde(default)]
    pub fuel_saved: u64,
    pub jobs_ended: Ended,
}

/// Jobs that ended in a window, by how.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Ended {
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
}

/// A tenant's usage: its jobs now, and this window and the last.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Usage {
    pub tenant: String,
    pub window_ms: i64,
    pub jobs: JobGauges,
    pub current: Window,
    pub last: Window,
}

fn window(w: &UsageWindow, fuel_budget: Option<u64>) -> Window {
    Window {
        start: rfc3339(w.start),
        end: rfc3339(w.start + WINDOW_MS),
        fuel_used: w.fuel,
        fuel_budget,
        fuel_left: fuel_budget.map(|b| b.saturating_sub(w.fuel)),
        wall_ms: w.wall_ms,
        attempts: w.attempts,
        http_requests: w.http_requests,
        http_bytes: w.http_bytes,
        cache_hits: w.cache_hits,
        fuel_saved: w.fuel_saved,
        jobs_ended: Ended {
            completed: w.completed,
            failed: w.failed,
            cancelled: w.cancelled,
        },
    }
}

async fn usage_of(state: &ApiState, tenant: &str) -> Result<Usage, ApiError> {
    let t = state
        .store
        .tenant_get(tenant)
        .await?
        .ok_or_else(|| ApiError::TenantNotFound(tenant.to_owned()))?;
    let budget = t
        .quotas
        .or(&state.registry.admission().quotas.defaults)
        .fuel_per_minute;
    let u = state.store.tenant_usage(tenant).await?;
    Ok(Usage {
        tenant: tenant.to_owned(),
        window_ms: WINDOW_MS,
        jobs: u.jobs,
        current: window(&u.current, budget),
        last: window(&u.last, budget),
    })
}

/// The token's tenant's usage. Needs `jobs:read`.
#[utoipa::path(get, path = "/v1/usage", tag = "tenants",
    responses((status = 200, body = Usage), Errors))]
pub async fn own_usage(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Usage>, ApiError> {
    who.require(Scope::JobsRead)?;
    Ok(Json(usage_of(&state, &who.tenant).await?))
}

/// A tenant's usage. The admin's.
#[utoipa::path(get, path = "/v1/tenants/{name}/usage", tag = "tenants",
    params(("name" = String, Path, description = "The tenant's name")),
    responses((status = 200, body = Usage), Errors))]
pub async fn tenant_usage(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<Usage>, ApiError> {
    who.require_admin()?;
    Ok(Json(usage_of(&state, &name).await?))
}
