//! Debounce keys' statements; the rule is the core's (`taskbox_core::debounce`).

pub use taskbox_core::debounce::*;

/// Ends a pending job a debounced one replaced, if it is still pending
/// ($1 the cancel's status, $2 now, $3 the error, $4 its `debounce`, $5
/// its id, $6 queued). Answers its id, task, queue and attempts, for its
/// event. Its status is read as an expression, so that PostgreSQL finds the
/// row by its id, never by a partial index on the status.
pub const END_PENDING: &str = "UPDATE jobs SET status = $1, finished_at = $2, error = $3, \
     debounce = $4 WHERE id = $5 AND (jobs.status || '') = $6 AND attempts = 0 \
     RETURNING id, task, queue, CAST(attempts AS BIGINT)";
