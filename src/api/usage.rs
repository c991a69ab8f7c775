//! What a tenant used: `GET /v1/usage` (a tenant's own, with `jobs:read`)
//! and `GET /v1/tenants/{name}/usage` (the admin's view of any tenant).
//! Fuel against the budget, wall time, attempts, and jobs by status, for
//! the current minute and the last.

use super::auth::Principal;
use super::error::ApiError;
use super::ApiState;
use crate::quota::WINDOW_MS;
use crate::store::clock::rfc3339;
use crate::store::{Scope, UsageWindow};
use axum::extract::{Path, State};
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

fn window(w: &UsageWindow, fuel_budget: Option<u64>) -> Value {
    json!({
        "start": rfc3339(w.start),
        "end": rfc3339(w.start + WINDOW_MS),
        "fuel_used": w.fuel,
        "fuel_budget": fuel_budget,
        "fuel_left": fuel_budget.map(|b| b.saturating_sub(w.fuel)),
        "wall_ms": w.wall_ms,
        "attempts": w.attempts,
        "jobs_ended": {"completed": w.completed, "failed": w.failed, "cancelled": w.cancelled},
    })
}

async fn usage_of(state: &ApiState, tenant: &str) -> Result<Value, ApiError> {
    let t = state
        .store
        .tenant_get(tenant)
        .await?
        .ok_or_else(|| ApiError::TenantNotFound(tenant.to_owned()))?;
    let budget = t.quotas.or(&state.enqueuer.quotas.defaults).fuel_per_minute;
    let u = state.store.tenant_usage(tenant).await?;
    Ok(json!({
        "tenant": tenant,
        "window_ms": WINDOW_MS,
        "jobs": u.jobs,
        "current": window(&u.current, budget),
        "last": window(&u.last, budget),
    }))
}

pub async fn own_usage(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsRead)?;
    Ok(Json(usage_of(&state, &who.tenant).await?))
}

pub async fn tenant_usage(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require_admin()?;
    Ok(Json(usage_of(&state, &name).await?))
}
