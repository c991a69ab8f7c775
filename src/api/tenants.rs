//! The admin's routes of tenants: `POST /v1/tenants`, their weight and
//! quotas with `PUT` and `GET /v1/tenants/{name}`, and the list.

use super::auth::Principal;
use super::body::JsonBody;
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::quota::{Quotas, MAX_WEIGHT};
use crate::registry::spec::check_name;
use crate::store::clock::rfc3339;
use crate::store::{Tenant, TenantSettings};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use utoipa::ToSchema;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTenant {
    /// 1 to 64 characters: letters, digits, `-`, `_`, `.`.
    name: String,
}

/// A tenant: its share of the runners and its quotas.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TenantView {
    pub name: String,
    pub created_at: String,
    /// Its share of the runners against the other tenants'.
    pub weight: u32,
    /// Every quota, with its limit (null: none) and whose it is.
    pub quotas: BTreeMap<String, QuotaView>,
}

/// One quota of a tenant's.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct QuotaView {
    pub limit: Option<u64>,
    pub source: QuotaSource,
}

/// Whose a quota's limit is.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuotaSource {
    /// Set on the tenant.
    Tenant,
    /// The server's default.
    Server,
}

/// Every tenant.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TenantList {
    pub tenants: Vec<TenantView>,
}

/// Creates a tenant. The admin's.
#[utoipa::path(post, path = "/v1/tenants", tag = "tenants", request_body = NewTenant,
    responses((status = 201, body = TenantView, links(
            ("show" = (operation_id = "tenants_show_tenant", parameters(("name" = "$response.body#/name")))),
            ("usage" = (operation_id = "tenants_tenant_usage", parameters(("name" = "$response.body#/name"))))
        )), Errors))]
pub async fn create_tenant(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    body: JsonBody<NewTenant>,
) -> Result<(StatusCode, Json<TenantView>), ApiError> {
    who.require_admin()?;
    let name = body.value.name;
    check_name("tenant", &name).map_err(ApiError::BadRequest)?;
    let t = state.store.tenant_insert(&name).await?;
    Ok((StatusCode::CREATED, Json(tenant_view(&state, &t))))
}

/// A tenant as the admin sees it: its weight and every quota, with the
/// value in force and whether the tenant has its own or the server's.
pub fn tenant_view(state: &ApiState, t: &Tenant) -> TenantView {
    let defaults = &state.registry.admission().quotas.defaults;
    let quotas = t
        .quotas
        .entries()
        .iter()
        .zip(defaults.entries())
        .map(|((name, own), (_, default))| {
            let (limit, source) = match own {
                Some(v) => (Some(*v), QuotaSource::Tenant),
                None => (default, QuotaSource::Server),
            };
            ((*name).to_owned(), QuotaView { limit, source })
        })
        .collect();
    TenantView {
        name: t.name.clone(),
        created_at: rfc3339(t.created_at),
        weight: t.weight.unwrap_or(crate::quota::DEFAULT_WEIGHT),
        quotas,
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantBody {
    /// Its share of the runners against the others' (1 to 10000; default 1).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 10000)]
    weight: Option<u32>,
    #[serde(default, deserialize_with = "crate::strict::optional_object")]
    quotas: Option<Quotas>,
}

/// `PUT /v1/tenants/{name}`: sets a tenant's weight and quotas (what is
/// left out is the server's default), creating the tenant if it is new.
/// Creates a tenant or sets its weight and quotas (the quotas given
/// replace all of its own). The admin's.
#[utoipa::path(put, path = "/v1/tenants/{name}", tag = "tenants",
    params(("name" = String, Path, description = "The tenant's name")),
    request_body = TenantBody,
    responses(
        (status = 201, description = "Created", body = TenantView),
        (status = 200, description = "Changed", body = TenantView),
        Errors
    ))]
pub async fn put_tenant(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    body: JsonBody<TenantBody>,
) -> Result<(StatusCode, Json<TenantView>), ApiError> {
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
    state.registry.admission().quotas.put(&name, t.quotas);
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(tenant_view(&state, &t))))
}

/// A tenant. The admin's.
#[utoipa::path(get, path = "/v1/tenants/{name}", tag = "tenants",
    params(("name" = String, Path, description = "The tenant's name")),
    responses((status = 200, body = TenantView), Errors))]
pub async fn show_tenant(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<TenantView>, ApiError> {
    who.require_admin()?;
    let t = state
        .store
        .tenant_get(&name)
        .await?
        .ok_or_else(|| ApiError::TenantNotFound(name.clone()))?;
    Ok(Json(tenant_view(&state, &t)))
}

/// Every tenant. The admin's.
#[utoipa::path(get, path = "/v1/tenants", tag = "tenants",
    responses((status = 200, body = TenantList), Errors))]
pub async fn list_tenants(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<TenantList>, ApiError> {
    who.require_admin()?;
    let all = state.store.tenant_list().await?;
    Ok(Json(TenantList {
        tenants: all.iter().map(|t| tenant_view(&state, t)).collect(),
    }))
}
