//! Rows as SQLite returns them, and their conversion into records.

use crate::store::records::*;
pub use crate::store::rows::{u32_col, JobRow};
use crate::store::transition::ClaimedRow;

impl JobRow {
    /// Reads a row of `job_sql::job_columns` on the writer's connection.
    pub fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<JobRow> {
        Ok(JobRow {
            id: r.get(0)?,
            tenant: r.get(1)?,
            task: r.get(2)?,
            task_version: r.get(3)?,
            digest: r.get(4)?,
            status: r.get(5)?,
            queue: r.get(6)?,
            priority: r.get(7)?,
            input: r.get(8)?,
            output: r.get(9)?,
            error: r.get(10)?,
            attempts: r.get(11)?,
            max_attempts: r.get(12)?,
            run_at: r.get(13)?,
            created_at: r.get(14)?,
            started_at: r.get(15)?,
            finished_at: r.get(16)?,
            deadline_at: r.get(17)?,
            concurrency_key: r.get(18)?,
            unique_key: r.get(19)?,
            progress: r.get(20)?,
            waiting_for: r.get(21)?,
            fallback_task: r.get(22)?,
            fallback_version: r.get(23)?,
            fallback_digest: r.get(24)?,
            cancel_requested: r.get(25)?,
            idempotency_hash: r.get(26)?,
            expire_after_ms: r.get(27)?,
            cached_from: r.get(28)?,
            throttle: r.get(29)?,
            debounce: r.get(30)?,
            fairness_key: r.get(31)?,
            fairness_weight: r.get(32)?,
            traceparent: r.get(33)?,
        })
    }
}

/// A row of `job_sql::CLAIM_COLUMNS`.
pub struct ClaimRow {
    id: String,
    tenant: String,
    task: String,
    task_version: i64,
    digest: String,
    input: String,
    queue: String,
    attempts: i64,
    max_attempts: i64,
    deadline_at: Option<i64>,
    fallback_task: Option<String>,
    fallback_version: Option<i64>,
    fallback_digest: Option<String>,
    fallback_input: Option<String>,
    fallback_depth: i64,
    stage_offset: i64,
    attempt_started_at: Option<i64>,
    lease_token: Option<String>,
    snoozes: i64,
    begun: bool,
    run_at: i64,
    callback_depth: i64,
    fair_key: Option<String>,
    traceparent: Option<String>,
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

    /// Reads a row of `CLAIM_COLUMNS`.
    pub fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClaimRow> {
        Ok(ClaimRow {
            id: r.get(0)?,
            tenant: r.get(1)?,
            task: r.get(2)?,
            task_version: r.get(3)?,
            digest: r.get(4)?,
            input: r.get(5)?,
            queue: r.get(6)?,
            attempts: r.get(7)?,
            max_attempts: r.get(8)?,
            deadline_at: r.get(9)?,
            fallback_task: r.get(10)?,
            fallback_version: r.get(11)?,
            fallback_digest: r.get(12)?,
            fallback_input: r.get(13)?,
            fallback_depth: r.get(14)?,
            stage_offset: r.get(15)?,
            attempt_started_at: r.get(16)?,
            lease_token: r.get(17)?,
            snoozes: r.get(18)?,
            begun: r.get(19)?,
            run_at: r.get(20)?,
            callback_depth: r.get(21)?,
            fair_key: r.get(22)?,
            traceparent: r.get(23)?,
        })
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
        ClaimedJob::from(ClaimedRow {
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
