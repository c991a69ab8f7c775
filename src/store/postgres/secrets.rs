//! Secrets on PostgreSQL. The rows hold sealed bytes only.

use super::db::Db;
use super::pg;
use crate::store::secret_rows::*;
use crate::store::StoreResult;
use sqlx::PgPool;

/// Replaces the tenant's secret of that name (its version one more), or
/// makes it at version 1 within `MAX_SECRETS`; `true` when it is new.
pub async fn put(db: &Db, s: NewSecret) -> StoreResult<(SecretRecord, bool)> {
    let (mut tx, now) = db.begin().await?;
    // Puts of one tenant's secrets one after the other: two new names at
    // once count each other, and two puts of one new name make one row.
    super::tenants::hold(&mut tx, &s.tenant, "secrets").await?;
    let replaced: Option<(i64, i64)> = sqlx::query_as(REPLACE)
        .bind(&s.nonce)
        .bind(&s.ciphertext)
        .bind(now)
        .bind(&s.tenant)
        .bind(&s.name)
        .fetch_optional(&mut *tx)
        .await
        .map_err(pg)?;
    if replaced.is_none() {
        let have: i64 = sqlx::query_scalar(COUNT)
            .bind(&s.tenant)
            .fetch_one(&mut *tx)
            .await
            .map_err(pg)?;
        check_room(have)?;
        sqlx::query(INSERT)
            .bind(&s.tenant)
            .bind(&s.name)
            .bind(&s.nonce)
            .bind(&s.ciphertext)
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(pg)?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(put_record(s, now, replaced))
}

pub async fn list(pool: &PgPool, tenant: Option<&str>) -> StoreResult<Vec<SecretRecord>> {
    sqlx::query_as(&crate::store::secret_rows::list(tenant.is_some()))
        .bind(tenant)
        .fetch_all(pool)
        .await
        .map_err(pg)
}

pub async fn delete(pool: &PgPool, tenant: &str, name: &str) -> StoreResult<bool> {
    let n = sqlx::query(DELETE)
        .bind(tenant)
        .bind(name)
        .execute(pool)
        .await
        .map_err(pg)?
        .rows_affected();
    Ok(n == 1)
}

/// The sealed rows of those of `names` the tenant has, by name.
pub async fn get_many(
    pool: &PgPool,
    tenant: &str,
    names: &[String],
) -> StoreResult<Vec<SealedSecret>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    sqlx::query_as(&format!(
        "SELECT {SEALED_COLUMNS} FROM secrets WHERE tenant = $1 AND name = ANY($2::text[]) \
         ORDER BY name"
    ))
    .bind(tenant)
    .bind(names)
    .fetch_all(pool)
    .await
    .map_err(pg)
}
