//! Rows as a database returns them, the same for every backend (each
//! casts its columns to these types), and their conversion into records.

use super::db_row::db_row;
use crate::job::{JobError, JobStatus};
use crate::store::records::*;
use crate::store::StoreError;

/// Largest attempt log a store keeps, as JSON; the sandbox bounds logs far
/// below this, so one larger is refused as a sign of a bug.
pub const MAX_LOG_JSON: usize = 4 << 20;

/// A value as the JSON text a column keeps; `null` for one that has none
/// (no record of the store's fails to serialise).
pub fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// An attempt's log as the JSON text its row keeps, refused past
/// `MAX_LOG_JSON` (the end is then written again without it).
pub fn log_json(job_id: &str, a: &AttemptRecord) -> Result<Option<String>, StoreError> {
    let log = a.log.as_ref().map(to_json);
    if log.as_ref().is_some_and(|l| l.len() > MAX_LOG_JSON) {
        return Err(StoreError::Internal(format!(
            "the log of attempt {} of job {job_id} is larger than {MAX_LOG_JSON} bytes",
            a.attempt
        )));
    }
    Ok(log)
}

db_row! {
    /// A job's columns.
    pub struct JobRow {
        pub(crate) id: String,
        pub(crate) tenant: String,
        pub(crate) task: String,
        pub(crate) task_version: i64,
        pub(crate) digest: String,
        pub(crate) status: String,
        pub(crate) queue: String,
        pub(crate) priority: i64,
        pub(crate) input: String,
        pub(crate) output: Option<String>,
        pub(crate) error: Option<String>,
        pub(crate) attempts: i64,
        pub(crate) max_attempts: i64,
        pub(crate) run_at: i64,
        pub(crate) created_at: i64,
        pub(crate) started_at: Option<i64>,
        pub(crate) finished_at: Option<i64>,
        pub(crate) deadline_at: Option<i64>,
        pub(crate) concurrency_key: Option<String>,
        pub(crate) unique_key: Option<String>,
        pub(crate) progress: Option<String>,
        pub(crate) waiting_for: Option<String>,
        pub(crate) fallback_task: Option<String>,
        pub(crate) fallback_version: Option<i64>,
        pub(crate) fallback_digest: Option<String>,
        pub(crate) cancel_requested: i64,
        pub idempotency_hash: Option<String>,
        pub(crate) expire_after_ms: Option<i64>,
        pub(crate) cached_from: Option<String>,
        pub(crate) throttle: Option<String>,
        pub(crate) debounce: Option<String>,
        pub(crate) fairness_key: Option<String>,
        pub(crate) fairness_weight: Option<i64>,
        pub(crate) traceparent: Option<String>,
    }
}

impl JobRow {
    /// Roughly what the job weighs in memory: its JSON texts.
    pub fn weight(&self) -> usize {
        self.input.len()
            + self.output.as_ref().map_or(0, String::len)
            + self.error.as_ref().map_or(0, String::len)
            + 512
    }
}

/// A column that holds something this version does not understand: the
/// database was written by something else.
fn corrupt(what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(format!("unreadable {what} in the database: {detail}"))
}

pub fn json_col<T: serde::de::DeserializeOwned>(
    what: &str,
    text: Option<String>,
) -> Result<Option<T>, StoreError> {
    text.map(|t| serde_json::from_str(&t).map_err(|e| corrupt(what, e)))
        .transpose()
}

pub fn error_col(text: Option<String>) -> Result<Option<JobError>, StoreError> {
    json_col("job error", text)
}

