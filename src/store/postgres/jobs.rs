//! What PostgreSQL does its own way with jobs outside the transactions
//! written once: a batch marked begun in one statement on the claims'
//! connections, and many plain inserts in one (`bulk`) before the rest go
//! one by one (`store::insert`).

use super::exec::PgExec;
use super::pg;
use crate::quota::Quotas;
use crate::store::ending_sql::PG_STATUS;
use crate::store::insert;
use crate::store::records::*;
use crate::store::{Millis, StoreResult};
use sqlx::PgPool;

use super::db::Tx;

/// Marks claimed jobs begun, each under its lease token, in one statement.
pub async fn begin(pool: &PgPool, begun: Vec<(String, String)>) -> StoreResult<()> {
    let (ids, tokens): (Vec<String>, Vec<String>) = begun.into_iter().unzip();
    sqlx::query(&format!(
        "UPDATE jobs SET begun = TRUE FROM unnest($1::text[], $2::text[]) AS b(id, token) \
         WHERE jobs.id = b.id AND jobs.lease_token = b.token AND {PG_STATUS} = 'running'"
    ))
    .bind(ids)
    .bind(tokens)
    .execute(pool)
    .await
    .map_err(pg)?;
    Ok(())
}

/// Inserts jobs: many plain ones in one statement (`bulk`), else each
/// under its own rules and savepoint (`store::insert`).
pub async fn insert(
    tx: &mut Tx,
    now: Millis,
    jobs: Vec<NewJob>,
    defaults: Quotas,
) -> StoreResult<Vec<StoreResult<Inserted>>> {
    if let Some(out) = super::bulk::insert_plain(tx, now, &jobs, &defaults).await? {
        return Ok(out);
    }
    insert::insert(&mut PgExec(tx), now, jobs, &defaults).await
}
