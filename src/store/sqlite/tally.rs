//! Per-tenant counts a write changes (jobs queued, running and waiting;
//! usage in the current window), gathered while the write runs and applied
//! at its end: one row update per tenant per write, in the same
//! transaction as the changes they count.

use super::wdb;
use crate::job::JobStatus;
use crate::quota::window_start;
use crate::store::records::Usage;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection};
use std::collections::HashMap;

#[derive(Default, Clone, Copy)]
struct Gauges {
    queued: i64,
    running: i64,
    waiting: i64,
}

impl Gauges {
    fn slot(&mut self, status: JobStatus) -> Option<&mut i64> {
        match status {
            JobStatus::Queued => Some(&mut self.queued),
            JobStatus::Running => Some(&mut self.running),
            JobStatus::Waiting => Some(&mut self.waiting),
            _ => None,
        }
    }
}

#[derive(Default)]
struct Spent {
    fuel: i64,
    wall_ms: i64,
    attempts: i64,
    completed: i64,
    failed: i64,
    cancelled: i64,
}

/// What one write changed, by tenant.
pub struct Tally {
    window: Millis,
    gauges: HashMap<String, Gauges>,
    spent: HashMap<String, Spent>,
}

/// The tenant's entry, made when missing; no allocation when it is there
/// (the claim and finalize paths call this once per job).
fn slot<'a, V: Default>(map: &'a mut HashMap<String, V>, tenant: &str) -> &'a mut V {
    if !map.contains_key(tenant) {
        map.insert(tenant.to_owned(), V::default());
    }
    map.get_mut(tenant)
        .unwrap_or_else(|| unreachable!("inserted above"))
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Tally {
    pub fn new(now: Millis) -> Tally {
        Tally {
            window: window_start(now),
            gauges: HashMap::new(),
            spent: HashMap::new(),
        }
    }

    /// `n` of the tenant's jobs went from `from` to `to` (`None`: not yet,
    /// or no longer, a job).
    pub fn moved(&mut self, tenant: &str, from: Option<JobStatus>, to: Option<JobStatus>, n: i64) {
        if from == to || n == 0 {
            return;
        }
        let g = slot(&mut self.gauges, tenant);
        if let Some(slot) = from.and_then(|s| g.slot(s)) {
            *slot -= n;
        }
        if let Some(slot) = to.and_then(|s| g.slot(s)) {
            *slot += n;
        }
        let ended: Option<fn(&mut Spent) -> &mut i64> = match to {
            Some(JobStatus::Completed) => Some(|s| &mut s.completed),
            Some(JobStatus::Failed) => Some(|s| &mut s.failed),
            Some(JobStatus::Cancelled) => Some(|s| &mut s.cancelled),
            _ => None,
        };
        if let Some(field) = ended {
            *field(slot(&mut self.spent, tenant)) += n;
        }
    }

    /// Charges an attempt's cost to its tenant.
    pub fn charge(&mut self, tenant: &str, u: &Usage) {
        let s = slot(&mut self.spent, tenant);
        s.fuel = s.fuel.saturating_add(clamp(u.fuel));
        s.wall_ms = s.wall_ms.saturating_add(clamp(u.wall_ms));
        s.attempts += 1;
    }

    /// The tenant's queued and waiting jobs added by this write so far.
    pub fn pending_queued(&self, tenant: &str) -> i64 {
        self.gauges.get(tenant).map_or(0, |g| g.queued + g.waiting)
    }

    /// Writes the counts; part of the write, so undone with it.
    pub fn apply(self, conn: &Connection) -> StoreResult<()> {
        if !self.gauges.is_empty() {
            let mut stmt = conn
                .prepare_cached(
                    "INSERT INTO tenant_jobs (tenant, queued, running, waiting) VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT (tenant) DO UPDATE SET queued = queued + excluded.queued, \
                     running = running + excluded.running, waiting = waiting + excluded.waiting",
                )
                .map_err(wdb)?;
            for (tenant, g) in &self.gauges {
                stmt.execute(params![tenant, g.queued, g.running, g.waiting])
                    .map_err(wdb)?;
            }
        }
        if !self.spent.is_empty() {
            let mut stmt = conn
                .prepare_cached(
                    "INSERT INTO tenant_usage (tenant, window_start, fuel, wall_ms, attempts, \
                     completed, failed, cancelled) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
                     ON CONFLICT (tenant, window_start) DO UPDATE SET fuel = fuel + excluded.fuel, \
                     wall_ms = wall_ms + excluded.wall_ms, attempts = attempts + excluded.attempts, \
                     completed = completed + excluded.completed, failed = failed + excluded.failed, \
                     cancelled = cancelled + excluded.cancelled",
                )
                .map_err(wdb)?;
            for (tenant, s) in &self.spent {
                stmt.execute(params![
                    tenant,
                    self.window,
                    s.fuel,
                    s.wall_ms,
                    s.attempts,
                    s.completed,
                    s.failed,
                    s.cancelled
                ])
                .map_err(wdb)?;
            }
        }
        Ok(())
    }
}
