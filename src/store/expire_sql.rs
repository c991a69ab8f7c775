//! Expiry, for both backends: which queued jobs are past their
//! `expire_after_ms`, the statement that fails them (its statuses from
//! `Move::expire`), and what the jobs it failed count and report.

use super::dialect::Dialect;
use super::ending_sql::status_in;
use super::tally::Tally;
use super::transition::Move;
use super::{StoreError, StoreResult};
use crate::job::JobError;

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

/// Fails the jobs of ?4 still past their time at ?2, with ?1 the expiry's
/// status and ?3 its error, out of the claim's reach (parked no more):
/// SQLite one id at a time on its one writer, PostgreSQL an array of them,
/// locked in id order and skipping any another process holds. Answers
/// each as a `Gone`.
pub fn expire(d: Dialect) -> String {
    let (unparked, which, attempts) = match d {
        Dialect::Sqlite => (
            "available = 0, urgent = 0",
            format!("id = ?4 AND {}", past_its_time("?2")),
            "attempts",
        ),
        Dialect::Postgres | Dialect::PostgresMany => (
            "urgent = FALSE, paused = FALSE",
            format!(
                "id IN (SELECT id FROM jobs WHERE id = ANY($4) AND {} \
                 ORDER BY id FOR UPDATE SKIP LOCKED) AND {}",
                past_its_time("$2"),
                status_in(d, Move::expire().from)
            ),
            "attempts::int8",
        ),
    };
    format!(
        "UPDATE jobs SET status = {}, finished_at = {}, error = {}, {unparked} \
         WHERE {which} RETURNING id, tenant, task, queue, {attempts}",
        d.param(1),
        d.param(2),
        d.param(3)
    )
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
            pg.contains("WHERE id = ANY($4) AND status = 'queued' AND"),
            "{pg}"
        );
        assert!(
            pg.contains("SKIP LOCKED) AND (jobs.status || '') IN ('queued') RETURNING"),
            "{pg}"
        );
        assert!(
            pg.ends_with("RETURNING id, tenant, task, queue, attempts::int8"),
            "{pg}"
        );
    }
}
