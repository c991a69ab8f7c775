//! The statements of an enqueue's rules, for both backends: the job an
//! idempotency key already made, the unfinished holder of a unique key,
//! the finished jobs of one, and the jobs a superseding enqueue cancels.
//! Which statuses each reads or writes comes from the one transition
//! table (`job.rs`, `store::transition`), never from a list typed here.

use super::dialect::Dialect;
use crate::job::JobStatus;

/// `'a', 'b', …` for the statuses that pass `keep`, in the table's order
/// (the order the partial indexes' predicates name them in).
fn statuses(keep: impl Fn(JobStatus) -> bool) -> String {
    JobStatus::ALL
        .into_iter()
        .filter(|s| keep(*s))
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The job of a tenant's idempotency key (?1 tenant, ?2 key), as the
/// backend's `columns`.
pub fn idempotent(d: Dialect, columns: &str) -> String {
    format!(
        "SELECT {columns} FROM jobs WHERE tenant = {} AND idempotency_key = {}",
        d.param(1),
        d.param(2)
    )
}

/// The unfinished job holding a tenant's unique key (?1 tenant, ?2 key):
/// it reads the unique index, whose predicate names the same statuses.
pub fn unique_holder(d: Dialect, columns: &str) -> String {
    format!(
        "SELECT {columns} FROM jobs WHERE tenant = {} AND unique_key = {} AND status IN ({})",
        d.param(1),
        d.param(2),
        statuses(|s| !s.is_terminal())
    )
}

/// Whether any finished job had the key (?1 tenant, ?2 key), and whether
/// one of them completed.
pub fn unique_finished(d: Dialect) -> String {
    let completed = JobStatus::Completed.as_str();
    let any_completed = match d {
        Dialect::Sqlite => format!("coalesce(max(status = '{completed}'), 0)"),
        Dialect::Postgres | Dialect::PostgresMany => {
            format!("coalesce(bool_or(status = '{completed}'), false)")
        }
    };
    format!(
        "SELECT count(*) > 0, {any_completed} FROM jobs WHERE tenant = {} AND unique_key = {} \
         AND status IN ({})",
        d.param(1),
        d.param(2),
        statuses(JobStatus::is_terminal)
    )
}

/// Cancels a tenant's jobs of one concurrency key in one of the cancel's
/// from-statuses (`Move::cancel`): ?1 the cancel's status, ?2 now, ?3 the
/// error, ?4 tenant, ?5 key, ?6 the from-status. Answers each job's id,
/// task, queue and attempts, for its event.
pub fn supersede(d: Dialect) -> String {
    let attempts = match d {
        Dialect::Sqlite => "attempts",
        Dialect::Postgres | Dialect::PostgresMany => "attempts::int8",
    };
    format!(
        "UPDATE jobs SET status = {}, finished_at = {}, error = {} \
         WHERE tenant = {} AND concurrency_key = {} AND status = {} \
         RETURNING id, task, queue, {attempts}",
        d.param(1),
        d.param(2),
        d.param(3),
        d.param(4),
        d.param(5),
        d.param(6)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_lists_are_the_unfinished_and_the_finished() {
        let holder = unique_holder(Dialect::Sqlite, "id");
        assert!(
            holder.ends_with("status IN ('queued', 'running', 'waiting')"),
            "{holder}"
        );
        let finished = unique_finished(Dialect::Postgres);
        assert!(
            finished.ends_with("status IN ('completed', 'failed', 'cancelled')"),
            "{finished}"
        );
        assert!(finished.contains("tenant = $1 AND unique_key = $2"));
        assert!(supersede(Dialect::Sqlite).contains("status = ?6"));
    }
}
