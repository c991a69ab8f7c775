//! The jobs a runner holds under lease (claimed, running, or waiting to be
//! finalized): their tokens for heartbeats, a way to stop each attempt, and
//! the progress not yet written.

use crate::store::ProgressRecord;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Why a held attempt was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The job was cancelled through the API.
    Cancel,
    /// The lease is gone (expired and rescued, or taken): write nothing.
    Lost,
    /// The runner is stopping: give the job back.
    Shutdown,
}

struct Entry {
    tenant: String,
    lease_token: String,
    cancel: CancellationToken,
    stop: Option<StopReason>,
    progress: Option<ProgressRecord>,
    /// Its attempt ended; its end is being written.
    ended: bool,
}

/// What a heartbeat writes.
pub struct Snapshot {
    /// (job id, lease token) of every held job.
    pub leases: Vec<(String, String)>,
    /// (job id, lease token, progress) reported since the last heartbeat.
    pub progress: Vec<(String, String, ProgressRecord)>,
}

/// Shared by the claim loop, the attempts, the heartbeat and the API.
#[derive(Clone, Default)]
pub struct Held(Arc<Mutex<Jobs>>);

#[derive(Default)]
struct Jobs {
    by_id: HashMap<String, Entry>,
    /// How many are each tenant's.
    per_tenant: HashMap<String, usize>,
}

impl Held {
    fn jobs(&self) -> std::sync::MutexGuard<'_, Jobs> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many held jobs are this tenant's.
    pub fn of_tenant(&self, tenant: &str) -> usize {
        self.jobs().per_tenant.get(tenant).copied().unwrap_or(0)
    }

    pub fn insert(&self, id: &str, tenant: &str, lease_token: &str) {
        let mut jobs = self.jobs();
        let old = jobs.by_id.insert(
            id.to_owned(),
            Entry {
                tenant: tenant.to_owned(),
                lease_token: lease_token.to_owned(),
                cancel: CancellationToken::new(),
                stop: None,
                progress: None,
                ended: false,
            },
        );
        if let Some(old) = old {
            jobs.forget(&old.tenant);
        }
        *jobs.per_tenant.entry(tenant.to_owned()).or_default() += 1;
    }

    pub fn remove(&self, id: &str) {
        let mut jobs = self.jobs();
        if let Some(old) = jobs.by_id.remove(id) {
            jobs.forget(&old.tenant);
        }
    }

    pub fn len(&self) -> usize {
        self.jobs().by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, id: &str) -> bool {
        self.jobs().by_id.contains_key(id)
    }

    /// Its attempt ended and its end is on the way to the store: a renewal
    /// refused from now on only means that the end was written first.
    pub fn ended(&self, id: &str) {
        if let Some(e) = self.jobs().by_id.get_mut(id) {
            e.ended = true;
        }
    }

    pub fn has_ended(&self, id: &str) -> bool {
        self.jobs().by_id.get(id).is_some_and(|e| e.ended)
    }

    /// The token that stops this job's attempt (a fresh one if not held).
    pub fn cancel_token(&self, id: &str) -> CancellationToken {
        self.jobs()
            .by_id
            .get(id)
            .map(|e| e.cancel.clone())
            .unwrap_or_default()
    }

    /// Stops a held job's attempt; the first reason given wins. Returns
    /// whether the job was held here.
    pub fn stop(&self, id: &str, why: StopReason) -> bool {
        match self.jobs().by_id.get_mut(id) {
            Some(e) => {
                e.stop.get_or_insert(why);
                e.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Stops every held job's attempt.
    pub fn stop_all(&self, why: StopReason) {
        for e in self.jobs().by_id.values_mut() {
            e.stop.get_or_insert(why);
            e.cancel.cancel();
        }
    }

    pub fn stop_reason(&self, id: &str) -> Option<StopReason> {
        self.jobs().by_id.get(id).and_then(|e| e.stop)
    }

    /// Keeps the latest progress until the next heartbeat writes it.
    pub fn progress(&self, id: &str, p: ProgressRecord) {
        if let Some(e) = self.jobs().by_id.get_mut(id) {
            e.progress = Some(p);
        }
    }

    /// Every lease held, and the progress reported since last time.
    pub fn snapshot(&self) -> Snapshot {
        let mut jobs = self.jobs();
        let mut leases = Vec::with_capacity(jobs.by_id.len());
        let mut progress = Vec::new();
        for (id, e) in jobs.by_id.iter_mut() {
            leases.push((id.clone(), e.lease_token.clone()));
            if let Some(p) = e.progress.take() {
                progress.push((id.clone(), e.lease_token.clone(), p));
            }
        }
        Snapshot { leases, progress }
    }

    /// Whether any progress waits to be written.
    pub fn has_progress(&self) -> bool {
        self.jobs().by_id.values().any(|e| e.progress.is_some())
    }
}

impl Jobs {
    fn forget(&mut self, tenant: &str) {
        if let Some(n) = self.per_tenant.get_mut(tenant) {
            *n -= 1;
            if *n == 0 {
                self.per_tenant.remove(tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Held;

    #[test]
    fn an_ended_attempt_is_known_until_its_job_is_let_go() {
        let held = Held::default();
        held.insert("j", "t", "token");
        assert!(!held.has_ended("j"));
        held.ended("j");
        assert!(held.has_ended("j"));
        // Claimed again (a new lease): a new attempt, not ended.
        held.insert("j", "t", "token 2");
        assert!(!held.has_ended("j"));
        held.ended("j");
        held.remove("j");
        assert!(!held.has_ended("j"));
        held.ended("unknown");
        assert!(!held.has_ended("unknown"));
    }
}
