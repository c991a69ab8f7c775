//! Who is calling: the bearer token's tenant and scopes. Tokens are kept
//! only as SHA-256; the admin token acts in tenant `default` unless the
//! `Taskbox-Tenant` header names another. A token looked up is believed
//! for `TOKEN_TTL`, its expiry checked at every request (and, for an answer
//! that lasts, as it goes on: `recheck`).

use super::error::ApiError;
use super::ApiState;
use crate::store::clock::rfc3339;
use crate::store::{Scope, TokenRecord};
use crate::time::Millis;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The tenant an admin acts in unless told otherwise.
pub const DEFAULT_TENANT: &str = "default";
/// Tokens remembered after their first lookup.
const MAX_CACHED_TOKENS: usize = 10_000;
const TOKEN_PREFIX: &str = "tbx_";
const ID_PREFIX: &str = "tok_";
/// How long a token looked up is believed without asking the store again:
/// the longest a revoke made by another process takes to reach this one
/// when its notification is lost (or, on SQLite, never sent: one process
/// owns the database). A lookup costs one read by primary key.
pub const TOKEN_TTL: Duration = Duration::from_secs(3);
/// The promise a revoke keeps: every server of the database refuses the
/// token within this long, a new request and an answer still going on
/// alike (DESIGN §3.3). `TOKEN_TTL` and `recheck::RECHECK` are held under it.
pub const REACH: Duration = Duration::from_secs(5);
/// Least time between two records of one token's use by this process.
pub const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// SHA-256 of a token's text, hex: what the store keeps.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A fresh token's text.
pub fn new_token() -> String {
    format!("{TOKEN_PREFIX}{}", hex::encode(random::<32>()))
}

/// A fresh token's id: what the list shows and a revoke names. Random, not
/// derived from the token, so it tells nothing of it.
pub fn new_token_id() -> String {
    format!("{ID_PREFIX}{}", hex::encode(random::<8>()))
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).expect("the system's random source failed");
    b
}

/// Tokens already checked against the store, each believed until its
/// `until`; and when this process last recorded each token's use.
pub struct TokenCache {
    known: Mutex<Known>,
    /// By the token's id.
    touched: Mutex<HashMap<String, Instant>>,
    /// The generation, sent at each forget: what an answer still going on
    /// waits for to look its token up again at once (`recheck`).
    forgets: watch::Sender<u64>,
}

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache {
            known: Mutex::default(),
            touched: Mutex::default(),
            forgets: watch::Sender::new(0),
        }
    }
}

#[derive(Default)]
struct Known {
    /// By the token's hash.
    tokens: HashMap<String, (TokenRecord, Instant)>,
    /// One more at each forget: a lookup begun before one is not kept,
    /// since it may have read the token before its revoke.
    generation: u64,
}

/// Where a lookup in the store began: passed back to `TokenCache::put`.
struct Asked {
    at: Instant,
    generation: u64,
    /// The id of the token this hash was believed to be until its belief
    /// ran out: if the store no longer has it, it was revoked.
    had: Option<String>,
}

impl TokenCache {
    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The token, if it was looked up less than `TOKEN_TTL` before `now`;
    /// else where the lookup the caller makes begins.
    fn get(&self, hash: &str, now: Instant) -> Result<TokenRecord, Asked> {
        let mut known = self.known();
        let had = match known.tokens.get(hash) {
            Some((record, until)) if now < *until => return Ok(record.clone()),
            Some(_) => known.tokens.remove(hash).map(|(record, _)| record.id),
            None => None,
        };
        Err(Asked {
            at: now,
            generation: known.generation,
            had,
        })
    }

    /// Remembers a token the store answered to a lookup begun at `asked`,
    /// until `TOKEN_TTL` after it began: a revoke committed during the
    /// lookup is believed away no later than `TOKEN_TTL` after it (and at
    /// once in this process, which forgot it meanwhile).
    fn put(&self, hash: String, record: TokenRecord, asked: Asked) {
        let mut known = self.known();
        if known.generation != asked.generation {
            return;
        }
        if known.tokens.len() >= MAX_CACHED_TOKENS {
            known.tokens.retain(|_, (_, until)| asked.at < *until);
            if known.tokens.len() >= MAX_CACHED_TOKENS {
                known.tokens.clear();
            }
        }
        known.tokens.insert(hash, (record, asked.at + TOKEN_TTL));
    }

    /// Forgets the token of this id: it was revoked.
    pub fn forget(&self, id: &str) {
        let mut known = self.known();
        known.tokens.retain(|_, (record, _)| record.id != id);
        self.next_generation(&mut known);
    }

    /// Forgets every token: revokes may have been missed.
    pub fn forget_all(&self) {
        let mut known = self.known();
        known.tokens.clear();
        self.next_generation(&mut known);
    }

    /// After a forget: lookups under way are not kept, and every answer
    /// still going on looks its token up again.
    fn next_generation(&self, known: &mut Known) {
        known.generation += 1;
        self.forgets.send_replace(known.generation);
    }

