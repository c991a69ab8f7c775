//! The statements of an enqueue's rules, for both backends: the job an
//! idempotency key already made, the unfinished holder of a unique key,
//! the finished jobs of one, and the jobs a superseding enqueue cancels.
//! Which statuses each reads or writes comes from the one transition
//! table (`job.rs`, `store::transition`), never from a list typed here.

use super::dialect::Dialect;
use super::job_sql;
use crate::job::JobStatus;
use std::sync::LazyLock;

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

/// The job of a tenant's idempotency key (?1 tenant, ?2 key).
pub fn idempotent(d: Dialect) -> String {
    format!(
        "SELECT {} FROM jobs WHERE tenant = {} AND idempotency_key = {}",
        job_sql::job_columns(d),
        d.param(1),
        d.param(2)
    )
}

/// The unfinished job holding a tenant's unique key (?1 tenant, ?2 key):
/// it reads the unique index, whose predicate names the same statuses.
pub fn unique_holder(d: Dialect) -> String {
    format!(
        "SELECT {} FROM jobs WHERE tenant = {} AND unique_key = {} AND status IN ({})",
        job_sql::job_columns(d),
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

/// One job into the line: ?1 id, ?2 tenant, ?3 task, ?4 version, ?5
/// digest, ?6 queue, ?7 priority, ?8 input, ?9 max attempts, ?10 run at,
/// ?11 now, ?12 deadline, ?13 concurrency key, ?14 unique key, ?15
/// idempotency key, ?16 its body's hash, ?17 expiry, ?18 concurrency
/// limit, ?19 callback depth, ?20 its result cache key, ?21 its throttle,
/// ?22 its debounce key, ?23 its debounce, ?24 its fairness key, ?25 its
/// weight, ?26 its traceparent. A job of a paused queue goes in parked.
/// Nothing comes back (the record is the job as sent); SQLite's fails
/// without writing (`OR FAIL`).
/// Built once per dialect: every enqueue runs it.
pub fn insert_one(d: Dialect) -> &'static str {
    static SQLITE: LazyLock<String> = LazyLock::new(|| insert_one_sql(Dialect::Sqlite));
    static POSTGRES: LazyLock<String> = LazyLock::new(|| insert_one_sql(Dialect::Postgres));
    match d {
        Dialect::Sqlite => &SQLITE,
        Dialect::Postgres | Dialect::PostgresMany => &POSTGRES,
    }
}

fn insert_one_sql(d: Dialect) -> String {
    let parked = format!(
        "EXISTS (SELECT 1 FROM paused_queues WHERE tenant = {} AND queue = {})",
        d.param(2),
        d.param(6)
    );
    let (or_fail, flag, flag_value) = match d {
        // Due now (run at ?10 no later than now, ?11) or not.
        Dialect::Sqlite => (
            " OR FAIL",
            "available",
            format!(
                "CASE WHEN {parked} THEN 2 ELSE ({} <= {}) END",
                d.param(10),
                d.param(11)
            ),
        ),
        Dialect::Postgres | Dialect::PostgresMany => ("", "paused", parked),
    };
    let values: Vec<String> = (1..=NEW_JOB_PARAMS).map(|n| d.param(n)).collect();
    format!(
        "INSERT{or_fail} INTO jobs (status, {NEW_JOB_COLUMNS}, {flag}) \
         VALUES ('{}', {}, {flag_value})",
        JobStatus::Queued.as_str(),
        values.join(", ")
    )
}

/// What both inserts write of a new job, ?1 to ?26 (`insert_one`).
const NEW_JOB_COLUMNS: &str = "id, tenant, task, task_version, digest, queue, priority, input, \
    max_attempts, run_at, created_at, deadline_at, concurrency_key, unique_key, idempotency_key, \
    idempotency_hash, expire_after_ms, concurrency_limit, callback_depth, cache_key, throttle, \
    debounce_key, debounce, fairness_key, fairness_weight, traceparent";
/// How many parameters `NEW_JOB_COLUMNS` takes.
pub const NEW_JOB_PARAMS: usize = 26;

/// The completed job a result cache hit takes its output from (?1 tenant,
/// ?2 key, ?3 the oldest end inside the TTL): the newest that ran (a hit is
/// written without a key, and `cached_from` says so besides), with the
/// fuel its attempts burned (the rows of `attempts` and the last one, on
/// the job's row). Reads the `jobs_cache` index.
pub fn cache_source(d: Dialect) -> String {
    let sum = match d {
        Dialect::Sqlite => "coalesce(sum(a.fuel_used), 0)",
        Dialect::Postgres | Dialect::PostgresMany => "coalesce(sum(a.fuel_used), 0)::int8",
    };
    format!(
        "SELECT id, output, (SELECT {sum} FROM attempts a WHERE a.job_id = jobs.id) \
         + coalesce(last_fuel_used, 0) FROM jobs \
         WHERE tenant = {} AND cache_key = {} AND status = '{}' AND cached_from IS NULL \
         AND finished_at >= {} ORDER BY finished_at DESC LIMIT 1",
        d.param(1),
        d.param(2),
        JobStatus::Completed.as_str(),
        d.param(3)
    )
}

/// A job a cache hit completes at once: ?1 to ?26 as `insert_one`'s, ?27
/// the output, ?28 the source's id, ?29 the fuel it saved; started and
/// finished at its creation (?11). It made no attempt and is in no line.
pub fn insert_cached(d: Dialect) -> String {
    let values: Vec<String> = (1..=NEW_JOB_PARAMS + 3).map(|n| d.param(n)).collect();
    format!(
        "INSERT INTO jobs (status, {NEW_JOB_COLUMNS}, output, cached_from, cached_fuel, \
         started_at, finished_at) VALUES ('{}', {}, {now}, {now})",
        JobStatus::Completed.as_str(),
        values.join(", "),
        now = d.param(11)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_lists_are_the_unfinished_and_the_finished() {
        let holder = unique_holder(Dialect::Sqlite);
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

    #[test]
    fn an_insert_parks_by_its_dialects_flag() {
        let lite = insert_one(Dialect::Sqlite);
        assert!(
            lite.starts_with("INSERT OR FAIL INTO jobs (status, id,"),
            "{lite}"
        );
        let last = NEW_JOB_PARAMS;
        assert!(
            lite.contains(&format!("?{last}, CASE WHEN EXISTS")),
            "{lite}"
        );
        assert!(lite.ends_with("THEN 2 ELSE (?10 <= ?11) END)"), "{lite}");
        let pg = insert_one(Dialect::Postgres);
        assert!(pg.contains(", paused) VALUES ('queued', $1, $2,"), "{pg}");
        assert!(
            pg.contains(&format!(
                "${last}, EXISTS (SELECT 1 FROM paused_queues WHERE tenant = $2 AND queue = $6))"
            )),
            "{pg}"
        );
    }

    #[test]
    fn a_cache_hit_writes_what_an_insert_does_and_its_ending() {
        let hit = insert_cached(Dialect::Postgres);
        assert!(hit.contains("callback_depth, cache_key, throttle, debounce_key, debounce, fairness_key, fairness_weight, traceparent, output, cached_from, cached_fuel, started_at, finished_at) VALUES ('completed', $1,"), "{hit}");
        let (source, fuel) = (NEW_JOB_PARAMS + 2, NEW_JOB_PARAMS + 3);
        assert!(
            hit.ends_with(&format!("${source}, ${fuel}, $11, $11)")),
            "{hit}"
        );
        let source = cache_source(Dialect::Sqlite);
        assert!(
            source.contains("status = 'completed' AND cached_from IS NULL AND finished_at >= ?3"),
            "{source}"
        );
    }
}
