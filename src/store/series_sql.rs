//! The statements behind the dashboard's charts, for both backends: jobs
//! started (with how long each waited to start, as a histogram), jobs
//! ended, and the queue samples the sampler keeps. Each figure is read
//! from the job records as they stand, in buckets `?3` ms wide from the
//! epoch, for one tenant (`?4`, `one`) or, when it is NULL, every one.

use super::dialect::Dialect;
use super::exec::args;

/// The upper edges (ms, exclusive) of the classes a job's wait to start is
/// counted in; past the last is one more class, open above. Close steps
/// where a queue usually is (milliseconds), wide ones where it is stuck.
pub const WAIT_EDGES_MS: [i64; 18] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 300_000,
    900_000, 3_600_000,
];

/// The class of a wait, by [`WAIT_EDGES_MS`].
pub fn wait_class(d: Dialect, wait: &str) -> String {
    let arms: String = WAIT_EDGES_MS
        .iter()
        .enumerate()
        .map(|(i, edge)| format!("WHEN {wait} < {edge} THEN {i} "))
        .collect();
    let int8 = match d {
        Dialect::Sqlite => "",
        Dialect::Postgres | Dialect::PostgresMany => "::int8",
    };
    format!("(CASE {arms}ELSE {} END){int8}", WAIT_EDGES_MS.len())
}

/// Jobs whose first attempt started in [?1, ?2): bucket, wait class and
/// count. A job waited from when it was due: its `run_at`, unless a retry
/// has moved that past its first start (then its creation).
pub fn started(d: Dialect, one: bool) -> String {
    let (from, to, width) = (d.param(1), d.param(2), d.param(3));
    let tenant = d.tenant_is("tenant", 4, one);
    let wait = "(started_at - CASE WHEN run_at <= started_at AND run_at > created_at \
                THEN run_at ELSE created_at END)";
    format!(
        "SELECT (started_at / {width}) * {width} AS bucket, {class} AS class, count(*) \
         FROM jobs WHERE started_at >= {from} AND started_at < {to} \
         AND {tenant} GROUP BY 1, 2",
        class = wait_class(d, wait),
    )
}

/// Jobs that completed or failed in [?1, ?2): bucket, status and count.
pub fn ended(d: Dialect, one: bool) -> String {
    let (from, to, width) = (d.param(1), d.param(2), d.param(3));
    let tenant = d.tenant_is("tenant", 4, one);
    format!(
        "SELECT (finished_at / {width}) * {width} AS bucket, status, count(*) \
         FROM jobs WHERE finished_at >= {from} AND finished_at < {to} \
         AND status IN ('completed', 'failed') \
         AND {tenant} GROUP BY 1, 2"
    )
}

/// The queue samples taken in [?1, ?2): bucket, tenant, queue, the
/// deepest it was and the longest its oldest job had waited.
pub fn samples(d: Dialect, one: bool) -> String {
    let (from, to, width) = (d.param(1), d.param(2), d.param(3));
    let tenant = d.tenant_is("tenant", 4, one);
    format!(
        "SELECT (at / {width}) * {width} AS bucket, tenant, queue, max(depth), max(oldest_wait_ms) \
         FROM queue_samples WHERE at >= {from} AND at < {to} \
         AND {tenant} GROUP BY 1, 2, 3"
    )
}

/// How wide a queue sample's minute is.
pub const SAMPLE_MS: i64 = 60_000;

/// The start of the minute `t` falls in.
pub fn minute_of(t: i64) -> i64 {
    t.div_euclid(SAMPLE_MS) * SAMPLE_MS
}

/// Clears the minute a sample is about to be taken in ($1) and every
/// sample from before $2.
pub const SAMPLE_CLEAR: &str = "DELETE FROM queue_samples WHERE at = $1 OR at < $2";

