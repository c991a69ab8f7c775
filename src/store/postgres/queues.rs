//! Paused queues on PostgreSQL: a paused queue's queued jobs are parked
//! (`paused`), out of the claim's index, so that claims never read them;
//! resuming puts them back. Parking and unparking go in chunks, one
//! transaction each, so that a queue of a million jobs never holds its
//! rows for long. A job queued again while a pause commits may miss the
//! pause's sweep: the claim's guard (`claim::claimable`) keeps it.

use super::db::Db;
use super::pg;
use crate::store::{queue_rows, StoreResult};

/// Most jobs parked or unparked in one transaction.
const CHUNK: i64 = 2000;

/// Marks the queue paused, then parks its queued jobs; `false` when it
/// was paused already.
pub async fn pause(db: &Db, tenant: &str, queue: &str) -> StoreResult<bool> {
    let (mut tx, now) = db.begin().await?;
    let n = sqlx::query(queue_rows::PAUSE)
        .bind(tenant)
        .bind(queue)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(pg)?
        .rows_affected();
    tx.commit().await.map_err(pg)?;
    while chunk(
        db,
        "UPDATE jobs SET paused = TRUE WHERE id IN (SELECT id FROM jobs \
           WHERE tenant = $1 AND queue = $2 AND status = 'queued' AND NOT paused \
           LIMIT $3 FOR UPDATE) \
         AND EXISTS (SELECT 1 FROM paused_queues WHERE tenant = $1 AND queue = $2)",
        tenant,
        queue,
    )
    .await?
        >= CHUNK
    {}
    Ok(n == 1)
}

/// Marks the queue not paused, then unparks its jobs; `false` when it was
/// not paused.
pub async fn resume(db: &Db, tenant: &str, queue: &str) -> StoreResult<bool> {
    let n = sqlx::query(queue_rows::RESUME)
        .bind(tenant)
        .bind(queue)
        .execute(&db.pool)
        .await
        .map_err(pg)?
        .rows_affected();
    while chunk(
        db,
        "UPDATE jobs SET paused = FALSE WHERE id IN (SELECT id FROM jobs \
           WHERE tenant = $1 AND queue = $2 AND status = 'queued' AND paused \
           LIMIT $3 FOR UPDATE) \
         AND NOT EXISTS (SELECT 1 FROM paused_queues WHERE tenant = $1 AND queue = $2)",
        tenant,
        queue,
    )
    .await?
        >= CHUNK
    {}
    Ok(n == 1)
}

/// One chunk of a park or an unpark, in a transaction of its own.
async fn chunk(db: &Db, sql: &str, tenant: &str, queue: &str) -> StoreResult<i64> {
    let n = sqlx::query(sql)
        .bind(tenant)
        .bind(queue)
        .bind(CHUNK)
        .execute(&db.pool)
        .await
        .map_err(pg)?
        .rows_affected();
    Ok(i64::try_from(n).unwrap_or(i64::MAX))
}

/// Unparks the jobs of queues not paused that a resume cut short left
/// parked; answers how many.
pub async fn tidy(db: &Db) -> StoreResult<u64> {
    let mut total = 0;
    loop {
        let n = sqlx::query(
            "UPDATE jobs SET paused = FALSE WHERE id IN (SELECT id FROM jobs j \
               WHERE status = 'queued' AND paused AND NOT EXISTS ( \
                 SELECT 1 FROM paused_queues p WHERE p.tenant = j.tenant AND p.queue = j.queue) \
               LIMIT $1 FOR UPDATE SKIP LOCKED)",
        )
        .bind(CHUNK)
        .execute(&db.pool)
        .await
        .map_err(pg)?
        .rows_affected();
        total += n;
        if (n as i64) < CHUNK {
            return Ok(total);
        }
    }
}

/// Deletes the throttle keys that hold nothing any more, by the
/// database's clock, a chunk a transaction.
pub async fn throttle_tidy(db: &Db) -> StoreResult<u64> {
    let mut total = 0;
    loop {
        let (mut tx, now) = db.begin().await?;
        let n = sqlx::query(crate::store::throttle::PRUNE_KEYS)
            .bind(now)
            .bind(CHUNK)
            .execute(&mut *tx)
            .await
            .map_err(pg)?
            .rows_affected();
        tx.commit().await.map_err(pg)?;
        total += n;
        if (n as i64) < CHUNK {
            return Ok(total);
        }
    }
}
