//! Paused-queue rows, alike on both backends; how a paused queue's jobs
//! are parked is each backend's own (its claim index differs).

/// Marks a queue paused ($1 tenant, $2 queue, $3 now); no row when it was.
pub const PAUSE: &str = "INSERT INTO paused_queues (tenant, queue, paused_at) VALUES ($1, $2, $3) \
     ON CONFLICT DO NOTHING";

/// Marks a queue not paused ($1 tenant, $2 queue); no row when it was not.
pub const RESUME: &str = "DELETE FROM paused_queues WHERE tenant = $1 AND queue = $2";

/// A tenant's jobs by queue and status, with each queue's oldest due
/// job's due time ($1 tenant, $2 now).
pub const DEPTHS: &str = "SELECT queue, status, count(*), \
       min(CASE WHEN status = 'queued' AND run_at <= $2 THEN run_at END) \
     FROM jobs WHERE tenant = $1 GROUP BY queue, status ORDER BY queue";

/// A tenant's paused queues by name ($1 tenant).
pub const PAUSED: &str = "SELECT queue FROM paused_queues WHERE tenant = $1 ORDER BY queue";
