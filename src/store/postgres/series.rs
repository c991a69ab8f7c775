//! The charts' reads and the queue sampler's write on PostgreSQL; the
//! statements are `series_sql`'s.

use super::db::Db;
use super::pg;
use crate::store::dialect::Dialect;
use crate::store::series_sql::{self, SeriesRows};
use crate::store::{StoreResult, UsageExportQuery};

pub async fn read(db: &Db, q: &UsageExportQuery) -> StoreResult<SeriesRows> {
    let d = Dialect::Postgres;
    let one = q.tenant.is_some();
    Ok(SeriesRows {
        started: rows(db, &series_sql::started(d, one), q).await?,
        ended: rows(db, &series_sql::ended(d, one), q).await?,
        samples: rows(db, &series_sql::samples(d, one), q).await?,
    })
}

/// A statement's rows for the range: every one takes from, to, the
/// bucket's width and the tenant, in that order.
async fn rows<T>(db: &Db, sql: &str, q: &UsageExportQuery) -> StoreResult<Vec<T>>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
{
    sqlx::query_as(sql)
        .bind(q.from)
        .bind(q.to)
        .bind(q.bucket_ms)
        .bind(&q.tenant)
        .fetch_all(&db.pool)
        .await
        .map_err(pg)
}

/// This minute's sample, by the database's clock, in one transaction.
pub async fn sample(db: &Db, keep_ms: i64) -> StoreResult<u64> {
    let (mut tx, now) = db.begin().await?;
    let at = series_sql::minute_of(now);
    sqlx::query(series_sql::SAMPLE_CLEAR)
        .bind(at)
        .bind(now - keep_ms)
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    let n = sqlx::query(series_sql::SAMPLE_TAKE)
        .bind(at)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(n.rows_affected())
}