    /// What rings at each forget (the generation after it).
    pub fn forgets(&self) -> watch::Receiver<u64> {
        self.forgets.subscribe()
    }

    /// Whether this token's use at `now` should be recorded: not when this
    /// process recorded one less than `TOUCH_EVERY` before.
    fn should_touch(&self, id: &str, now: Instant) -> bool {
        let mut map = self.touched.lock().unwrap_or_else(|p| p.into_inner());
        if map.get(id).is_some_and(|at| now < *at + TOUCH_EVERY) {
            return false;
        }
        if map.len() >= MAX_CACHED_TOKENS {
            map.retain(|_, at| now < *at + TOUCH_EVERY);
            if map.len() >= MAX_CACHED_TOKENS {
                map.clear();
            }
        }
        map.insert(id.to_owned(), now);
        true
    }
}

/// Records a token's use off the request's path: a write whose failure
/// costs only the time shown, so it is logged and no more.
fn touch(state: &ApiState, id: &str) {
    if !state.tokens.should_touch(id, Instant::now()) {
        return;
    }
    let (store, id) = (state.store.clone(), id.to_owned());
    tokio::spawn(async move {
        if let Err(e) = store.token_touch(&id).await {
            tracing::debug!(error = %e, token = %id, "cannot record a token's use");
        }
    });
}

/// Refuses a token past its `expires_at`, by the store's clock.
fn check_expiry(state: &ApiState, record: &TokenRecord) -> Result<(), ApiError> {
    match record.expires_at {
        Some(at) if state.store.now() >= at => Err(ApiError::Unauthenticated(format!(
            "this token expired at {}; ask the admin for a new one",
            rfc3339(at)
        ))),
        _ => Ok(()),
    }
}

/// The token a request came with, as the store knows it (its hash):
/// what an answer that lasts looks up again. Its `Debug` shows nothing of
/// it, as the token list shows no hash.
#[derive(Clone)]
pub struct TokenKey(String);

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(..)")
    }
}

/// The token of this key as the store has it, if it is still taken: looked
/// up (believed from the cache for `TOKEN_TTL`, else read from the store)
/// and refused past its expiry. Every request asks this, and an answer
/// that lasts asks it again as it goes on (`recheck`).
pub async fn believe(state: &ApiState, key: &TokenKey) -> Result<TokenRecord, ApiError> {
    let record = match state.tokens.get(&key.0, Instant::now()) {
        Ok(r) => r,
        Err(asked) => {
            let Some(r) = state.store.token_get(&key.0).await? else {
                if let Some(id) = &asked.had {
                    // A token this process took is gone: revoked, and the
                    // notice not heard (yet). Forgotten as if heard, so that
                    // every answer of it still going on ends now too.
                    state.tokens.forget(id);
                }
                return Err(ApiError::Unauthenticated("unknown token".into()));
            };
            state.tokens.put(key.0.clone(), r.clone(), asked);
            r
        }
    };
    check_expiry(state, &record)?;
    Ok(record)
}

/// The caller, once authenticated.
#[derive(Debug, Clone)]
pub struct Principal {
    pub tenant: String,
    pub admin: bool,
    scopes: Vec<Scope>,
    /// The token, to be looked up again by an answer that lasts.
    key: TokenKey,
    /// Its expiry (by the store's clock), as looked up for this request.
    expires_at: Option<Millis>,
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

