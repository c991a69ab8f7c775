//! The admin's routes of tokens: mint (`POST /v1/tokens`, optionally with
//! an expiry), list (`GET /v1/tokens`, never a secret or a hash) and revoke
//! (`DELETE /v1/tokens/{id}`). Tenants do none of these: a tenant scope
//! that revoked would let one stolen token lock its tenant's other clients
//! out (DESIGN §9).

use super::auth::{new_token, new_token_id, token_hash, Principal};
use super::body::JsonBody;
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::store::clock::{parse_rfc3339, rfc3339};
use crate::store::{Millis, NewToken, Revocation, Scope, TokenInfo};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;

/// The furthest ahead a token's `expires_at` may be: ten years (and two
/// leap days).
pub const MAX_LIFETIME_MS: Millis = 3_652 * 86_400_000;
/// The longest id a revoke looks up; longer ones are no token's.
const MAX_ID_LEN: usize = 64;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTokenBody {
    tenant: String,
    #[schema(value_type = Vec<Scope>, min_items = 1)]
    scopes: Vec<String>,
    /// When the token stops being accepted (RFC 3339, in the future, at
    /// most ten years ahead); left out, it never expires.
    #[serde(default)]
    #[schema(format = DateTime)]
    expires_at: Option<String>,
}

/// A token, shown once: only its hash is kept.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TokenMinted {
    /// What the list shows and a revoke names; not a secret.
    pub id: String,
    /// The secret: send it as `Authorization: Bearer <token>`.
    pub token: String,
    pub tenant: String,
    pub scopes: Vec<Scope>,
    pub expires_at: Option<String>,
}

/// A token as the admin sees it: never its secret or its hash.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TokenView {
    /// What `DELETE /v1/tokens/{id}` takes.
    pub id: String,
    /// The tenant it acts in; null for the admin token, which acts in any.
    pub tenant: Option<String>,
    /// Whether it is the admin token (which cannot be revoked here).
    pub admin: bool,
    /// What it may do (the admin token: everything).
    pub scopes: Vec<Scope>,
    pub created_at: String,
    /// When a request last came with it, to within a minute; null: not
    /// since it was made.
    pub last_used_at: Option<String>,
    /// Null: it never expires.
    pub expires_at: Option<String>,
    /// Whether it is past its `expires_at` (refused with 401).
    pub expired: bool,
}

/// Every token.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TokenList {
    pub tokens: Vec<TokenView>,
}

/// Mints a token for a tenant with the given scopes, and an expiry if one
/// is given. The admin's.
#[utoipa::path(post, path = "/v1/tokens", tag = "tenants", request_body = NewTokenBody,
    responses((status = 201, body = TokenMinted, links(
            ("revoke" = (operation_id = "tenants_revoke_token", parameters(("id" = "$response.body#/id"))))
        )), Errors))]
pub async fn create_token(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    body: JsonBody<NewTokenBody>,
) -> Result<(StatusCode, Json<TokenMinted>), ApiError> {
    who.require_admin()?;
    let NewTokenBody {
        tenant,
        scopes,
        expires_at,
    } = body.value;
    let expires_at = expires_at
        .map(|t| expiry(&t, state.store.now()))
        .transpose()?;
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
    let id = new_token_id();
    state
        .store
        .token_insert(NewToken {
            id: id.clone(),
            hash: token_hash(&token),
            tenant: Some(tenant.clone()),
            scopes: parsed.clone(),
            expires_at,
        })
        .await?;
    tracing::info!(token = %id, tenant = %tenant, "token minted");
    Ok((
        StatusCode::CREATED,
        Json(TokenMinted {
            id,
            token,
            tenant,
            scopes: parsed,
            expires_at: expires_at.map(rfc3339),
        }),
    ))
}

