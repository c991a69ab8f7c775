//! The columns a job is read by and a claim returns, and the statements
//! that read one job or a page of them, for both backends.

use super::dialect::Dialect;
use super::ending_sql::{back_in_queue, status_in, NO_CACHE_KEY};
use crate::job::JobStatus;
use std::sync::LazyLock;

/// `JobRow`'s columns in its order, each with the cast PostgreSQL needs
/// to read it as the row's type (its narrower integers and its boolean
/// flag; SQLite's integers are all 64-bit already).
const JOB: [(&str, &str); 34] = [
    ("id", ""),
    ("tenant", ""),
    ("task", ""),
    ("task_version", "::int8"),
    ("digest", ""),
    ("status", ""),
    ("queue", ""),
    ("priority", "::int8"),
    ("input", ""),
    ("output", ""),
    ("error", ""),
    ("attempts", "::int8"),
    ("max_attempts", "::int8"),
    ("run_at", ""),
    ("created_at", ""),
    ("started_at", ""),
    ("finished_at", ""),
    ("deadline_at", ""),
    ("concurrency_key", ""),
    ("unique_key", ""),
    ("progress", ""),
    ("waiting_for", ""),
    ("fallback_task", ""),
    ("fallback_version", "::int8"),
    ("fallback_digest", ""),
    ("cancel_requested", "::int4::int8"),
    ("idempotency_hash", ""),
    ("expire_after_ms", ""),
    ("cached_from", ""),
    ("throttle", ""),
    ("debounce", ""),
    ("fairness_key", ""),
    ("fairness_weight", "::int8"),
    ("traceparent", ""),
];

/// The columns of `JobRow`, as the dialect reads them.
pub fn job_columns(d: Dialect) -> &'static str {
    static SQLITE: LazyLock<String> = LazyLock::new(|| columns(|_| ""));
    static POSTGRES: LazyLock<String> = LazyLock::new(|| columns(|cast| cast));
    match d {
        Dialect::Sqlite => &SQLITE,
        Dialect::Postgres | Dialect::PostgresMany => &POSTGRES,
    }
}

