//! Secrets: put (`PUT /v1/secrets/{name}`), list and delete the tenant's
//! write-only secrets. All need the scope `secrets:write`; no answer ever
//! holds a value, which only a task that declares the secret reads.

use super::auth::{Across, Principal};
use super::body::{JsonBody, QueryParams};
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::secrets::rules;
use crate::store::clock::rfc3339;
use crate::store::{NewSecret, Scope, SecretRecord, StoreError, MAX_SECRETS};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;

/// A secret's value. No `Debug`: nothing may print it.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutSecretBody {
    /// The value: text of 8 bytes to 64 KiB. It is sealed at once and
    /// never shown again.
    #[schema(example = "sk_live_…", min_length = 1)]
    value: String,
}

/// A secret, as it is shown: never its value.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Secret {
    pub tenant: String,
    #[schema(example = "STRIPE_KEY")]
    pub name: String,
    /// 1 when it was made; one more at each put.
    pub version: u32,
    pub created_at: String,
    pub updated_at: String,
}

/// The tenant's secrets, by name.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct SecretList {
    pub secrets: Vec<Secret>,
}

fn view(r: &SecretRecord) -> Secret {
    Secret {
        tenant: r.tenant.clone(),
        name: r.name.clone(),
        version: r.version,
        created_at: rfc3339(r.created_at),
        updated_at: rfc3339(r.updated_at),
    }
}

/// Puts a secret: makes it, or replaces its value (its version one more).
/// The value is sealed with the server's key, bound to the tenant and the
/// name; a task that declares the name (`"secrets": [...]`) reads it
/// through `wasi:config/store`. Needs `secrets:write`.
#[utoipa::path(put, path = "/v1/secrets/{name}", tag = "secrets", request_body = PutSecretBody,
    params(("name" = String, Path, description = "1 to 64 of A-Z a-z 0-9 _ - ., starting with a letter or _",
        pattern = "^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")),
    responses(
        (status = 201, description = "Made", body = Secret, links(
            ("delete" = (operation_id = "secrets_delete", parameters(("name" = "$response.body#/name"))))
        )),
        (status = 200, description = "Replaced; its version is one more", body = Secret, links(
            ("delete" = (operation_id = "secrets_delete", parameters(("name" = "$response.body#/name"))))
        )),
        Errors))]
pub async fn put(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
    body: JsonBody<PutSecretBody>,
) -> Result<(StatusCode, Json<Secret>), ApiError> {
    who.require(Scope::SecretsWrite)?;
    rules::check_name(&name)?;
    let value = body.value.value;
    rules::check_value(&value)?;
    let vault = state.registry.vault().ok_or_else(|| {
        ApiError::Unavailable("this server was started without a secrets key".into())
    })?;
    let sealed = vault.seal(&who.tenant, &name, &value)?;
    drop(value);
    let put = state
        .store
        .secret_put(NewSecret {
            tenant: who.tenant.clone(),
            name,
            nonce: sealed.nonce.to_vec(),
            ciphertext: sealed.ciphertext,
        })
        .await;
    let (record, made) = match put {
        Ok(r) => r,
        // Not a quota the admin sets, nor one that refills: a conflict
        // with what the tenant keeps.
        Err(StoreError::QuotaExceeded(e)) if e.quota == "secrets" => {
            return Err(ApiError::Conflict(format!(
                "the tenant has {MAX_SECRETS} secrets, the most it may keep; delete one \
                 (DELETE /v1/secrets/{{name}}) before putting a new one"
            )))
        }
        Err(e) => return Err(e.into()),
    };
    let status = if made {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(view(&record))))
}

/// The tenant's secrets by name, with their versions and times; never
/// their values. Needs `secrets:write`.
#[utoipa::path(get, path = "/v1/secrets", tag = "secrets", params(Across),
    responses((status = 200, body = SecretList), Errors))]
pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(q): QueryParams<Across>,
) -> Result<Json<SecretList>, ApiError> {
    who.require(Scope::SecretsWrite)?;
    let secrets = state.store.secret_list(who.listing(q.all_tenants)?).await?;
    Ok(Json(SecretList {
        secrets: secrets.iter().map(view).collect(),
    }))
}

/// Deletes a secret: tasks that declare it no longer see it. Needs
/// `secrets:write`.
#[utoipa::path(delete, path = "/v1/secrets/{name}", tag = "secrets",
    params(("name" = String, Path, description = "The secret's name")),
    responses((status = 204, description = "Deleted"), Errors))]
pub async fn delete(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    who.require(Scope::SecretsWrite)?;
    // A name that breaks the rules names no secret: the same 404, and no
    // look in the database.
    let known = rules::check_name(&name).is_ok();
    if !known || !state.store.secret_delete(&who.tenant, &name).await? {
        return Err(ApiError::SecretNotFound(crate::text::bounded(&name, 64)));
    }
    Ok(StatusCode::NO_CONTENT)
}
