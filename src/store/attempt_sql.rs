//! The statements that write and read a job's attempts, for both backends:
//! the rows of `attempts`, and the attempt that ended the job, which the
//! job's own row keeps (`transition::Move::keeps_attempt`).

/// The columns of a row of `attempts`, in the order its writes bind them.
macro_rules! columns {
    () => {
        "job_id, attempt, task, task_version, digest, started_at, finished_at, outcome, \
         error, fuel_used, peak_memory_bytes, log, network"
    };
}

/// An attempt written again replaces the first: a released attempt's
/// number is the next one's too.
macro_rules! replaces {
    () => {
        " ON CONFLICT (job_id, attempt) DO UPDATE SET task = excluded.task, \
         task_version = excluded.task_version, digest = excluded.digest, \
         started_at = excluded.started_at, finished_at = excluded.finished_at, \
         outcome = excluded.outcome, error = excluded.error, fuel_used = excluded.fuel_used, \
         peak_memory_bytes = excluded.peak_memory_bytes, log = excluded.log, \
         network = excluded.network"
    };
}

/// The columns of `attempts`, for a backend's own form of the insert.
pub const COLUMNS: &str = columns!();

/// What a second write of one attempt does.
pub const REPLACES: &str = replaces!();

/// One attempt's row ($1 job, $2 attempt, $3 task, $4 version, $5 digest,
/// $6 started, $7 finished, $8 outcome, $9 error, $10 fuel, $11 peak
/// memory, $12 log, $13 network).
pub const INSERT: &str = concat!(
    "INSERT INTO attempts (",
    columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    replaces!()
);

/// Moves the attempt job $1's row keeps into `attempts`, before anything
/// that runs the job again (a redrive) writes over it.
pub const KEEP_LAST: &str = concat!(
    "INSERT INTO attempts (",
    columns!(),
    ") SELECT id, last_attempt, last_task, last_task_version, last_digest, last_started_at, \
     last_finished_at, last_outcome, last_error, last_fuel_used, last_peak_memory_bytes, \
     last_log, last_network FROM jobs WHERE id = $1 AND last_attempt IS NOT NULL",
    replaces!()
);

/// What a job's row keeps of no attempt, for the write that runs it again.
pub const NO_LAST: &str = "last_attempt = NULL, last_task = NULL, \
     last_task_version = NULL, last_digest = NULL, last_started_at = NULL, \
     last_finished_at = NULL, last_outcome = NULL, last_error = NULL, last_fuel_used = NULL, \
     last_peak_memory_bytes = NULL, last_log = NULL, last_network = NULL";

/// A page of a job's attempts, oldest first ($1 job, $2 its tenant, $3
/// after this attempt number, $4 at most this many): its rows of
/// `attempts` and the one its row keeps, which is newer than a row of the
/// same number (a released attempt's). Its columns are `rows::AttemptRow`'s.
pub const PAGE: &str = "SELECT CAST(attempt AS BIGINT) AS attempt, task, \
       CAST(task_version AS BIGINT) AS task_version, digest, started_at, finished_at, \
       outcome, error, fuel_used, peak_memory_bytes, log, network FROM ( \
     SELECT a.attempt, a.task, a.task_version, a.digest, a.started_at, a.finished_at, \
       a.outcome, a.error, a.fuel_used, a.peak_memory_bytes, a.log, a.network \
     FROM attempts a JOIN jobs j ON j.id = a.job_id \
     WHERE a.job_id = $1 AND j.tenant = $2 AND a.attempt > $3 \
       AND (j.last_attempt IS NULL OR a.attempt <> j.last_attempt) \
     UNION ALL \
     SELECT last_attempt, last_task, last_task_version, last_digest, last_started_at, \
       last_finished_at, last_outcome, last_error, last_fuel_used, last_peak_memory_bytes, \
       last_log, last_network \
     FROM jobs WHERE id = $1 AND tenant = $2 AND last_attempt > $3) t \
     ORDER BY attempt LIMIT $4";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::dialect::numbered_in_order;

    #[test]
    fn each_statement_reads_alike_on_both_backends() {
        for sql in [INSERT, KEEP_LAST, PAGE] {
            assert!(numbered_in_order(sql), "{sql}");
        }
    }
}