/// A mint's `expires_at`, checked against `now`: a time, in the future,
/// at most `MAX_LIFETIME_MS` ahead.
fn expiry(text: &str, now: Millis) -> Result<Millis, ApiError> {
    let shown = crate::text::bounded(text, 64);
    let at = parse_rfc3339(text).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "expires_at {shown:?} is not an RFC 3339 time such as 2030-01-31T12:00:00Z"
        ))
    })?;
    if at <= now {
        return Err(ApiError::BadRequest(format!(
            "expires_at {shown:?} is not in the future (it is now {}); give a later time, or \
             leave expires_at out for a token that never expires",
            rfc3339(now)
        )));
    }
    if at - now > MAX_LIFETIME_MS {
        return Err(ApiError::BadRequest(format!(
            "expires_at {shown:?} is more than ten years ahead (the latest is {}); give an \
             earlier time, or leave expires_at out for a token that never expires",
            rfc3339(now + MAX_LIFETIME_MS)
        )));
    }
    Ok(at)
}

/// Every token: ids, tenants, scopes and times, never a secret or a
/// hash; the admin token first, then by tenant. The admin's.
#[utoipa::path(get, path = "/v1/tokens", tag = "tenants",
    responses((status = 200, body = TokenList), Errors))]
pub async fn list_tokens(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<TokenList>, ApiError> {
    who.require_admin()?;
    let now = state.store.now();
    let all = state.store.token_list().await?;
    Ok(Json(TokenList {
        tokens: all.into_iter().map(|t| view(t, now)).collect(),
    }))
}

fn view(t: TokenInfo, now: Millis) -> TokenView {
    TokenView {
        scopes: if t.admin {
            Scope::ALL.to_vec()
        } else {
            t.scopes
        },
        id: t.id,
        tenant: t.tenant,
        admin: t.admin,
        created_at: rfc3339(t.created_at),
        last_used_at: t.last_used_at.map(rfc3339),
        expires_at: t.expires_at.map(rfc3339),
        expired: t.expires_at.is_some_and(|at| now >= at),
    }
}

/// Revokes a tenant's token: from when this answers, this server refuses
/// it, and every other server on the database within seconds. The admin
/// token cannot be revoked here (409): restart with another
/// `TASKBOX_ADMIN_TOKEN` to replace it. The admin's.
#[utoipa::path(delete, path = "/v1/tokens/{id}", tag = "tenants",
    params(("id" = String, Path, description = "The token's id (`tok_…`), as the list shows it")),
    responses((status = 204, description = "Revoked"), Errors))]
pub async fn revoke_token(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    who.require_admin()?;
    let not_found = || ApiError::TokenNotFound(crate::text::bounded(&id, MAX_ID_LEN));
    if id.len() > MAX_ID_LEN {
        return Err(not_found());
    }
    match state.store.token_revoke(&id).await? {
        Revocation::Revoked => {
            // This process refuses it from now; others when they hear of
            // it (PostgreSQL's NOTIFY), or when they look it up again.
            state.tokens.forget(&id);
            tracing::info!(token = %id, "token revoked");
            Ok(StatusCode::NO_CONTENT)
        }
        Revocation::NotFound => Err(not_found()),
        Revocation::Admin => Err(ApiError::Conflict(
            "this is the admin token, which cannot be revoked through the API (that would lock \
             the admin out); to replace it, restart the server with another TASKBOX_ADMIN_TOKEN"
                .into(),
        )),
    }
}

fn all_scopes() -> String {
    Scope::ALL.map(|s| s.as_str()).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = 1_900_000_000_000;

    fn refused(text: &str) -> String {
        match expiry(text, NOW) {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn an_expiry_is_a_time_ahead_within_ten_years() {
        assert_eq!(expiry(&rfc3339(NOW + 1), NOW).unwrap(), NOW + 1);
        let latest = NOW + MAX_LIFETIME_MS;
        assert_eq!(expiry(&rfc3339(latest), NOW).unwrap(), latest);
        assert!(refused("tomorrow").contains("not an RFC 3339 time"));
        assert!(refused(&rfc3339(NOW)).contains("not in the future"));
        assert!(refused(&rfc3339(NOW - 1)).contains("not in the future"));
        let m = refused(&rfc3339(latest + 1));
        assert!(m.contains("more than ten years ahead"), "{m}");
        assert!(m.contains(&rfc3339(latest)), "{m}");
    }
}
