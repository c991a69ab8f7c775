//! Cron schedules on PostgreSQL: a put is a `Write` (in the transaction
//! of `apply`, so a slot's job is written with it); the rest are one
//! statement each.

use super::db::Tx;
use super::pg;
use crate::store::schedule_rows::{self as sql, PutParams};
use crate::store::{Millis, SchedulePut, ScheduleRecord, StoreResult};
use sqlx::Row;

fn q(i: usize) -> String {
    format!("${i}")
}

/// Creates or replaces a schedule (`SchedulePut`).
pub async fn put(tx: &mut Tx, now: Millis, w: SchedulePut) -> StoreResult<ScheduleRecord> {
    let p = PutParams::from(&w);
    match w.rev {
        None => {
            // Two creates for one tenant count one after the other.
            super::tenants::hold(tx, &w.tenant, "schedules").await?;
            let have: i64 = sqlx::query_scalar(sql::COUNT)
                .bind(&w.tenant)
                .fetch_one(&mut **tx)
                .await
                .map_err(pg)?;
            sql::check_room(have)?;
            let done = bind(sqlx::query(&sql::insert(q)), p, now)
                .execute(&mut **tx)
                .await
                .map_err(pg)?;
            if done.rows_affected() == 0 {
                return Err(sql::conflict(&w));
            }
            Ok(w.into_record(1, now, now))
        }
        Some(rev) => {
            let row = bind(sqlx::query(&sql::update(q)), p, now)
                .bind(rev)
                .fetch_optional(&mut **tx)
                .await
                .map_err(pg)?;
            let row: Option<(i64, i64)> = row
                .map(|r| Ok::<_, sqlx::Error>((r.try_get(0)?, r.try_get(1)?)))
                .transpose()
                .map_err(pg)?;
            match row {
                Some((rev, created_at)) => Ok(w.into_record(rev, created_at, now)),
                None => Err(sql::conflict(&w)),
            }
        }
    }
}

fn bind(
    query: sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments>,
    p: PutParams,
    now: Millis,
) -> sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments> {
    query
        .bind(p.tenant)
        .bind(p.name)
        .bind(p.spec)
        .bind(p.enabled)
        .bind(p.due_at)
        .bind(p.next_at)
        .bind(p.last_slot)
        .bind(p.last_job)
        .bind(p.pending)
        .bind(p.pending_slot)
        .bind(p.buffered)
        .bind(p.fired)
        .bind(p.skipped)
        .bind(p.last_error)
        .bind(now)
}
