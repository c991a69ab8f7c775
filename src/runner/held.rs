//! The jobs a runner holds under lease (claimed, running, or waiting to be
//! finalized): their tokens for heartbeats, a way to stop each attempt, and
//! the progress not yet written.
//!
//! A job is held under one lease at a time. A runner whose lease ran out
//! (stopped past it, say) may claim the same job again under a new one
//! while its copy under the old one still waits or runs: what that copy
//! asks by its own token finds it stopped as lost, and it can neither end
//! nor let go of the new lease.

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

    /// Holds a claimed job. Answers the token of the lease it replaces, if
    /// it was held under another (that copy's attempt is stopped as lost).
    pub fn insert(&self, id: &str, tenant: &str, lease_token: &str) -> Option<String> {
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
        *jobs.per_tenant.entry(tenant.to_owned()).or_default() += 1;
        let old = old?;
        jobs.forget(&old.tenant);
        if old.lease_token == lease_token {
            return None;
        }
        old.cancel.cancel();
        Some(old.lease_token)
    }

    /// Lets go of a job held under this lease (not of a newer one).
    pub fn remove(&self, id: &str, lease_token: &str) {
        let mut jobs = self.jobs();
        if jobs
            .by_id
            .get(id)
            .is_some_and(|e| e.lease_token == lease_token)
        {
            if let Some(old) = jobs.by_id.remove(id) {
                jobs.forget(&old.tenant);
            }
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
    pub fn ended(&self, id: &str, lease_token: &str) {
        if let Some(e) = self.jobs().by_id.get_mut(id) {
            e.ended |= e.lease_token == lease_token;
        }
    }

    pub fn has_ended(&self, id: &str) -> bool {
        self.jobs().by_id.get(id).is_some_and(|e| e.ended)
    }

    /// The token that stops the attempt under this lease (a fresh one if
    /// the job is not held; a cancelled one if it is held under another).
    pub fn cancel_token(&self, id: &str, lease_token: &str) -> CancellationToken {
        match self.jobs().by_id.get(id) {
            Some(e) if e.lease_token == lease_token => e.cancel.clone(),
            Some(_) => {
                let gone = CancellationToken::new();
                gone.cancel();
                gone
            }
            None => CancellationToken::default(),
        }
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

    /// Stops the attempt under this lease as lost (not one under a newer
    /// lease: a renewal that raced a new claim refused only the old one).
    pub fn lose(&self, id: &str, lease_token: &str) -> bool {
        match self.jobs().by_id.get_mut(id) {
            Some(e) if e.lease_token == lease_token => {
                e.stop.get_or_insert(StopReason::Lost);
                e.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Stops every held job's attempt.
    pub fn stop_all(&self, why: StopReason) {
        for e in self.jobs().by_id.values_mut() {
            e.stop.get_or_insert(why);
            e.cancel.cancel();
        }
    }

    /// Why the attempt under this lease was stopped, if it was; one held
    /// under another lease since is lost.
    pub fn stop_reason(&self, id: &str, lease_token: &str) -> Option<StopReason> {
        match self.jobs().by_id.get(id) {
            Some(e) if e.lease_token == lease_token => e.stop,
            Some(_) => Some(StopReason::Lost),
            None => None,
        }
    }

    /// Keeps the latest progress until the next heartbeat writes it.
    pub fn progress(&self, id: &str, lease_token: &str, p: ProgressRecord) {
        if let Some(e) = self.jobs().by_id.get_mut(id) {
            if e.lease_token == lease_token {
                e.progress = Some(p);
            }
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
    use super::{Held, StopReason};

    #[test]
    fn an_ended_attempt_is_known_until_its_job_is_let_go() {
        let held = Held::default();
        assert_eq!(held.insert("j", "t", "token"), None);
        assert!(!held.has_ended("j"));
        held.ended("j", "token");
        assert!(held.has_ended("j"));
        // Claimed again (a new lease): a new attempt, not ended.
        assert_eq!(held.insert("j", "t", "token 2").as_deref(), Some("token"));
        assert!(!held.has_ended("j"));
        held.ended("j", "token 2");
        held.remove("j", "token 2");
        assert!(!held.has_ended("j"));
        held.ended("unknown", "token");
        assert!(!held.has_ended("unknown"));
    }

    #[test]
    fn a_copy_under_an_old_lease_touches_nothing_of_the_new_one() {
        let held = Held::default();
        held.insert("j", "t", "old");
        let old_cancel = held.cancel_token("j", "old");
        // Its lease ran out and this runner claimed the job again.
        assert_eq!(held.insert("j", "t", "new").as_deref(), Some("old"));
        assert!(old_cancel.is_cancelled(), "the old copy's attempt stops");
        assert_eq!(held.stop_reason("j", "old"), Some(StopReason::Lost));
        assert!(held.cancel_token("j", "old").is_cancelled());
        assert_eq!(held.stop_reason("j", "new"), None);
        assert!(!held.cancel_token("j", "new").is_cancelled());
        // A renewal of the old lease refused, and the old copy's end or
        // release, leave the new lease held, running and renewed.
        assert!(!held.lose("j", "old"));
        held.ended("j", "old");
        held.remove("j", "old");
        assert!(held.contains("j") && !held.has_ended("j"));
        assert_eq!(held.of_tenant("t"), 1);
        assert_eq!(held.snapshot().leases, [("j".to_owned(), "new".to_owned())]);
        assert!(held.lose("j", "new"));
        assert_eq!(held.stop_reason("j", "new"), Some(StopReason::Lost));
        held.remove("j", "new");
        assert!(held.is_empty());
        assert_eq!(held.of_tenant("t"), 0);
    }
}
