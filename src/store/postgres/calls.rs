//! A job's orchestration calls on PostgreSQL.

use super::db::Tx;
use super::pg;
use crate::store::call_rows::{self as sql, CallRecord};
use crate::store::StoreResult;

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
