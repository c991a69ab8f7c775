//! The background services' records: named leases, component collection, expiry and pruning.

use super::*;

/// A named lease (`JobStore::lease_take`): who holds it, in which term,
/// and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub name: String,
    pub holder: String,
    /// Goes up each time the lease changes hands (or is taken again after
    /// it expired), so a holder that lost it can tell.
    pub term: i64,
    /// When this term began.
    pub taken_at: Millis,
    pub expires_at: Millis,
}

/// A lease's row as both backends read it: name, holder, term, taken_at,
/// expires_at.
pub type LeaseRow = (String, String, i64, i64, i64);

impl From<LeaseRow> for Lease {
    fn from((name, holder, term, taken_at, expires_at): LeaseRow) -> Lease {
        Lease {
            name,
            holder,
            term,
            taken_at,
            expires_at,
        }
    }
}

impl Lease {
    /// The lease's holder and term when its holder may act: unexpired at `now`.
    pub fn live_at(&self, now: Millis) -> bool {
        self.expires_at > now
    }
}

/// What `component_collect` deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    /// Components (a tenant's upload of a digest).
    pub components: u64,
    /// Digests no tenant has any more, whose bytes were deleted.
    pub digests: Vec<String>,
}

/// A queued job past its `expire_after_ms`, as `job_expiring` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiringJob {
    pub id: String,
    pub tenant: String,
    pub task: String,
    pub task_version: u32,
    pub queue: String,
    pub attempts: u32,
}

impl ExpiringJob {
    /// A row of `id, tenant, task, task_version, queue, attempts`, as both
    /// backends read it.
    pub fn from_row(r: (String, String, String, i64, String, i64)) -> ExpiringJob {
        ExpiringJob {
            id: r.0,
            tenant: r.1,
            task: r.2,
            task_version: u32::try_from(r.3).unwrap_or(0),
            queue: r.4,
            attempts: u32::try_from(r.5).unwrap_or(0),
        }
    }
}

/// A job to fail `expired`, and its task's `on_fail` job, if it has one,
/// to be inserted with it.
#[derive(Debug, Clone)]
pub struct Expire {
    pub id: String,
    pub on_fail: Option<NewJob>,
}

/// One step of a pruning pass: ended jobs looked at in id order (ids are
/// ULIDs, which rise with time, so the oldest come first), from just after
/// `after_id` to just before `below_id`, at most `scan` of them.
#[derive(Debug, Clone)]
pub struct PruneParams {
    pub after_id: String,
    /// No job created after the later cutoff can have ended before it, so
    /// ids from the ULID of that time on are never looked at.
    pub below_id: String,
    /// Completed and cancelled jobs that ended before this go (`None`: kept).
    pub completed_before: Option<Millis>,
    /// Failed jobs that ended before this go (`None`: kept).
    pub failed_before: Option<Millis>,
    pub scan: u32,
}

impl PruneParams {
    /// The first id of a time: every ULID made at or after it is above it.
    pub fn id_floor(at: Millis) -> String {
        ulid::Ulid::from_parts(u64::try_from(at).unwrap_or(0), 0).to_string()
    }
}

/// What a step of a pruning pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    pub jobs: u64,
    pub attempts: u64,
    /// The last id looked at, where the next step starts; `None` when no
    /// job was left to look at (the pass is over).
    pub last_id: Option<String>,
}
