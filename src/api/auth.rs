//! Who is calling: the bearer token's tenant and scopes. Tokens are kept
//! only as SHA-256; the admin token acts in tenant `default` unless the
//! `Taskbox-Tenant` header names another.

use super::error::ApiError;
use super::ApiState;
use crate::store::{Scope, TokenRecord};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The tenant an admin acts in unless told otherwise.
pub const DEFAULT_TENANT: &str = "default";
/// Tokens remembered after their first lookup.
const MAX_CACHED_TOKENS: usize = 10_000;
const TOKEN_PREFIX: &str = "tbx_";

/// SHA-256 of a token's text, hex: what the store keeps.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A fresh token's text.
pub fn new_token() -> String {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).expect("the system's random source failed");
    format!("{TOKEN_PREFIX}{}", hex::encode(b))
}

/// Tokens already checked against the store. Tokens are never revoked
/// through the API, so a remembered one stays right; the admin token is
/// replaced only at start.
#[derive(Default)]
pub struct TokenCache(Mutex<HashMap<String, TokenRecord>>);

impl TokenCache {
    fn get(&self, hash: &str) -> Option<TokenRecord> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(hash)
            .cloned()
    }

    fn put(&self, hash: String, t: TokenRecord) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_CACHED_TOKENS {
            map.clear();
        }
        map.insert(hash, t);
    }
}

/// The caller, once authenticated.
#[derive(Debug, Clone)]
pub struct Principal {
    pub tenant: String,
    pub admin: bool,
    scopes: Vec<Scope>,
}

/// What a token is: its tenant, whether it is the admin's, its scopes.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct WhoAmI {
    tenant: String,
    admin: bool,
    scopes: Vec<Scope>,
}

/// `GET /v1/whoami`: the token's tenant, whether it is the admin's, and
/// its scopes (what the dashboard may show and offer). Any valid token.
#[utoipa::path(get, path = "/v1/whoami", tag = "tenants",
    responses((status = 200, body = WhoAmI), super::openapi::Errors))]
pub async fn whoami(who: Principal) -> axum::Json<WhoAmI> {
    axum::Json(WhoAmI {
        tenant: who.tenant,
        admin: who.admin,
        scopes: who.scopes,
    })
}

impl Principal {
    /// Whether the caller holds `scope` (the admin holds every one).
    pub fn has(&self, scope: Scope) -> bool {
        self.admin || self.scopes.contains(&scope)
    }

    /// Refuses with 403 unless the caller holds `scope`.
    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        if self.has(scope) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!(
                "this token lacks the scope {:?}; mint one that has it with POST /v1/tokens",
                scope.as_str()
            )))
        }
    }

    /// Refuses with 403 unless the caller holds one of `scopes`.
    pub fn require_any(&self, scopes: &[Scope]) -> Result<(), ApiError> {
        if self.admin || scopes.iter().any(|s| self.scopes.contains(s)) {
            return Ok(());
        }
        let names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
        Err(ApiError::Forbidden(format!(
            "this token needs one of the scopes {}",
            names.join(", ")
        )))
    }

    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.admin {
            Ok(())
        } else {
            Err(ApiError::Forbidden(
                "only the admin token may do this".into(),
            ))
        }
    }
}

impl FromRequestParts<Arc<ApiState>> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ApiState>,
    ) -> Result<Self, ApiError> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(|| {
                ApiError::Unauthenticated(
                    "missing Authorization header; send `Authorization: Bearer <token>`".into(),
                )
            })?;
        let token = header
            .to_str()
            .ok()
            .and_then(|h| {
                h.strip_prefix("Bearer ")
                    .or_else(|| h.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty() && t.len() <= 256)
            .ok_or_else(|| {
                ApiError::Unauthenticated(
                    "the Authorization header must be `Bearer <token>`".into(),
                )
            })?;
        let hash = token_hash(token);
        let record = match state.tokens.get(&hash) {
            Some(r) => r,
            None => {
                let r = state
                    .store
                    .token_get(&hash)
                    .await?
                    .ok_or_else(|| ApiError::Unauthenticated("unknown token".into()))?;
                state.tokens.put(hash, r.clone());
                r
            }
        };
        let asked = parts
            .headers
            .get("taskbox-tenant")
            .map(|v| {
                v.to_str().map(str::to_owned).map_err(|_| {
                    ApiError::BadRequest("the Taskbox-Tenant header is not text".into())
                })
            })
            .transpose()?;
        if record.admin {
            let tenant = asked.unwrap_or_else(|| DEFAULT_TENANT.to_owned());
            tracing::Span::current().record("tenant", tenant.as_str());
            if tenant != DEFAULT_TENANT && state.store.tenant_get(&tenant).await?.is_none() {
                return Err(ApiError::BadRequest(format!(
                    "tenant {tenant:?} (from the Taskbox-Tenant header) does not exist; create it with POST /v1/tenants"
                )));
            }
            return Ok(Principal {
                tenant,
                admin: true,
                scopes: Scope::ALL.to_vec(),
            });
        }
        let own = record
            .tenant
            .ok_or_else(|| ApiError::Unauthenticated("unknown token".into()))?;
        if asked.as_ref().is_some_and(|a| *a != own) {
            return Err(ApiError::Forbidden(
                "a tenant token acts only in its own tenant; drop the Taskbox-Tenant header".into(),
            ));
        }
        tracing::Span::current().record("tenant", own.as_str());
        Ok(Principal {
            tenant: own,
            admin: false,
            scopes: record.scopes,
        })
    }
}
