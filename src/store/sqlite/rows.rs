//! Rows as SQLite returns them, and their conversion into records.

pub use crate::store::rows::{ClaimRow, JobRow};

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

impl ClaimRow {
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
