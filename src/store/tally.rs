//! Per-tenant counts a write changes (jobs queued, running and waiting;
//! usage in the current window) and the events it reports (its outbox),
//! gathered while the write runs and applied at its end by the backend:
//! one row update per tenant per write, and one event row, in the same
//! transaction as the changes they count and report. What a move counts
//! is decided here, for every backend.

use super::outbox::Outbox;
use super::records::{landing, StepWrite};
use super::records::{Finalize, JobRecord, Usage};
use super::Millis;
use crate::job::JobStatus;
use crate::quota::window_start;
use std::collections::HashMap;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Gauges {
    pub queued: i64,
    pub running: i64,
    pub waiting: i64,
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

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Spent {
    pub fuel: i64,
    pub wall_ms: i64,
    pub attempts: i64,
    pub http_requests: i64,
    pub http_bytes: i64,
    pub completed: i64,
    pub failed: i64,
    pub cancelled: i64,
    /// Jobs a result cache completed, and the fuel their sources burned.
    pub cache_hits: i64,
    pub fuel_saved: i64,
}

/// What one write changed, by tenant.
pub struct Tally {
    now: Millis,
    window: Millis,
    /// The events the write reports, written with its counts.
    pub outbox: Outbox,
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
            now,
            window: window_start(now),
            outbox: Outbox::default(),
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

    /// An attempt's end that landed its job in `status`: the job counted
    /// out of running, its stages' ends reported before its own (they come
    /// first). The backend writes the stage rows (`records::landing`).
    pub fn landed(&mut self, f: &Finalize, status: JobStatus) {
        self.moved(&f.tenant, Some(JobStatus::Running), Some(status), 1);
        let job = super::outbox::named(&f.names, &f.id, &f.tenant);
        if !f.steps.is_empty() {
            let steps = landing(&f.steps, status);
            self.outbox.steps(job, &steps, self.now);
        }
        self.outbox.ending(job, &f.action, status, self.now);
    }

    /// What a cancel that hands a workflow job not running to its
    /// `on_cancel` chain (`Write::JobCancelStages`) counts and reports: the
    /// job queued again, its stages settled, the reason.
    pub fn handed_over(&mut self, job: &JobRecord, steps: &[StepWrite]) {
        if job.status != JobStatus::Queued {
            self.moved(&job.tenant, Some(job.status), Some(JobStatus::Queued), 1);
        }
        let about = super::outbox::about(job);
        self.outbox.steps(about, steps, self.now);
        let reason = format!(r#"{{"reason":"on_cancel","run_at":{}}}"#, self.now);
        self.outbox
            .push(crate::events::EventType::Queued, about, Some(&reason));
    }

    /// Charges an attempt's cost to its tenant.
    pub fn charge(&mut self, tenant: &str, u: &Usage) {
        let s = slot(&mut self.spent, tenant);
        s.fuel = s.fuel.saturating_add(clamp(u.fuel));
        s.wall_ms = s.wall_ms.saturating_add(clamp(u.wall_ms));
        s.attempts += 1;
        s.http_requests = s.http_requests.saturating_add(clamp(u.http_requests));
        s.http_bytes = s.http_bytes.saturating_add(clamp(u.http_bytes));
    }

    /// A job the result cache completed as it went in, saving the fuel
    /// its source burned: counted as made and completed, reported as
    /// enqueued and completed (naming its source), with no attempt.
    pub fn cached(&mut self, job: &JobRecord, fuel_saved: u64) {
        self.moved(&job.tenant, None, Some(JobStatus::Completed), 1);
        let s = slot(&mut self.spent, &job.tenant);
        s.cache_hits += 1;
        s.fuel_saved = s.fuel_saved.saturating_add(clamp(fuel_saved));
        let about = super::outbox::about(job);
        self.outbox
            .push(crate::events::EventType::Queued, about, None);
        let from = job.cached_from.as_deref().unwrap_or_default();
        self.outbox.push(
            crate::events::EventType::Completed,
            about,
            Some(&super::outbox::cached(from)),
        );
    }

    /// Adds what another tally of the same write counted and reported.
    pub fn absorb(&mut self, other: Tally) {
        self.outbox.absorb(other.outbox);
        for (tenant, g) in other.gauges {
            let mine = slot(&mut self.gauges, &tenant);
            mine.queued += g.queued;
            mine.running += g.running;
            mine.waiting += g.waiting;
        }
        for (tenant, s) in other.spent {
            let mine = slot(&mut self.spent, &tenant);
            mine.fuel = mine.fuel.saturating_add(s.fuel);
            mine.wall_ms = mine.wall_ms.saturating_add(s.wall_ms);
            mine.attempts += s.attempts;
            mine.http_requests = mine.http_requests.saturating_add(s.http_requests);
            mine.http_bytes = mine.http_bytes.saturating_add(s.http_bytes);
            mine.completed += s.completed;
            mine.failed += s.failed;
            mine.cancelled += s.cancelled;
            mine.cache_hits += s.cache_hits;
            mine.fuel_saved = mine.fuel_saved.saturating_add(s.fuel_saved);
        }
    }

    /// The tenant's queued and waiting jobs added by this write so far.
    pub fn pending_queued(&self, tenant: &str) -> i64 {
        self.gauges.get(tenant).map_or(0, |g| g.queued + g.waiting)
    }

    /// The time the write decides by, by the store's clock.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The window the usage is charged to.
    pub fn window(&self) -> Millis {
        self.window
    }

    /// The gauges' changes, by tenant name: a backend that locks a row per
    /// tenant takes them in this order, so that two writes never wait for
    /// each other in a cycle.
    pub fn gauges(&self) -> Vec<(&str, Gauges)> {
        let mut v: Vec<_> = self.gauges.iter().map(|(t, g)| (t.as_str(), *g)).collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }

    /// The usage charged, by tenant name.
    pub fn spent(&self) -> Vec<(&str, Spent)> {
        let mut v: Vec<_> = self.spent.iter().map(|(t, s)| (t.as_str(), *s)).collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }
}
