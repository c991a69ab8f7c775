//! A job's orchestration calls on SQLite: read on a reader, recorded on
//! the writer.

use super::{db, wdb};
use crate::store::call_rows::{self as sql, CallColumns, CallRecord};
use crate::store::{StoreError, StoreResult};
use rusqlite::{params, Connection};
use sqlx::SqliteConnection;

fn records(rows: Vec<CallColumns>) -> StoreResult<Vec<CallRecord>> {
    rows.into_iter()
        .map(|r| CallRecord::try_from(r).map_err(StoreError::Internal))
        .collect()
}

pub async fn get(
    conn: &mut SqliteConnection,
    id: &str,
    call: &str,
) -> StoreResult<Option<CallRecord>> {
    let rows: Vec<CallColumns> = sqlx::query_as(&sql::get(["?1", "?2"]))
        .bind(id)
        .bind(call)
        .fetch_all(conn)
        .await
        .map_err(db)?;
    Ok(records(rows)?.pop())
}

pub async fn list(conn: &mut SqliteConnection, id: &str) -> StoreResult<Vec<CallRecord>> {
    let rows: Vec<CallColumns> = sqlx::query_as(&sql::list("?1"))
        .bind(id)
        .fetch_all(conn)
        .await
        .map_err(db)?;
    records(rows)
}

pub async fn parent(conn: &mut SqliteConnection, id: &str) -> StoreResult<Option<String>> {
    sqlx::query_scalar(&sql::parent("?1"))
        .bind(id)
        .fetch_optional(conn)
        .await
        .map_err(db)
}

pub async fn callback_of(conn: &mut SqliteConnection, id: &str) -> StoreResult<Option<CallRecord>> {
    let rows: Vec<CallColumns> = sqlx::query_as(&sql::callback_of("?1"))
        .bind(id)
        .fetch_all(conn)
        .await
        .map_err(db)?;
    Ok(records(rows)?.pop())
}

pub fn insert(conn: &Connection, c: &CallRecord) -> StoreResult<bool> {
    let n = conn
        .prepare_cached(&sql::insert(["?1", "?2", "?3", "?4", "?5", "?6"]))
        .and_then(|mut s| {
            s.execute(params![
                c.job_id,
                c.call,
                c.kind.as_str(),
                c.task,
                c.result,
                c.created_at
            ])
        })
        .map_err(wdb)?;
    Ok(n == 1)
}