pub fn u32_col(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

impl TryFrom<JobRow> for JobRecord {
    type Error = StoreError;

    fn try_from(r: JobRow) -> Result<Self, StoreError> {
        let status: JobStatus = r.status.parse().map_err(|e| corrupt("job status", e))?;
        let fallback = match (r.fallback_task, r.fallback_version, r.fallback_digest) {
            (Some(name), Some(version), Some(digest)) => Some(TaskRef {
                name,
                version: u32_col(version),
                digest,
            }),
            _ => None,
        };
        Ok(JobRecord {
            id: r.id,
            tenant: r.tenant,
            task: TaskRef {
                name: r.task,
                version: u32_col(r.task_version),
                digest: r.digest,
            },
            status,
            queue: r.queue,
            priority: i32::try_from(r.priority).unwrap_or(0),
            input: r.input,
            output: r.output,
            error: error_col(r.error)?,
            attempts: u32_col(r.attempts),
            max_attempts: u32_col(r.max_attempts),
            run_at: r.run_at,
            created_at: r.created_at,
            started_at: r.started_at,
            finished_at: r.finished_at,
            deadline_at: r.deadline_at,
            expire_after_ms: r.expire_after_ms.and_then(|v| u64::try_from(v).ok()),
            concurrency_key: r.concurrency_key,
            unique_key: r.unique_key,
            progress: json_col("job progress", r.progress)?,
            waiting_for: r.waiting_for,
            fallback,
            cancel_requested: r.cancel_requested != 0,
            cached_from: r.cached_from,
            throttle: r
                .throttle
                .as_deref()
                .and_then(crate::store::throttle::Throttle::from_text),
            debounce: r
                .debounce
                .as_deref()
                .and_then(crate::store::debounce::Debounced::from_text),
            fairness_key: r.fairness_key,
            fairness_weight: r.fairness_weight.and_then(|w| u32::try_from(w).ok()),
            traceparent: r.traceparent,
        })
    }
}

/// Adds a job to a page unless the page's byte budget is spent (a page
/// lists at least one job); `false`: it is full, and marked cut.
pub fn page_push(
    page: &mut JobPage,
    bytes: &mut usize,
    row: JobRow,
    max_bytes: usize,
) -> Result<bool, StoreError> {
    if !page.jobs.is_empty() && *bytes + row.weight() > max_bytes {
        page.cut = true;
        return Ok(false);
    }
    *bytes += row.weight();
    page.jobs.push(JobRecord::try_from(row)?);
    Ok(true)
}

/// Counts of jobs by status from `(status, count)` rows.
pub fn counts_from(rows: Vec<(String, i64)>) -> Result<Vec<(JobStatus, u64)>, StoreError> {
    rows.into_iter()
        .map(|(s, n)| {
            Ok((
                s.parse().map_err(StoreError::Internal)?,
                u64::try_from(n).unwrap_or(0),
            ))
        })
        .collect()
}

/// Rows of (queue, status, count) as `JobStore::job_depths` answers them.
pub fn depths_from(
    rows: Vec<(String, String, i64)>,
) -> Result<Vec<(String, JobStatus, u64)>, StoreError> {
    rows.into_iter()
        .map(|(queue, status, n)| {
            let status: JobStatus = status.parse().map_err(StoreError::Internal)?;
            Ok((queue, status, u64::try_from(n).unwrap_or(0)))
        })
        .collect()
}

/// The SQL of `JobStore::job_counts`: every job by status, in the order
/// of status names.
pub const COUNTS_SQL: &str = "SELECT status, count(*) FROM jobs GROUP BY status ORDER BY status";

/// The SQL of `JobStore::job_depths`, the same on both backends.
pub const DEPTHS_SQL: &str = "SELECT queue, status, COUNT(*) FROM jobs \
    WHERE status IN ('queued', 'running', 'waiting') GROUP BY queue, status ORDER BY queue, status";

/// A row of `queues::depths`: tenant, queue, status, how many, the
/// oldest due run_at.
pub type QueueDepthRow = (String, String, String, i64, Option<i64>);

/// Queues from rows of (tenant, queue, status, count, oldest due run_at)
/// ordered by queue, with the tenant's paused queues marked (and listed,
/// with no jobs, when they have none).
pub fn queues_from(
    rows: Vec<QueueDepthRow>,
    paused: Vec<(String, String)>,
) -> Result<Vec<crate::store::QueueDepth>, StoreError> {
    let mut out: Vec<crate::store::QueueDepth> = Vec::new();
    for (tenant, queue, status, n, oldest) in rows {
        let status: JobStatus = status.parse().map_err(StoreError::Internal)?;
        if out
            .last()
            .is_none_or(|q| q.tenant != tenant || q.queue != queue)
        {
            out.push(crate::store::QueueDepth {
                tenant,
                queue,
                counts: JobStatus::ALL.iter().map(|s| (*s, 0)).collect(),
                oldest_due_run_at: None,
                paused: false,
            });
        }
        let Some(q) = out.last_mut() else { continue };
        if let Some(slot) = q.counts.iter_mut().find(|(s, _)| *s == status) {
            slot.1 += u64::try_from(n).unwrap_or(0);
        }
        if let Some(t) = oldest {
            q.oldest_due_run_at = Some(q.oldest_due_run_at.map_or(t, |o| o.min(t)));
        }
    }
    // The database's collation may order names otherwise than bytes do.
    let key = |q: &crate::store::QueueDepth| (q.tenant.clone(), q.queue.clone());
    out.sort_by_key(key);
    for (tenant, name) in paused {
        match out.binary_search_by(|q| (q.tenant.as_str(), q.queue.as_str()).cmp(&(&tenant, &name)))
        {
            Ok(i) => out[i].paused = true,
            Err(i) => out.insert(
                i,
                crate::store::QueueDepth {
                    tenant,
                    queue: name,
                    counts: JobStatus::ALL.iter().map(|s| (*s, 0)).collect(),
                    oldest_due_run_at: None,
                    paused: true,
                },
            ),
        }
    }
    Ok(out)
}

db_row! {
    /// An attempt's columns (`attempt_sql::PAGE`).
    pub struct AttemptRow {
        attempt: i64,
        task: String,
        task_version: i64,
        digest: String,
        started_at: i64,
        finished_at: i64,
        outcome: String,
        error: Option<String>,
        fuel_used: i64,
        peak_memory_bytes: i64,
        log: Option<String>,
        network: Option<String>,
    }
}

impl TryFrom<AttemptRow> for AttemptRecord {
    type Error = StoreError;

    fn try_from(r: AttemptRow) -> Result<Self, StoreError> {
        Ok(AttemptRecord {
            attempt: u32_col(r.attempt),
            task: TaskRef {
                name: r.task,
                version: u32_col(r.task_version),
                digest: r.digest,
            },
            started_at: r.started_at,
            finished_at: r.finished_at,
            outcome: r.outcome,
            error: error_col(r.error)?,
            fuel_used: u64::try_from(r.fuel_used).unwrap_or(0),
            peak_memory_bytes: u64::try_from(r.peak_memory_bytes).unwrap_or(0),
            log: json_col("attempt log", r.log)?,
            network: json_col("attempt network", r.network)?,
        })
    }
}

db_row! {
    /// A row of `job_sql::CLAIM_COLUMNS`.
    pub struct ClaimRow {
        pub(crate) id: String,
        pub(crate) tenant: String,
        pub(crate) task: String,
        pub(crate) task_version: i64,
        pub(crate) digest: String,
        pub(crate) input: String,
        pub(crate) queue: String,
        pub(crate) attempts: i64,
        pub(crate) max_attempts: i64,
        pub(crate) deadline_at: Option<i64>,
        pub(crate) fallback_task: Option<String>,
        pub(crate) fallback_version: Option<i64>,
        pub(crate) fallback_digest: Option<String>,
        pub(crate) fallback_input: Option<String>,
        pub(crate) fallback_depth: i64,
        pub(crate) stage_offset: i64,
        pub(crate) attempt_started_at: Option<i64>,
        pub(crate) lease_token: Option<String>,
        pub(crate) snoozes: i64,
        pub(crate) begun: bool,
        pub(crate) run_at: i64,
        pub(crate) callback_depth: i64,
        pub(crate) fair_key: Option<String>,
        pub(crate) traceparent: Option<String>,
    }
}

impl ClaimRow {
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// What the claim's `job.started` names.
    pub fn about(&self) -> crate::store::outbox::About<'_> {
        crate::store::outbox::About {
            id: &self.id,
            tenant: &self.tenant,
            task: &self.task,
            queue: &self.queue,
            attempt: u32_col(self.attempts),
        }
    }
}

