//! The claim's row as SQLite's writer reads it (the hot path reads its
//! columns by place, without `exec::Row`'s names).

pub use crate::store::rows::ClaimRow;

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
