//! The charts' reads and the queue sampler's write on SQLite; the
//! statements are `series_sql`'s.

use super::{db, wdb};
use crate::store::dialect::Dialect;
use crate::store::series_sql::{self, SeriesRows};
use crate::store::{Millis, StoreResult, UsageExportQuery};
use rusqlite::{params, Connection};
use sqlx::SqliteConnection;

pub async fn read(conn: &mut SqliteConnection, q: &UsageExportQuery) -> StoreResult<SeriesRows> {
    let d = Dialect::Sqlite;
    let one = q.tenant.is_some();
    Ok(SeriesRows {
        started: rows(conn, &series_sql::started(d, one), q).await?,
        ended: rows(conn, &series_sql::ended(d, one), q).await?,
        samples: rows(conn, &series_sql::samples(d, one), q).await?,
    })
}

/// A statement's rows for the range: every one takes from, to, the
/// bucket's width and the tenant, in that order.
async fn rows<T>(
    conn: &mut SqliteConnection,
    sql: &str,
    q: &UsageExportQuery,
) -> StoreResult<Vec<T>>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + Send + Unpin,
{
    sqlx::query_as(sql)
        .bind(q.from)
        .bind(q.to)
        .bind(q.bucket_ms)
        .bind(&q.tenant)
        .fetch_all(conn)
        .await
        .map_err(db)
}

/// This minute's sample, taken on the writer.
pub fn sample(conn: &Connection, now: Millis, keep_ms: i64) -> StoreResult<u64> {
    let at = series_sql::minute_of(now);
    super::shared(conn, series_sql::SAMPLE_CLEAR)?
        .execute(params![at, now - keep_ms])
        .map_err(wdb)?;
    let n = super::shared(conn, series_sql::SAMPLE_TAKE)?
        .execute(params![at, now])
        .map_err(wdb)?;
    Ok(n as u64)
}
