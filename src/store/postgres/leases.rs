//! Named leases on PostgreSQL: taken, renewed and dropped in a transaction
//! of the caller's, by the database's clock, so that many processes agree
//! on who holds each.

use super::db::Tx;
use super::pg;
use crate::store::lease_sql;
use crate::store::{Lease, LeaseRow, Millis, StoreResult};
use sqlx::PgPool;

/// Takes or renews the lease until `expires_at` (`JobStore::lease_take`).
pub async fn take(
    tx: &mut Tx,
    now: Millis,
    name: &str,
    holder: &str,
    expires_at: Millis,
) -> StoreResult<Option<Lease>> {
    let row: Option<LeaseRow> = sqlx::query_as(&lease_sql::take(["$1", "$2", "$3", "$4"]))
        .bind(name)
        .bind(holder)
        .bind(now)
        .bind(expires_at)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    Ok(row.map(Lease::from))
}

/// Gives the lease up, if `holder` holds it (`JobStore::lease_drop`).
pub async fn drop(tx: &mut Tx, now: Millis, name: &str, holder: &str) -> StoreResult<bool> {
    let done = sqlx::query(&lease_sql::drop(["$1", "$2", "$3"]))
        .bind(name)
        .bind(holder)
        .bind(now)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    Ok(done.rows_affected() == 1)
}

/// The lease as it stands, held or lapsed (`JobStore::lease_get`).
pub async fn get(pool: &PgPool, name: &str) -> StoreResult<Option<Lease>> {
    let row: Option<LeaseRow> = sqlx::query_as(&lease_sql::get("$1"))
        .bind(name)
        .fetch_optional(pool)
        .await
        .map_err(pg)?;
    Ok(row.map(Lease::from))
}
