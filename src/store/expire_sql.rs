//! Expiry, for both backends: which queued jobs are past their
//! `expire_after_ms`, the statement that fails them (its statuses from
//! `Move::expire`), and what the jobs it failed count and report.

use super::dialect::Dialect;
use super::ending_sql::status_in;
use super::exec::{args, Commit, Exec};
use super::records::Expire;
use super::tally::Tally;
use super::transition::Move;
use super::{insert, Millis, StoreError, StoreResult};
use crate::job::{JobError, JobStatus};

/// A job the expiry failed, as its statement answers it: id, tenant, task,
/// queue, attempts.
pub type Gone = (String, String, String, String, i64);

/// A job in a status the expiry fails and past its time (at `now`), in
/// the form of the partial expiry index's predicate, so that both
/// databases read that index.
fn past_its_time(now: &str) -> String {
    let statuses: Vec<String> = Move::expire()
        .from
        .iter()
        .map(|s| format!("status = '{}'", s.as_str()))
        .collect();
    let status = match statuses.as_slice() {
        [one] => one.clone(),
        many => format!("({})", many.join(" OR ")),
    };
    format!("{status} AND expire_after_ms IS NOT NULL AND run_at + expire_after_ms <= {now}")
}

/// Up to ?2 jobs past their time at ?1: id, tenant, task, task_version,
/// queue, attempts (`ExpiringJob::from_row`). SQLite reads them by its
/// expiry index; PostgreSQL in id order, the order `expire` locks in.
pub fn expiring(d: Dialect) -> String {
    let (from, version, attempts, order) = match d {
        Dialect::Sqlite => (
            "jobs INDEXED BY jobs_expiry",
            "task_version",
            "attempts",
            "",
        ),
        Dialect::Postgres | Dialect::PostgresMany => (
            "jobs",
            "task_version::int8",
            "attempts::int8",
            " ORDER BY id",
        ),
    };
    format!(
        "SELECT id, tenant, task, {version}, queue, {attempts} FROM {from} \
         WHERE {}{order} LIMIT {}",
        past_its_time(&d.param(1)),
        d.param(2)
    )
}

/// Fails the jobs of the JSON array ?4 still past their time at ?2, with
/// ?1 the expiry's status and ?3 its error, out of the claim's reach
/// (parked no more), locked in id order and skipping any another process
/// holds. Answers each as a `Gone`.
pub fn expire(d: Dialect) -> String {
    let unparked = match d {
        Dialect::Sqlite => "available = 0, urgent = 0",
        Dialect::Postgres | Dialect::PostgresMany => "urgent = FALSE, paused = FALSE",
    };
    format!(
        "UPDATE jobs SET status = $1, finished_at = $2, error = $3, {unparked} \
         WHERE id IN (SELECT id FROM jobs WHERE id IN ({}) AND {} ORDER BY id{}) AND {} \
         RETURNING id, tenant, task, queue, CAST(attempts AS BIGINT)",
        d.json_texts(4),
        past_its_time("$2"),
        d.skip_locked(),
        status_in(d, Move::expire().from)
    )
}

/// Fails each of `jobs` still queued past its time, with its `on_fail`
/// job, in one transaction; answers how many.
pub async fn run(tx: &mut dyn Exec, now: Millis, jobs: Vec<Expire>) -> StoreResult<u64> {
    let ids = serde_json::to_string(&jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>())
        .map_err(|e| StoreError::Internal(e.to_string()))?;
    let sql = expire(tx.dialect());
    let to = Move::expire().to;
    let gone: Vec<Gone> = tx
        .all(&sql, args![to.as_str(), now, &error()?, &ids])
        .await?;
    let mut tally = Tally::new(now);
    self::tally(&mut tally, &gone);
    let failed: std::collections::HashSet<&str> = gone.iter().map(|g| g.0.as_str()).collect();
    for job in &jobs {
        if let (true, Some(cb)) = (failed.contains(job.id.as_str()), &job.on_fail) {
            insert::callback(tx, now, &job.id, JobStatus::Failed, cb, &mut tally).await?;
        }
    }
    tx.tally(tally).await?;
    Ok(gone.len() as u64)
}

/// The error an expired job ends with, as the statement binds it.
pub fn error() -> StoreResult<String> {
    serde_json::to_string(&JobError::expired())
        .map_err(|e| StoreError::Internal(format!("cannot write an error as JSON: {e}")))
}

/// Counts and reports the jobs the expiry failed.
pub fn tally(tally: &mut Tally, gone: &[Gone]) {
    let mv = Move::expire();
    for (_, tenant, ..) in gone {
        tally.moved(tenant, Some(mv.from[0]), Some(mv.to), 1);
    }
    tally.outbox.expired(gone);
}

impl dyn super::JobStore {
    /// Fails these jobs, each only if it is still queued `expire_after_ms`
    /// after it came due, with kind `expired`, in one write; the `on_fail`
    /// job of each that fails is inserted with it, so exactly once.
    /// Answers how many failed.
    pub async fn job_expire(&self, jobs: Vec<Expire>) -> StoreResult<u64> {
        if jobs.is_empty() {
            return Ok(0);
        }
        let n = self
            .write(Commit::BULK, move |tx, now| Box::pin(run(tx, now, jobs)))
            .await?;
        self.jobs_changed();
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expiry_reads_and_fails_queued_jobs_past_their_time() {
        let lite = expiring(Dialect::Sqlite);
        assert!(
            lite.contains("FROM jobs INDEXED BY jobs_expiry WHERE status = 'queued' AND"),
            "{lite}"
        );
        assert!(
            lite.ends_with("run_at + expire_after_ms <= ?1 LIMIT ?2"),
            "{lite}"
        );
        let pg = expire(Dialect::Postgres);
        assert!(
            pg.contains("WHERE id IN (SELECT jsonb_array_elements_text($4::jsonb)) AND status = 'queued' AND"),
            "{pg}"
        );
        assert!(
            pg.contains("SKIP LOCKED) AND (jobs.status || '') IN ('queued') RETURNING"),
            "{pg}"
        );
        assert!(
            pg.ends_with("RETURNING id, tenant, task, queue, CAST(attempts AS BIGINT)"),
            "{pg}"
        );
    }
}
