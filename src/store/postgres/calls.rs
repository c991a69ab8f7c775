//! A job's orchestration calls on PostgreSQL.

use super::db::Tx;
use super::pg;
use crate::store::call_rows::{self as sql, CallColumns, CallRecord};
use crate::store::{StoreError, StoreResult};
use sqlx::PgPool;

fn records(rows: Vec<CallColumns>) -> StoreResult<Vec<CallRecord>> {
    rows.into_iter()
        .map(|r| CallRecord::try_from(r).map_err(StoreError::Internal))
        .collect()
}

pub async fn get(pool: &PgPool, id: &str, call: &str) -> StoreResult<Option<CallRecord>> {
    let rows: Vec<CallColumns> = sqlx::query_as(&sql::get(["$1", "$2"]))
        .bind(id)
        .bind(call)
        .fetch_all(pool)
        .await
        .map_err(pg)?;
    Ok(records(rows)?.pop())
}

pub async fn list(pool: &PgPool, id: &str) -> StoreResult<Vec<CallRecord>> {
    let rows: Vec<CallColumns> = sqlx::query_as(&sql::list("$1"))
        .bind(id)
        .fetch_all(pool)
        .await
        .map_err(pg)?;
    records(rows)
}

pub async fn parent(pool: &PgPool, id: &str) -> StoreResult<Option<String>> {
    sqlx::query_scalar(&sql::parent("$1"))
        .bind(id)
        .fetch_optional(pool)
        .await
        .map_err(pg)
}

pub async fn callback_of(pool: &PgPool, id: &str) -> StoreResult<Option<CallRecord>> {
    let rows: Vec<CallColumns> = sqlx::query_as(&sql::callback_of("$1"))
        .bind(id)
        .fetch_all(pool)
        .await
        .map_err(pg)?;
    Ok(records(rows)?.pop())
}

pub async fn insert(tx: &mut Tx, c: &CallRecord) -> StoreResult<bool> {
    let n = sqlx::query(&sql::insert(["$1", "$2", "$3", "$4", "$5", "$6"]))
        .bind(&c.job_id)
        .bind(&c.call)
        .bind(c.kind.as_str())
        .bind(&c.task)
        .bind(&c.result)
        .bind(c.created_at)
        .execute(&mut **tx)
        .await
        .map_err(pg)?
        .rows_affected();
    Ok(n == 1)
}
