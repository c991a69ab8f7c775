//! Queues, for both backends: their depths, and pauses. A paused queue's
//! queued jobs are parked, out of the claim's index, so that claims never
//! read them; resuming puts them back. Parking and unparking go in chunks,
//! one write each, so that a queue of a million jobs never holds the
//! writer (or its rows) for long. What a chunked pause misses (a job
//! queued again between its chunks) the claim's guard keeps or parks.
//! How a job is parked is each backend's own (its claim index differs):
//! SQLite sets `available = 2`, PostgreSQL `paused`.

use super::dialect::Dialect;
use super::exec::{args, Commit};
use super::rows::{counts_from, depths_from, queues_from, QueueDepthRow, COUNTS_SQL, DEPTHS_SQL};
use super::{JobStore, QueueDepth, StoreResult};
use crate::job::JobStatus;

/// Most jobs parked or unparked in one write.
pub const CHUNK: i64 = 2000;

/// Marks a queue paused ($1 tenant, $2 queue, $3 now); no row when it was.
pub const PAUSE: &str = "INSERT INTO paused_queues (tenant, queue, paused_at) VALUES ($1, $2, $3) \
     ON CONFLICT DO NOTHING";

/// Marks a queue not paused ($1 tenant, $2 queue); no row when it was not.
pub const RESUME: &str = "DELETE FROM paused_queues WHERE tenant = $1 AND queue = $2";

/// A tenant's jobs (`one`; else every tenant's, $1 NULL) by queue and
/// status, with each queue's oldest due job's due time ($1 tenant, $2
/// now).
pub fn depths(one: bool) -> String {
    format!(
        "SELECT tenant, queue, status, count(*), \
           min(CASE WHEN status = 'queued' AND run_at <= $2 THEN run_at END) \
         FROM jobs WHERE {} GROUP BY tenant, queue, status ORDER BY tenant, queue",
        super::whose::tenant_is(one, "$1")
    )
}

/// The paused queues of a tenant (`one`; else every tenant's, $1 NULL):
/// tenant and queue.
pub fn paused(one: bool) -> String {
    format!(
        "SELECT tenant, queue FROM paused_queues WHERE {} ORDER BY tenant, queue",
        super::whose::tenant_is(one, "$1")
    )
}

/// A tenant's paused queues by name ($1 tenant).
pub const PAUSED: &str = "SELECT queue FROM paused_queues WHERE tenant = $1 ORDER BY queue";

/// Parks up to `$3` of tenant `$1`'s queue `$2`'s queued jobs while it is
/// paused (a resume in between stops it). SQLite reads claimable ones in
/// the claim's index, scheduled ones in the scheduler's.
fn park(d: Dialect) -> Vec<String> {
    match d {
        Dialect::Sqlite => [("jobs_available", 1), ("jobs_scheduled", 0)]
            .iter()
            .map(|(index, available)| {
                format!(
                    "UPDATE jobs SET available = 2 WHERE rowid IN ( \
                       SELECT rowid FROM jobs INDEXED BY {index} \
                       WHERE status = 'queued' AND available = {available} AND tenant = $1 \
                         AND queue = $2 LIMIT $3) \
                     AND EXISTS (SELECT 1 FROM paused_queues WHERE tenant = $1 AND queue = $2)"
                )
            })
            .collect(),
        Dialect::Postgres | Dialect::PostgresMany => vec![
            "UPDATE jobs SET paused = TRUE WHERE id IN (SELECT id FROM jobs \
               WHERE tenant = $1 AND queue = $2 AND status = 'queued' AND NOT paused \
               LIMIT $3 FOR UPDATE) \
             AND EXISTS (SELECT 1 FROM paused_queues WHERE tenant = $1 AND queue = $2)"
                .into(),
        ],
    }
}

/// Unparks up to `$3` of the queue's parked jobs unless it was paused
/// again (`$4` now: those due are claimable at once).
fn unpark(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => {
            "UPDATE jobs SET available = CASE WHEN run_at <= $4 THEN 1 ELSE 0 END \
             WHERE rowid IN (SELECT rowid FROM jobs INDEXED BY jobs_parked \
               WHERE tenant = $1 AND queue = $2 AND status = 'queued' AND available = 2 \
               LIMIT $3) \
             AND NOT EXISTS (SELECT 1 FROM paused_queues WHERE tenant = $1 AND queue = $2)"
        }
        Dialect::Postgres | Dialect::PostgresMany => {
            "UPDATE jobs SET paused = FALSE WHERE id IN (SELECT id FROM jobs \
               WHERE tenant = $1 AND queue = $2 AND status = 'queued' AND paused \
               LIMIT $3 FOR UPDATE) \
             AND NOT EXISTS (SELECT 1 FROM paused_queues WHERE tenant = $1 AND queue = $2)"
        }
    }
}

/// Unparks up to `$2` parked jobs whose queue is not paused (a resume cut
/// short by a crash left them); `$1` now. Reads every parked job.
fn tidy(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => {
            "UPDATE jobs SET available = CASE WHEN run_at <= $1 THEN 1 ELSE 0 END \
             WHERE rowid IN (SELECT rowid FROM jobs j INDEXED BY jobs_parked \
               WHERE status = 'queued' AND available = 2 AND NOT EXISTS ( \
                 SELECT 1 FROM paused_queues p WHERE p.tenant = j.tenant AND p.queue = j.queue) \
               LIMIT $2)"
        }
        Dialect::Postgres | Dialect::PostgresMany => {
            "UPDATE jobs SET paused = FALSE WHERE id IN (SELECT id FROM jobs j \
               WHERE status = 'queued' AND paused AND NOT EXISTS ( \
                 SELECT 1 FROM paused_queues p WHERE p.tenant = j.tenant AND p.queue = j.queue) \
               LIMIT $2 FOR UPDATE SKIP LOCKED)"
        }
    }
}

