//! Paused-queue rows, alike on both backends; how a paused queue's jobs
//! are parked is each backend's own (its claim index differs).

/// Marks a queue paused ($1 tenant, $2 queue, $3 now); no row when it was.
pub const PAUSE: &str = "INSERT INTO paused_queues (tenant, queue, paused_at) VALUES ($1, $2, $3) \
     ON CONFLICT DO NOTHING";

/// Marks a queue not paused ($1 tenant, $2 queue); no row when it was not.
pub const RESUME: &str = "DELETE FROM paused_queues WHERE tenant = $1 AND queue = $2";

/// A tenant's jobs (`one`; else every tenant's, $1 NULL) by queue and
/// status, with each queue's oldest due job's due time ($1 tenant, $2
/// now).
pub fn depths(one: bool) -> String {
    format!(
        "SELECT tenant, queue, status, count(*), \
           min(CASE WHEN status = 'queued' AND run_at <= $2 THEN run_at END) \
         FROM jobs WHERE {} GROUP BY tenant, queue, status ORDER BY tenant, queue",
        super::whose::tenant_is(one, "$1")
    )
}

/// The paused queues of a tenant (`one`; else every tenant's, $1 NULL):
/// tenant and queue.
pub fn paused(one: bool) -> String {
    format!(
        "SELECT tenant, queue FROM paused_queues WHERE {} ORDER BY tenant, queue",
        super::whose::tenant_is(one, "$1")
    )
}

/// A tenant's paused queues by name ($1 tenant).
pub const PAUSED: &str = "SELECT queue FROM paused_queues WHERE tenant = $1 ORDER BY queue";
