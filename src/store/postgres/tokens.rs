//! Tokens on PostgreSQL. Rows hold a token's hash, never its text; a
//! revoke tells every process on the database (NOTIFY on `TOKENS`, sent
//! when it commits).

use super::notify::TOKENS;
use super::{pg, violated, Violation};
use crate::store::dialect::Dialect::Postgres as Pg;
use crate::store::token_rows::{self as sql, *};
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::{PgPool, Postgres, Transaction};
use std::sync::LazyLock;

static LIST: LazyLock<String> = LazyLock::new(|| sql::list(Pg));

pub async fn insert(
    tx: &mut Transaction<'static, Postgres>,
    now: Millis,
    t: NewToken,
) -> StoreResult<()> {
    let admin = t.tenant.is_none();
    if admin {
        sqlx::query(DELETE_ADMIN)
            .execute(&mut **tx)
            .await
            .map_err(pg)?;
    }
    sqlx::query(INSERT)
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
    let row: Option<RecordRow> = sqlx::query_as(GET.as_str())
        .bind(hash)
        .fetch_optional(pool)
        .await
        .map_err(pg)?;
    Ok(row.map(record))
}

pub async fn admin_exists(pool: &PgPool) -> StoreResult<bool> {
    let row: Option<i32> = sqlx::query_scalar(ADMIN_EXISTS)
        .fetch_optional(pool)
        .await
        .map_err(pg)?;
    Ok(row.is_some())
}

pub async fn list(pool: &PgPool) -> StoreResult<Vec<TokenInfo>> {
    let rows: Vec<InfoRow> = sqlx::query_as(LIST.as_str())
        .fetch_all(pool)
        .await
        .map_err(pg)?;
    Ok(rows.into_iter().map(info).collect())
}

pub async fn revoke(tx: &mut Transaction<'static, Postgres>, id: &str) -> StoreResult<Revocation> {
    let gone: Option<String> = sqlx::query_scalar(REVOKE)
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
    let admin: Option<bool> = sqlx::query_scalar(IS_ADMIN)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    Ok(Revocation::of(false, admin))
}

pub async fn touch(pool: &PgPool, now: Millis, id: &str) -> StoreResult<()> {
    sqlx::query(TOUCH)
        .bind(now)
        .bind(id)
        .execute(pool)
        .await
        .map_err(pg)?;
    Ok(())
}