    /// The token this caller came with, and its expiry as looked up.
    pub fn token(&self) -> (&TokenKey, Option<Millis>) {
        (&self.key, self.expires_at)
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

    /// Whose figures a read of usage asks for (`tenant=`): for the admin,
    /// the tenant named, or every tenant (`None`); for a tenant's token,
    /// its own, and naming another is refused.
    pub fn whose(&self, named: Option<&str>) -> Result<Option<String>, ApiError> {
        match named {
            _ if self.admin => Ok(named.map(str::to_owned)),
            Some(other) if other != self.tenant => Err(ApiError::Forbidden(format!(
                "a tenant's token reads only its own tenant's figures, not {other:?}'s; leave out tenant"
            ))),
            _ => Ok(Some(self.tenant.clone())),
        }
    }
}

/// A list's (or a filtered retry's) `?all_tenants=true`: every tenant's
/// rows rather than the tenant the caller acts in (the admin's view across
/// tenants).
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct Across {
    /// Every tenant's, each row naming its tenant: the admin token's
    /// alone (403 for a tenant's). Left out: the tenant the caller acts in.
    pub all_tenants: Option<bool>,
}

impl Principal {
    /// Whose rows a list reads (or a retry takes): the tenant the caller acts in, or with
    /// `all_tenants` every tenant's (`None`), which only the admin may
    /// ask for.
    pub fn listing(&self, all_tenants: Option<bool>) -> Result<Option<&str>, ApiError> {
        match all_tenants {
            Some(true) if self.admin => Ok(None),
            Some(true) => Err(ApiError::Forbidden(
                "a tenant's token reaches only its own tenant's jobs and resources; leave out all_tenants".into(),
            )),
            _ => Ok(Some(&self.tenant)),
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
        let key = TokenKey(token_hash(token));
        let record = believe(state, &key).await?;
        touch(state, &record.id);
        let named = parts
            .headers
            .get("taskbox-tenant")
            .map(|v| {
                v.to_str().map(str::to_owned).map_err(|_| {
                    ApiError::BadRequest("the Taskbox-Tenant header is not text".into())
                })
            })
            .transpose()?;
        if record.admin {
            let tenant = named.unwrap_or_else(|| DEFAULT_TENANT.to_owned());
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
                key,
                expires_at: record.expires_at,
            });
        }
        let own = record
            .tenant
            .ok_or_else(|| ApiError::Unauthenticated("unknown token".into()))?;
        if named.as_ref().is_some_and(|a| *a != own) {
            return Err(ApiError::Forbidden(
                "a tenant token acts only in its own tenant; drop the Taskbox-Tenant header".into(),
            ));
        }
        tracing::Span::current().record("tenant", own.as_str());
        Ok(Principal {
            tenant: own,
            admin: false,
            scopes: record.scopes,
            key,
            expires_at: record.expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> TokenRecord {
        TokenRecord {
            id: id.into(),
            tenant: Some("acme".into()),
            scopes: vec![Scope::JobsRead],
            admin: false,
            expires_at: None,
        }
    }

    /// Looks `hash` up as a request does, the store answering `id`.
    fn look_up(cache: &TokenCache, hash: &str, id: &str, now: Instant) -> bool {
        match cache.get(hash, now) {
            Ok(_) => true,
            Err(asked) => {
                cache.put(hash.into(), record(id), asked);
                false
            }
        }
    }

    #[test]
    fn a_token_is_believed_for_the_ttl_then_looked_up_again() {
        let cache = TokenCache::default();
        let t0 = Instant::now();
        assert!(!look_up(&cache, "h", "tok_1", t0), "first: the store");
        assert!(
            cache.get("h", t0 + TOKEN_TTL / 2).is_ok(),
            "then: remembered"
        );
        assert!(cache.get("h", t0 + TOKEN_TTL).is_err(), "and no longer");
    }

    #[test]
    fn a_revoked_token_is_forgotten_even_when_a_lookup_was_under_way() {
        let cache = TokenCache::default();
        let t0 = Instant::now();
        look_up(&cache, "h1", "tok_1", t0);
        look_up(&cache, "h2", "tok_2", t0);
        cache.forget("tok_1");
        assert!(cache.get("h1", t0).is_err());
        assert!(cache.get("h2", t0).is_ok(), "only the revoked one");

        // A lookup that read the row before the revoke answers after it:
        // what it read is not kept.
        let Err(asked) = cache.get("h3", t0) else {
            panic!("h3 was never looked up")
        };
        cache.forget("tok_3");
        cache.put("h3".into(), record("tok_3"), asked);
        assert!(cache.get("h3", t0).is_err());

        cache.forget_all();
        assert!(cache.get("h2", t0).is_err());
    }

    #[test]
    fn a_lookup_after_the_belief_ran_out_names_the_token_it_was() {
        let cache = TokenCache::default();
        let t0 = Instant::now();
        look_up(&cache, "h", "tok_1", t0);
        let Err(asked) = cache.get("h", t0 + TOKEN_TTL) else {
            panic!("the belief ran out")
        };
        assert_eq!(asked.had.as_deref(), Some("tok_1"));
        let Err(asked) = cache.get("h", t0 + TOKEN_TTL) else {
            panic!("nothing was put back")
        };
        assert_eq!(asked.had, None, "named once");
        let Err(asked) = cache.get("never", t0) else {
            panic!("never looked up")
        };
        assert_eq!(asked.had, None);
    }

    #[test]
    fn each_forget_rings_the_answers_still_going_on() {
        let cache = TokenCache::default();
        let mut forgets = cache.forgets();
        assert!(!forgets.has_changed().unwrap());
        cache.forget("tok_1");
        assert!(forgets.has_changed().unwrap());
        forgets.mark_unchanged();
        cache.forget_all();
        assert!(forgets.has_changed().unwrap());
    }

    #[test]
    fn a_use_is_recorded_at_most_once_a_minute() {
        let cache = TokenCache::default();
        let t0 = Instant::now();
        assert!(cache.should_touch("tok_1", t0));
        assert!(!cache.should_touch("tok_1", t0 + TOUCH_EVERY / 2));
        assert!(cache.should_touch("tok_2", t0), "each token its own");
        assert!(cache.should_touch("tok_1", t0 + TOUCH_EVERY));
    }

    #[test]
    fn ids_are_random_and_tell_nothing_of_the_token() {
        let (a, b) = (new_token_id(), new_token_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 4 + 16);
        assert!(a.starts_with("tok_") && a[4..].chars().all(|c| c.is_ascii_hexdigit()));
    }
}
