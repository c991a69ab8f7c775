//! Tokens' statements and transactions for both backends (the records are
//! the core's, `records::token`). A revoke tells every process on the
//! database when it commits.

use super::dialect::Dialect;
use super::exec::{args, Commit, Exec};
use super::records::{NewToken, Revocation, TokenInfo, TokenRecord};
use super::{JobStore, Millis, Scope, StoreError, StoreResult};
use crate::store::exec::DbError;
use std::sync::LazyLock;

/// The columns a check reads, in the order `record` takes them.
pub const RECORD_COLUMNS: &str = "id, tenant, scopes, admin, expires_at";
/// The columns a list reads, in the order `info` takes them.
pub const INFO_COLUMNS: &str = "id, tenant, scopes, admin, created_at, last_used_at, expires_at";

/// The admin token is one: minting one replaces the one before.
pub const DELETE_ADMIN: &str = "DELETE FROM tokens WHERE admin";
/// A token minted again (the same hash) is a new token: nothing of the
/// old row stays.
pub const INSERT: &str = "INSERT INTO tokens (hash, id, tenant, scopes, admin, created_at, \
     expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
     ON CONFLICT (hash) DO UPDATE SET id = excluded.id, tenant = excluded.tenant, \
     scopes = excluded.scopes, admin = excluded.admin, created_at = excluded.created_at, \
     expires_at = excluded.expires_at, last_used_at = NULL";
pub const ADMIN_EXISTS: &str = "SELECT 1 FROM tokens WHERE admin LIMIT 1";
pub static GET: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {RECORD_COLUMNS} FROM tokens WHERE hash = $1"));
/// Every token, the admin's first, then by tenant as bytes.
pub fn list(d: Dialect) -> String {
    let bytes = d.bytewise();
    format!(
        "SELECT {INFO_COLUMNS} FROM tokens \
         ORDER BY admin DESC, tenant{bytes}, created_at, id{bytes}"
    )
}
/// The admin token is revoked only by minting another.
pub const REVOKE: &str = "DELETE FROM tokens WHERE id = $1 AND NOT admin RETURNING id";
pub const IS_ADMIN: &str = "SELECT admin FROM tokens WHERE id = $1";
/// A use, recorded unless a later one was.
pub const TOUCH: &str = "UPDATE tokens SET last_used_at = $1 \
     WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)";

/// Where a revoke is told to every process on the database.
pub const REVOKED_CHANNEL: &str = "taskbox_tokens";

/// A row of `RECORD_COLUMNS`.
pub type RecordRow = (String, Option<String>, String, bool, Option<Millis>);
/// A row of `INFO_COLUMNS`.
pub type InfoRow = (
    String,
    Option<String>,
    String,
    bool,
    Millis,
    Option<Millis>,
    Option<Millis>,
);

/// Scopes as a row keeps them: names separated by spaces.
pub fn scopes_text(scopes: &[Scope]) -> String {
    let names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    names.join(" ")
}

/// Scopes as a row keeps them, read back.
pub fn scopes_from(text: &str) -> Vec<Scope> {
    // A scope this version does not know grants nothing.
    text.split_whitespace().filter_map(Scope::parse).collect()
}

pub fn record((id, tenant, scopes, admin, expires_at): RecordRow) -> TokenRecord {
    TokenRecord {
        id,
        tenant,
        scopes: scopes_from(&scopes),
        admin,
        expires_at,
    }
}

pub fn info(
    (id, tenant, scopes, admin, created_at, last_used_at, expires_at): InfoRow,
) -> TokenInfo {
    TokenInfo {
        id,
        tenant,
        scopes: scopes_from(&scopes),
        admin,
        created_at,
        last_used_at,
        expires_at,
    }
}

impl dyn JobStore {
    /// Stores a token's hash; `tenant: None` with `admin` is the admin token,
    /// which replaces any earlier one.
    pub async fn token_insert(&self, t: NewToken) -> StoreResult<()> {
        self.write(Commit::PROMPT, move |tx, now| Box::pin(insert(tx, now, t)))
            .await
    }

    /// The token of this hash, expired or not (the caller decides by its
    /// `expires_at`).
    pub async fn token_get(&self, hash: &str) -> StoreResult<Option<TokenRecord>> {
        let row: Option<RecordRow> = self.read().await?.optional(&GET, args![hash]).await?;
        Ok(row.map(record))
    }

    /// Whether an admin token exists.
    pub async fn token_admin_exists(&self) -> StoreResult<bool> {
        let one: Option<i32> = self.read().await?.scalar(ADMIN_EXISTS, &[]).await?;
        Ok(one.is_some())
    }

    /// Every token, expired ones too: the admin's first, then by tenant
    /// (as bytes), when made and id. Never a hash.
    pub async fn token_list(&self) -> StoreResult<Vec<TokenInfo>> {
        let mut c = self.read().await?;
        let rows: Vec<InfoRow> = c.all(&list(c.dialect()), &[]).await?;
        Ok(rows.into_iter().map(info).collect())
    }

    /// Deletes a tenant's token by id. The admin token is never deleted
    /// here (`Revocation::Admin`). Where other processes share the store
    /// (PostgreSQL), they are told (`Signal::TokenRevoked`) when it commits.
    pub async fn token_revoke(&self, id: &str) -> StoreResult<Revocation> {
        let id = id.to_owned();
        self.write(Commit::PROMPT, move |tx, _| Box::pin(revoke(tx, id)))
            .await
    }

    /// Records that the token was used now (by the store's clock); a later
    /// time already recorded is kept. Nothing when no token has that id.
    pub async fn token_touch(&self, id: &str) -> StoreResult<()> {
        let id = id.to_owned();
        // Nobody waits for it, and a use lost in a crash costs nothing.
        self.write(Commit::LAZY, move |tx, now| {
            Box::pin(async move {
                tx.execute(TOUCH, args![now, &id]).await?;
                Ok(())
            })
        })
        .await
    }
}

async fn insert(tx: &mut dyn Exec, now: Millis, t: NewToken) -> StoreResult<()> {
    let admin = t.tenant.is_none();
    if admin {
        tx.execute(DELETE_ADMIN, &[]).await?;
    }
    let scopes = scopes_text(&t.scopes);
    let a = args![&t.hash, &t.id, &t.tenant, &scopes, admin, now, t.expires_at];
    match tx.execute(INSERT, a).await {
        Ok(_) => Ok(()),
        Err(DbError::ForeignKey(_)) => Err(StoreError::NotFound),
        Err(e) => Err(e.into()),
    }
}

async fn revoke(tx: &mut dyn Exec, id: String) -> StoreResult<Revocation> {
    let gone: Option<String> = tx.scalar(REVOKE, args![&id]).await?;
    if gone.is_some() {
        tx.notify(REVOKED_CHANNEL, &id).await?;
        return Ok(Revocation::of(true, None));
    }
    let admin: Option<bool> = tx.scalar(IS_ADMIN, args![&id]).await?;
    Ok(Revocation::of(false, admin))
}
