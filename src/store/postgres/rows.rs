//! Rows as PostgreSQL returns them that its typed integers keep apart
//! from the store's own rows (`store::rows`): a claim's.

use crate::store::records::{ClaimedJob, TaskRef};
use crate::store::transition::ClaimedRow;
use sqlx::postgres::PgRow;
use sqlx::Row;

pub(super) fn u32_of(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// A row of `CLAIM_COLUMNS`.
pub fn claimed_row(r: &PgRow) -> Result<ClaimedJob, sqlx::Error> {
    let fallback = match (
        r.try_get::<Option<String>, _>("fallback_task")?,
        r.try_get::<Option<i32>, _>("fallback_version")?,
        r.try_get::<Option<String>, _>("fallback_digest")?,
        r.try_get::<Option<String>, _>("fallback_input")?,
    ) {
        (Some(name), Some(version), Some(digest), Some(input)) => Some((
            TaskRef {
                name,
                version: u32_of(version),
                digest,
            },
            input,
        )),
        _ => None,
    };
    Ok(ClaimedJob::from(ClaimedRow {
        id: r.try_get("id")?,
        tenant: r.try_get("tenant")?,
        task: TaskRef {
            name: r.try_get("task")?,
            version: u32_of(r.try_get("task_version")?),
            digest: r.try_get("digest")?,
        },
        input: r.try_get("input")?,
        fallback,
        queue: r.try_get("queue")?,
        attempts: u32_of(r.try_get("attempts")?),
        stage_offset: u32_of(r.try_get("stage_offset")?),
        max_attempts: u32_of(r.try_get("max_attempts")?),
        deadline_at: r.try_get("deadline_at")?,
        fallback_depth: u32_of(r.try_get("fallback_depth")?),
        snoozes: u32_of(r.try_get("snoozes")?),
        started_at: r
            .try_get::<Option<i64>, _>("attempt_started_at")?
            .unwrap_or_default(),
        lease_token: r
            .try_get::<Option<String>, _>("lease_token")?
            .unwrap_or_default(),
        begun: r.try_get("begun")?,
        due_at: r.try_get("run_at")?,
        callback_depth: u32_of(r.try_get("callback_depth")?),
        fair_key: r.try_get("fair_key")?,
        traceparent: r.try_get("traceparent")?,
    }))
}
