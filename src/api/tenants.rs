//! `POST /v1/tenants` and `POST /v1/tokens`: the admin's routes.

use super::auth::{new_token, token_hash, Principal};
use super::body::JsonBody;
use super::error::ApiError;
use super::ApiState;
use crate::registry::spec::check_name;
use crate::store::clock::rfc3339;
use crate::store::{NewToken, Scope};
use axum::extract::State;
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
    Ok((
        StatusCode::CREATED,
        Json(json!({"name": t.name, "created_at": rfc3339(t.created_at)})),
    ))
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
