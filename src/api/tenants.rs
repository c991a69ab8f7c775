//! The admin's routes: tenants (`POST /v1/tenants`; their weight and quotas
//! with `PUT` and `GET /v1/tenants/{name}`) and tokens (`POST /v1/tokens`).

use super::auth::{new_token, token_hash, Principal};
use super::body::JsonBody;
use super::error::ApiError;
use super::ApiState;
use crate::quota::{Quotas, MAX_WEIGHT};
use crate::registry::spec::check_name;
use crate::store::clock::rfc3339;
use crate::store::{NewToken, Scope, Tenant, TenantSettings};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTenant {
    name: String,
}

pub async fn create_tenant(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    body: JsonBody<NewTenant>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require_admin()?;
    let name = body.value.name;
    check_name("tenant", &name).map_err(ApiError::BadRequest)?;
    let t = state.store.tenant_insert(&name).await?;
    Ok((StatusCode::CREATED, Json(tenant_view(&state, &t))))
}

/// A tenant as the admin sees it: its weight and every quota, with the
/// value in force and whether the tenant has its own or the server's.
pub fn tenant_view(state: &ApiState, t: &Tenant) -> Value {
    let defaults = &state.enqueuer.quotas.defaults;
    let quotas: serde_json::Map<String, Value> = t
        .quotas
        .entries()
        .iter()
        .zip(defaults.entries())
        .map(|((name, own), (_, default))| {
            let (limit, source) = match own {
                Some(v) => (Some(*v), "tenant"),
                None => (default, "server"),
            };
            (
                (*name).to_owned(),
                json!({"limit": limit, "source": source}),
            )
        })
        .collect();
    json!({
        "name": t.name,
        "created_at": rfc3339(t.created_at),
        "weight": t.weight.unwrap_or(crate::quota::DEFAULT_WEIGHT),
        "quotas": quotas,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantBody {
    #[serde(default)]
    weight: Option<u32>,
    #[serde(default)]
    quotas: Option<Quotas>,
}

/// `PUT /v1/tenants/{name}`: sets a tenant's weight and quotas (what is
/// left out is the server's default), creating the tenant if it is new.
pub async fn put_tenant(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    body: JsonBody<TenantBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require_admin()?;
    check_name("tenant", &name).map_err(ApiError::BadRequest)?;
    let TenantBody { weight, quotas } = body.value;
    if weight.is_some_and(|w| w == 0 || w > MAX_WEIGHT) {
        return Err(ApiError::BadRequest(format!(
            "weight must be between 1 and {MAX_WEIGHT} (a tenant's share of the runners against the others')"
        )));
    }
    let quotas = quotas.unwrap_or_default();
    if quotas.enqueue_burst.is_some() && quotas.enqueue_per_second.is_none() {
        return Err(ApiError::BadRequest(
            "enqueue_burst needs enqueue_per_second: a burst is the size of the rate's bucket"
                .into(),
        ));
    }
    if quotas.enqueue_burst == Some(0) {
        return Err(ApiError::BadRequest(
            "enqueue_burst must be at least 1".into(),
        ));
    }
    let (t, created) = state
        .store
        .tenant_put(TenantSettings {
            name: name.clone(),
            weight,
            quotas,
        })
        .await?;
    // Enqueues through this process are metered by the new quotas at once.
    state.enqueuer.quotas.put(&name, t.quotas);
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(tenant_view(&state, &t))))
}

pub async fn show_tenant(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require_admin()?;
    let t = state
        .store
        .tenant_get(&name)
        .await?
        .ok_or_else(|| ApiError::TenantNotFound(name.clone()))?;
    Ok(Json(tenant_view(&state, &t)))
}

pub async fn list_tenants(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require_admin()?;
    let all = state.store.tenant_list().await?;
    Ok(Json(json!({
        "tenants": all.iter().map(|t| tenant_view(&state, t)).collect::<Vec<_>>()
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTokenBody {
    tenant: String,
    scopes: Vec<String>,
}

pub async fn create_token(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    body: JsonBody<NewTokenBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require_admin()?;
    let NewTokenBody { tenant, scopes } = body.value;
    if state.store.tenant_get(&tenant).await?.is_none() {
        return Err(ApiError::BadRequest(format!(
            "tenant {tenant:?} does not exist; create it with POST /v1/tenants"
        )));
    }
    if scopes.is_empty() {
        return Err(ApiError::BadRequest(format!(
            "scopes is empty; give one or more of {}",
            all_scopes()
        )));
    }
    let mut parsed = Vec::with_capacity(scopes.len());
    for s in &scopes {
        let scope = Scope::parse(s).ok_or_else(|| {
            ApiError::BadRequest(format!("unknown scope {s:?}; scopes are {}", all_scopes()))
        })?;
        if !parsed.contains(&scope) {
            parsed.push(scope);
        }
    }
    let token = new_token();
    state
        .store
        .token_insert(NewToken {
            hash: token_hash(&token),
            tenant: Some(tenant.clone()),
            scopes: parsed.clone(),
        })
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"token": token, "tenant": tenant, "scopes": parsed})),
    ))
}

fn all_scopes() -> String {
    Scope::ALL.map(|s| s.as_str()).join(", ")
}