impl dyn JobStore {
    /// A tenant's queues (those it has jobs on or paused; `None`: every
    /// tenant's), by tenant and name: their jobs by status and the oldest
    /// due queued job. Reads the tenant's jobs (every job, for `None`).
    pub async fn queue_list(&self, tenant: Option<&str>) -> StoreResult<Vec<QueueDepth>> {
        let one = tenant.is_some();
        let now = self.now();
        let mut c = self.read().await?;
        let rows: Vec<QueueDepthRow> = c.all(&depths(one), args![tenant, now]).await?;
        let paused: Vec<(String, String)> = c.all(&paused(one), args![tenant]).await?;
        queues_from(rows, paused)
    }

    /// Jobs not ended, of every tenant, by queue and status (queued,
    /// running, waiting), what a metrics scrape shows. Reads every
    /// unfinished job.
    pub async fn job_depths(&self) -> StoreResult<Vec<(String, JobStatus, u64)>> {
        let rows: Vec<(String, String, i64)> = self.read().await?.all(DEPTHS_SQL, &[]).await?;
        depths_from(rows)
    }

    /// Every job by status.
    pub async fn job_counts(&self) -> StoreResult<Vec<(JobStatus, u64)>> {
        let rows: Vec<(String, i64)> = self.read().await?.all(COUNTS_SQL, &[]).await?;
        counts_from(rows)
    }

    /// Pauses a tenant's queue: from when this answers, none of its jobs
    /// is claimed (those running go on) until it is resumed; enqueue
    /// still works. `false`: it was paused already.
    pub async fn queue_pause(&self, tenant: &str, queue: &str) -> StoreResult<bool> {
        let newly = self
            .queue_chunk(Commit::PROMPT, PAUSE, tenant, queue)
            .await?
            == 1;
        // Not durable: a park lost to a crash is made by the claim that
        // meets the job.
        loop {
            let (t, q) = (tenant.to_owned(), queue.to_owned());
            let parked = self
                .write(Commit::LAZY, move |tx, _| {
                    Box::pin(async move {
                        let mut parked = 0;
                        for sql in park(tx.dialect()) {
                            let want = CHUNK - parked;
                            if want <= 0 {
                                break;
                            }
                            let n = tx.execute(&sql, args![&t, &q, want]).await?;
                            parked += i64::try_from(n).unwrap_or(i64::MAX);
                        }
                        Ok(parked)
                    })
                })
                .await?;
            if parked < CHUNK {
                return Ok(newly);
            }
        }
    }

    /// Resumes a paused queue: its jobs are claimed again. `false`: it was
    /// not paused.
    pub async fn queue_resume(&self, tenant: &str, queue: &str) -> StoreResult<bool> {
        let was = self
            .queue_chunk(Commit::PROMPT, RESUME, tenant, queue)
            .await?
            == 1;
        // Durable chunks; what a crash leaves parked, `queue_tidy` unparks.
        loop {
            let (t, q) = (tenant.to_owned(), queue.to_owned());
            let n = self
                .write(Commit::BULK, move |tx, now| {
                    Box::pin(async move {
                        let sql = unpark(tx.dialect());
                        Ok(tx.execute(sql, args![&t, &q, CHUNK, now]).await?)
                    })
                })
                .await?;
            if (n as i64) < CHUNK {
                self.jobs_changed();
                return Ok(was);
            }
        }
    }

    /// Puts back in line the jobs of queues no longer paused that a resume
    /// cut short (by a crash) left parked; answers how many. Reads every
    /// parked job: for maintenance, now and then.
    pub async fn queue_tidy(&self) -> StoreResult<u64> {
        let n = self.chunks(Commit::BULK, tidy).await?;
        if n > 0 {
            self.jobs_changed();
        }
        Ok(n)
    }

    /// Deletes the throttle keys that hold nothing any more (every slot
    /// free, no job waiting on one); answers how many.
    pub async fn throttle_tidy(&self) -> StoreResult<u64> {
        self.chunks(Commit::LAZY, |_| super::throttle::PRUNE_KEYS)
            .await
    }

    /// One statement of tenant `$1`'s queue `$2` (and `$3` now).
    async fn queue_chunk(
        &self,
        how: Commit,
        sql: &'static str,
        tenant: &str,
        queue: &str,
    ) -> StoreResult<u64> {
        let (t, q) = (tenant.to_owned(), queue.to_owned());
        self.write(how, move |tx, now| {
            Box::pin(async move { Ok(tx.execute(sql, args![&t, &q, now]).await?) })
        })
        .await
    }

    /// Runs `sql` (`$1` now, `$2` the chunk) a write at a time until it
    /// changes less than a chunk; answers how many rows it changed.
    async fn chunks(&self, how: Commit, sql: fn(Dialect) -> &'static str) -> StoreResult<u64> {
        let mut total = 0;
        loop {
            let n = self
                .write(how, move |tx, now| {
                    Box::pin(
                        async move { Ok(tx.execute(sql(tx.dialect()), args![now, CHUNK]).await?) },
                    )
                })
                .await?;
            total += n;
            if (n as i64) < CHUNK {
                return Ok(total);
            }
        }
    }
}