fn columns(cast_of: impl Fn(&'static str) -> &'static str) -> String {
    JOB.iter()
        .map(|(name, cast)| match cast_of(cast) {
            "" => (*name).to_owned(),
            cast => format!("{name}{cast} AS {name}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns a claim returns, read by each backend's claimed-row
/// binding into `ClaimedRow`.
pub const CLAIM_COLUMNS: &str = "id, tenant, task, task_version, digest, input, queue, attempts, \
    max_attempts, deadline_at, fallback_task, fallback_version, fallback_digest, fallback_input, \
    fallback_depth, stage_offset, attempt_started_at, lease_token, snoozes, begun, run_at, \
    callback_depth, coalesce(fairness_key, concurrency_key) AS fair_key, traceparent";

/// One job of a tenant's (?1 id, ?2 tenant); `lock`: held for the
/// transaction's writes, where the dialect locks rows (SQLite's one writer
/// holds them all).
pub fn get(d: Dialect, lock: bool) -> String {
    let lock = match d {
        Dialect::Postgres | Dialect::PostgresMany if lock => " FOR UPDATE",
        _ => "",
    };
    format!(
        "SELECT {} FROM jobs WHERE id = {} AND tenant = {}{lock}",
        job_columns(d),
        d.param(1),
        d.param(2)
    )
}

/// A page of a tenant's jobs (`one`; else every tenant's, ?1 NULL), newest
/// first (?1 tenant; ?2 status, ?3 task, ?4 queue, each when not null; ?5
/// before this id, when not null; ?6 at most this many).
pub fn list(d: Dialect, one: bool) -> String {
    let text = |n| match d {
        Dialect::Sqlite => d.param(n),
        Dialect::Postgres | Dialect::PostgresMany => format!("{}::text", d.param(n)),
    };
    format!(
        "SELECT {} FROM jobs WHERE {} \
           AND ({s} IS NULL OR status = {s}) AND ({t} IS NULL OR task = {t}) \
           AND ({q} IS NULL OR queue = {q}) AND ({b} IS NULL OR id < {b}) \
         ORDER BY id DESC LIMIT {}",
        job_columns(d),
        super::whose::tenant_is(one, &d.param(1)),
        d.param(6),
        s = text(2),
        t = text(3),
        q = text(4),
        b = text(5),
    )
}

/// The slots a concurrency key's running jobs hold ($1 tenant, $2 key).
pub const KEY_SLOTS: &str = "SELECT concurrency_slot FROM jobs \
     WHERE tenant = $1 AND concurrency_key = $2 AND status = 'running'";

/// One running job of a concurrency key that runs as many as the limit of
/// job $3 allows, if any ($1 tenant, $2 key): what keeps "run now" from
/// going past the key's limit.
pub const KEY_FULL: &str = "SELECT id FROM jobs \
     WHERE tenant = $1 AND concurrency_key = $2 AND status = 'running' \
       AND (SELECT count(*) FROM jobs WHERE tenant = $1 AND concurrency_key = $2 \
            AND status = 'running') \
         >= (SELECT coalesce(concurrency_limit, 1) FROM jobs WHERE id = $3) LIMIT 1";

/// Takes over the leases of running jobs: those whose lease expired before
/// $5, or every one when $4 ($1 owner, $2 token, $3 lease expiry, $6 at
/// most this many, those expired longest first).
pub fn rescue(d: Dialect) -> String {
    format!(
        "UPDATE jobs SET lease_owner = $1, lease_token = $2, lease_expires_at = $3 \
         WHERE id IN (SELECT id FROM jobs WHERE status = 'running' \
                      AND ($4 OR lease_expires_at < $5) ORDER BY lease_expires_at, id LIMIT $6{}) \
         RETURNING {CLAIM_COLUMNS}",
        d.skip_locked()
    )
}

/// Asks the runner of a running job to stop it ($1 its id).
pub fn request_cancel(d: Dialect) -> String {
    format!(
        "UPDATE jobs SET cancel_requested = {} WHERE id = $1 AND status = 'running'",
        d.flag(true)
    )
}

/// Queues failed job ?7 of tenant ?8 again, due now (?2), for a new series
/// of attempts on task ?3–?5, ?6 of them, starting on the stage ?9–?12
/// when that is not the job's own task (?1 the new status), its result
/// cache key now ?13 (`Redrive::cache_key`): what the last series left on
/// the row goes (its last attempt moved to `attempts` first,
/// `attempt_sql::KEEP_LAST`); a deadline moves with the job.
pub fn redrive(d: Dialect, from: &[JobStatus]) -> String {
    let p = |n| d.param(n);
    format!(
        "UPDATE jobs SET status = {}, run_at = {}, {}, urgent = {no}, \
         task = {}, task_version = {}, digest = {}, cache_key = {}, \
         max_attempts = attempts + {}, \
         stage_offset = attempts, fallback_task = {}, fallback_version = {}, \
         fallback_digest = {}, fallback_input = {}, fallback_depth = 0, \
         output = NULL, error = NULL, started_at = NULL, finished_at = NULL, \
         progress = NULL, waiting_for = NULL, cancel_requested = {no}, snoozes = 0, \
         {}, deadline_at = CASE WHEN deadline_at IS NULL THEN NULL \
                                ELSE {} + (deadline_at - created_at) END \
         WHERE id = {} AND tenant = {} AND {}",
        p(1),
        p(2),
        back_in_queue(d, "1"),
        p(3),
        d.int4(4),
        p(5),
        p(13),
        d.int4(6),
        p(9),
        d.int4(10),
        p(11),
        p(12),
        *super::attempt_sql::NO_LAST,
        p(2),
        p(7),
        p(8),
        status_in(d, from),
        no = d.flag(false),
    )
}

/// Moves a job to `mv.to` if it is in one of `mv.from` ($1 the new
/// status, $2 now as its `finished_at`, $3 its id).
pub fn finish_if(d: Dialect, from: &[JobStatus]) -> String {
    format!(
        "UPDATE jobs SET status = $1, finished_at = $2 WHERE id = $3 AND {}",
        status_in(d, from)
    )
}

/// Queues waiting job ?4 again, due now (?2; ?1 the new status), with
/// input ?3 if one is given: a job in its fallback gets it as the
/// fallback's. A new input of its own comes with its result cache key on
/// it, ?5 (`NewInput`): the key it had was the old input's, and the output
/// it ends with is the new one's. (A job in its fallback has no key.)
pub fn resume(d: Dialect, from: &[JobStatus]) -> String {
    let text = |n| match d {
        Dialect::Sqlite => d.param(n),
        Dialect::Postgres | Dialect::PostgresMany => format!("{}::text", d.param(n)),
    };
    let (input, key) = (text(3), text(5));
    format!(
        "UPDATE jobs SET status = {}, run_at = {}, waiting_for = NULL, {}, \
         input = CASE WHEN {input} IS NOT NULL AND fallback_task IS NULL THEN {input} ELSE input END, \
         fallback_input = CASE WHEN {input} IS NOT NULL AND fallback_task IS NOT NULL \
                               THEN {input} ELSE fallback_input END, \
         cache_key = CASE WHEN {input} IS NULL THEN cache_key \
                          WHEN fallback_task IS NULL THEN {key} ELSE NULL END \
         WHERE id = {} AND {}",
        d.param(1),
        d.param(2),
        back_in_queue(d, "1"),
        d.param(4),
        status_in(d, from)
    )
}

/// Hands queued or waiting job ?7 of tenant ?8 to the next stage of its
/// workflow at once (due ?1): its task ?2–?4 on input ?5, with ?6 attempts
/// of its own after those made; a pending cancel is answered by it.
pub fn hand_over(d: Dialect) -> String {
    let no = d.flag(false);
    format!(
        "UPDATE jobs SET status = 'queued', run_at = {}, {}, urgent = {no}, \
         fallback_task = {}, fallback_version = {}, fallback_digest = {}, \
         fallback_input = {}, fallback_depth = fallback_depth + 1, stage_offset = attempts, \
         max_attempts = attempts + {}, cancel_requested = {no}, waiting_for = NULL, \
         {NO_CACHE_KEY} WHERE id = {} AND tenant = {} AND {}",
        d.param(1),
        back_in_queue(d, "1"),
        d.param(2),
        d.int4(3),
        d.param(4),
        d.param(5),
        d.int4(6),
        d.param(7),
        d.param(8),
        status_in(d, &[JobStatus::Queued, JobStatus::Waiting])
    )
}

/// The ended jobs of task `$2` of tenant `$1` whose last attempt ran that
/// task (not a fallback's, not served from a result cache), newest
/// first, at most `$3`: what a verification runs again.
pub const ENDED_SAMPLE: &str = "SELECT id FROM jobs WHERE tenant = $1 AND task = $2 \
     AND last_task = $2 AND status IN ('completed', 'failed') AND cached_from IS NULL \
     ORDER BY id DESC LIMIT $3";

/// What job `$2` of tenant `$1` recorded of its end: the version its
/// last attempt ran, its input, status, output and error, and its last
/// attempt's fuel (`RecordedRow`).
pub const RECORDED_RUN: &str = "SELECT CAST(COALESCE(last_task_version, task_version) AS BIGINT), \
     input, status, output, error, CAST(COALESCE(last_fuel_used, 0) AS BIGINT) FROM jobs \
     WHERE tenant = $1 AND id = $2";
pub type RecordedRow = (i64, String, String, Option<String>, Option<String>, i64);

/// A `RECORDED_RUN` row as the record it is.
pub fn recorded_run(
    id: &str,
    (version, input, status, output, error, fuel): RecordedRow,
) -> Result<super::RecordedRun, super::StoreError> {
    Ok(super::RecordedRun {
        id: id.to_owned(),
        version: u32::try_from(version).unwrap_or(0),
        input,
        status: status
            .parse()
            .map_err(|_| super::StoreError::Internal(format!("job status {status:?}")))?,
        output,
        error: super::rows::error_col(error)?,
        fuel: u64::try_from(fuel).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_casts_what_sqlite_reads_as_is() {
        let pg = job_columns(Dialect::Postgres);
        assert!(pg.starts_with("id, tenant, task, task_version::int8 AS task_version, digest,"));
        assert!(pg.contains("cancel_requested::int4::int8 AS cancel_requested"));
        let lite = job_columns(Dialect::Sqlite);
        assert!(lite.starts_with("id, tenant, task, task_version, digest, status,"));
        assert!(!lite.contains("::"));
        assert_eq!(lite.split(", ").count(), pg.split(", ").count());
    }

    #[test]
    fn a_locked_read_locks_only_where_rows_are_locked() {
        assert!(get(Dialect::Postgres, true).ends_with("WHERE id = $1 AND tenant = $2 FOR UPDATE"));
        assert!(get(Dialect::Sqlite, true).ends_with("WHERE id = ?1 AND tenant = ?2"));
        assert!(list(Dialect::Postgres, true).contains("($5::text IS NULL OR id < $5::text)"));
    }

    #[test]
    fn every_move_that_changes_a_jobs_digest_or_input_writes_its_cache_key() {
        // A resume's new input brings its key; no input keeps the key; a
        // job in its fallback keeps none.
        let resume = resume(Dialect::Postgres, &[JobStatus::Waiting]);
        assert!(
            resume.contains(
                "cache_key = CASE WHEN $3::text IS NULL THEN cache_key \
                 WHEN fallback_task IS NULL THEN $5::text ELSE NULL END"
            ),
            "{resume}"
        );
        let redrive = redrive(Dialect::Sqlite, &[JobStatus::Failed]);
        assert!(
            redrive.contains("digest = ?5, cache_key = ?13,"),
            "{redrive}"
        );
        assert!(hand_over(Dialect::Postgres).contains(NO_CACHE_KEY));
    }

    #[test]
    fn a_list_of_every_tenants_jobs_binds_as_one_tenants_does() {
        assert!(list(Dialect::Sqlite, true).contains("WHERE tenant = ?1 AND"));
        assert!(list(Dialect::Sqlite, false).contains("WHERE CAST(?1 AS TEXT) IS NULL AND"));
        let [one, every] = [true, false].map(|one| list(Dialect::Postgres, one));
        assert_eq!(one.matches('$').count(), every.matches('$').count());
    }
}