/// Takes a sample in minute $1 at $2: each queue's jobs due and not
/// started, and how long the oldest of them has waited.
pub const SAMPLE_TAKE: &str =
    "INSERT INTO queue_samples (at, tenant, queue, depth, oldest_wait_ms) \
     SELECT $1, tenant, queue, count(*), $2 - min(run_at) FROM jobs \
     WHERE status = 'queued' AND run_at <= $2 GROUP BY tenant, queue \
     ON CONFLICT (at, tenant, queue) DO UPDATE \
     SET depth = excluded.depth, oldest_wait_ms = excluded.oldest_wait_ms";

/// A row of [`started`]: bucket, wait class, jobs.
pub type StartedRow = (i64, i64, i64);
/// A row of [`ended`]: bucket, status, jobs.
pub type EndedRow = (i64, String, i64);
/// A row of [`samples`]: bucket, tenant, queue, depth, oldest wait (ms).
pub type SampleRow = (i64, String, String, i64, i64);

/// What the charts read for one range, besides the usage lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeriesRows {
    pub started: Vec<StartedRow>,
    pub ended: Vec<EndedRow>,
    pub samples: Vec<SampleRow>,
}

impl dyn super::JobStore {
    /// What the dashboard's charts read for the export's range and buckets:
    /// jobs started (by how long they waited) and ended, and queue samples.
    pub async fn series(&self, q: super::UsageExportQuery) -> super::StoreResult<SeriesRows> {
        let one = q.tenant.is_some();
        let mut c = self.read().await?;
        let d = c.dialect();
        // Every statement takes from, to, the bucket's width and the tenant.
        let a = args![q.from, q.to, q.bucket_ms, &q.tenant];
        Ok(SeriesRows {
            started: c.all(&started(d, one), a).await?,
            ended: c.all(&ended(d, one), a).await?,
            samples: c.all(&samples(d, one), a).await?,
        })
    }

    /// What attempts cost, by tenant, bucket, task and version, summed
    /// from the attempt records, with the jobs the result cache completed.
    pub async fn usage_export(
        &self,
        q: super::UsageExportQuery,
    ) -> super::StoreResult<Vec<super::UsageLine>> {
        use super::usage_sql;
        let one = q.tenant.is_some();
        let mut c = self.read().await?;
        let d = c.dialect();
        let a = args![q.from, q.to, q.bucket_ms, &q.tenant];
        let attempts = c.all(&usage_sql::attempts(d, one), a).await?;
        let hits = c.all(&usage_sql::cache_hits(d, one), a).await?;
        Ok(super::tenants::usage_lines(attempts, hits))
    }

    /// Samples every queue's depth and oldest wait into this minute's row
    /// (a later sample in the minute replaces it) and deletes samples older
    /// than `keep_ms`; answers how many queues had jobs waiting.
    pub async fn queue_sample(&self, keep_ms: i64) -> super::StoreResult<u64> {
        self.write(super::exec::Commit::LAZY, move |tx, now| {
            Box::pin(async move {
                let at = minute_of(now);
                tx.execute(SAMPLE_CLEAR, args![at, now - keep_ms]).await?;
                Ok(tx.execute(SAMPLE_TAKE, args![at, now]).await?)
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_classed_by_the_edges_in_both_dialects() {
        let sqlite = wait_class(Dialect::Sqlite, "w");
        assert!(
            sqlite.starts_with("(CASE WHEN w < 1 THEN 0 WHEN w < 2 THEN 1 "),
            "{sqlite}"
        );
        assert!(
            sqlite.ends_with("WHEN w < 3600000 THEN 17 ELSE 18 END)"),
            "{sqlite}"
        );
        assert!(wait_class(Dialect::Postgres, "w").ends_with("ELSE 18 END)::int8"));
        assert!(started(Dialect::Postgres, true).contains("AND tenant = $4::text GROUP"));
        assert!(started(Dialect::Sqlite, true).contains("AND tenant = ?4 GROUP"));
        assert!(ended(Dialect::Sqlite, false).contains("AND ?4 IS NULL GROUP"));
        assert!(crate::store::dialect::numbered_in_order(SAMPLE_TAKE));
        assert!(crate::store::dialect::numbered_in_order(SAMPLE_CLEAR));
    }
}
