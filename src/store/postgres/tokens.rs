//! Tokens on PostgreSQL. Rows hold a token's hash, never its text; a
//! revoke tells every process on the database (NOTIFY on `TOKENS`, sent
//! when it commits).

use super::notify::TOKENS;
use super::{pg, violated, Violation};
use crate::store::token_rows::*;
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::{PgPool, Postgres, Transaction};

pub async fn insert(
    tx: &mut Transaction<'static, Postgres>,
    now: Millis,
    t: NewToken,
) -> StoreResult<()> {
    let admin = t.tenant.is_none();
    if admin {
        sqlx::query("DELETE FROM tokens WHERE admin")
            .execute(&mut **tx)
            .await
            .map_err(pg)?;
    }
    sqlx::query(
        "INSERT INTO tokens (hash, id, tenant, scopes, admin, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (hash) DO UPDATE SET id = excluded.id, tenant = excluded.tenant, \
         scopes = excluded.scopes, admin = excluded.admin, created_at = excluded.created_at, \
         expires_at = excluded.expires_at, last_used_at = NULL",
    )
    .bind(&t.hash)
    .bind(&t.id)
    .bind(&t.tenant)
    .bind(scopes_text(&t.scopes))
    .bind(admin)
    .bind(now)
    .bind(t.expires_at)
    .execute(&mut **tx)
    .await
    .map_err(|e| match violated(&e) {
        Some((Violation::ForeignKey, _)) => StoreError::NotFound,
        _ => pg(e),
    })?;
    Ok(())
}

pub async fn get(pool: &PgPool, hash: &str) -> StoreResult<Option<TokenRecord>> {
    let row: Option<RecordRow> = sqlx::query_as(&format!(
        "SELECT {RECORD_COLUMNS} FROM tokens WHERE hash = $1"
    ))
    .bind(hash)
    .fetch_optional(pool)
    .await
    .map_err(pg)?;
    Ok(row.map(record))
}

pub async fn admin_exists(pool: &PgPool) -> StoreResult<bool> {
    let row: Option<i32> = sqlx::query_scalar("SELECT 1 FROM tokens WHERE admin LIMIT 1")
        .fetch_optional(pool)
        .await
        .map_err(pg)?;
    Ok(row.is_some())
}

pub async fn list(pool: &PgPool) -> StoreResult<Vec<TokenInfo>> {
    // Tenants as bytes, as SQLite orders them.
    let rows: Vec<InfoRow> = sqlx::query_as(&format!(
        "SELECT {INFO_COLUMNS} FROM tokens \
         ORDER BY admin DESC, tenant COLLATE \"C\", created_at, id COLLATE \"C\""
    ))
    .fetch_all(pool)
    .await
    .map_err(pg)?;
    Ok(rows.into_iter().map(info).collect())
}

pub async fn revoke(tx: &mut Transaction<'static, Postgres>, id: &str) -> StoreResult<Revocation> {
    let gone: Option<String> =
        sqlx::query_scalar("DELETE FROM tokens WHERE id = $1 AND NOT admin RETURNING id")
            .bind(id)
            .fetch_optional(&mut **tx)
            .await
            .map_err(pg)?;
    if gone.is_some() {
        // In the delete's transaction: sent when it commits, never without it.
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(TOKENS)
            .bind(id)
            .execute(&mut **tx)
            .await
            .map_err(pg)?;
        return Ok(Revocation::of(true, None));
    }
    let admin: Option<bool> = sqlx::query_scalar("SELECT admin FROM tokens WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    Ok(Revocation::of(false, admin))
}

pub async fn touch(pool: &PgPool, now: Millis, id: &str) -> StoreResult<()> {
    sqlx::query(
        "UPDATE tokens SET last_used_at = $2 \
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)",
    )
    .bind(id)
    .bind(now)
    .execute(pool)
    .await
    .map_err(pg)?;
    Ok(())
}