impl From<ClaimRow> for ClaimedJob {
    fn from(r: ClaimRow) -> Self {
        let fallback = match (
            r.fallback_task,
            r.fallback_version,
            r.fallback_digest,
            r.fallback_input,
        ) {
            (Some(name), Some(version), Some(digest), Some(input)) => Some((
                TaskRef {
                    name,
                    version: u32_col(version),
                    digest,
                },
                input,
            )),
            _ => None,
        };
        ClaimedJob::from(crate::store::transition::ClaimedRow {
            id: r.id,
            tenant: r.tenant,
            task: TaskRef {
                name: r.task,
                version: u32_col(r.task_version),
                digest: r.digest,
            },
            input: r.input,
            fallback,
            queue: r.queue,
            attempts: u32_col(r.attempts),
            stage_offset: u32_col(r.stage_offset),
            max_attempts: u32_col(r.max_attempts),
            deadline_at: r.deadline_at,
            fallback_depth: u32_col(r.fallback_depth),
            snoozes: u32_col(r.snoozes),
            started_at: r.attempt_started_at.unwrap_or_default(),
            lease_token: r.lease_token.unwrap_or_default(),
            begun: r.begun,
            due_at: r.run_at,
            callback_depth: u32_col(r.callback_depth),
            fair_key: r.fair_key,
            traceparent: r.traceparent,
        })
    }
}
