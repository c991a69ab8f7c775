//! What a claim takes and answers, the leased job a runner holds, its heartbeats, and the rescue of lost leases.

use super::*;

#[derive(Debug, Clone)]
pub struct ClaimParams {
    pub owner: String,
    /// `None`: every queue.
    pub queues: Option<Vec<String>>,
    pub limit: u32,
    pub lease_ms: u64,
    /// `Some`: claim only these tenants' jobs (a runner claiming at once
    /// for tenants that just got a job and have none waiting there). The
    /// store takes such a claim ahead of bulk writes.
    pub only_tenants: Option<Vec<String>>,
    /// How many of each tenant's claimed jobs (the first, in its order)
    /// are taken begun: the runner starts them at once. The rest must be
    /// marked (`job_begin`) before they start. 0: none; `u32::MAX`: all.
    pub begin_each: u32,
    /// Most jobs of each tenant this claim may take (what the runner
    /// would hold ahead of that tenant's attempts); the default: no cap.
    pub caps: TenantCaps,
}

/// How many jobs of each tenant one claim may take: a runner claims ahead
/// of each tenant by that tenant's own cost, so that a tenant whose
/// attempts are long cannot fill a runner with jobs claimed ahead while
/// another waits (DESIGN §3.4.0d).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenantCaps {
    /// The cap of a tenant not named: `None`, none.
    pub others: Option<u32>,
    /// Named tenants' caps.
    pub named: std::collections::HashMap<String, u32>,
}

impl TenantCaps {
    /// The most jobs of `tenant` the claim may take.
    pub fn of(&self, tenant: &str) -> u64 {
        self.named
            .get(tenant)
            .copied()
            .or(self.others)
            .map_or(u64::MAX, u64::from)
    }

    /// Counts a part of the claim's jobs against the caps (a claim made
    /// of several writes: what one took, the next may not).
    pub fn took(&mut self, jobs: &[ClaimedJob]) {
        if self.others.is_none() && self.named.is_empty() {
            return;
        }
        for job in jobs {
            let cap = u32::try_from(self.of(&job.tenant)).unwrap_or(u32::MAX);
            if cap != u32::MAX || self.named.contains_key(&job.tenant) {
                self.named.insert(job.tenant.clone(), cap.saturating_sub(1));
            }
        }
    }
}

/// What a claim took, and whether another claim could take more before
/// anything new is enqueued.
#[derive(Debug, Default)]
pub struct Claim {
    pub jobs: Vec<ClaimedJob>,
    /// It left a due job behind for a reason an end may lift (its tenant
    /// at `max_running` or out of fuel, its concurrency key running, more
    /// tenants or jobs than one claim looks at), or it was full. `false`:
    /// every tenant it saw ran out of due jobs this runner serves, so an
    /// end of this runner's makes nothing claimable (a retry it schedules
    /// is a new due time), and only an enqueue, a due time or a rescue is
    /// worth another claim.
    pub passed_over: bool,
}

/// A tenant's fuel budget in the current window, as a claim saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FuelWindow {
    pub start: Millis,
    pub budget: u64,
    pub used: u64,
}

/// A job a runner holds under a lease: what one attempt needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedJob {
    pub id: String,
    pub tenant: String,
    /// The task this attempt runs: the job's own, or its fallback.
    pub task: TaskRef,
    /// The input this attempt gets (a fallback's is `{input, error}`).
    pub input: String,
    pub queue: String,
    /// This attempt's number within the task running, from 1.
    pub attempt: u32,
    /// Attempts of the job in all, this one included.
    pub attempts: u32,
    pub max_attempts: u32,
    pub deadline_at: Option<Millis>,
    /// How many fallbacks deep the job is (0: its own task).
    pub fallback_depth: u32,
    /// How often the job has snoozed so far.
    pub snoozes: u32,
    pub started_at: Millis,
    pub lease_token: String,
    /// The tenant's fuel budget when it was claimed, if it has one.
    pub fuel: Option<FuelWindow>,
    /// The job's own task, when the attempt runs its fallback (`task`):
    /// what its events name it by.
    pub own_task: Option<String>,
    /// Whether the attempt has begun: its runner marked it (`job_begin`),
    /// or claimed it begun, just before starting its guest. A rescue gives
    /// one that never began back to the queue without spending an attempt.
    pub begun: bool,
    /// When the job was due (enqueued, or queued again): the start delay
    /// is measured from it.
    pub due_at: Millis,
    /// How many callbacks deep the job is (its callbacks are one deeper).
    pub callback_depth: u32,
    /// Its fairness key (its own, or else its concurrency key): what its
    /// end charges within its tenant's share (`fair_keys`).
    pub fair_key: Option<String>,
    /// The trace it continues, if not its own (`otel::TraceParent::of_job`).
    pub traceparent: Option<String>,
    /// Its tenant's weight as the claim read it (1 where a claim did not
    /// read it): the runner's dispatch shares its slots by it.
    pub weight: u32,
}

impl ClaimedJob {
    /// What the events of this attempt's end name: the job's own task,
    /// its queue and its attempts, this one included.
    pub fn names(&self) -> JobNames {
        JobNames {
            task: self
                .own_task
                .clone()
                .unwrap_or_else(|| self.task.name.clone()),
            queue: self.queue.clone(),
            attempts: self.attempts,
            fair_key: self.fair_key.clone(),
        }
    }
}

/// What the events of an attempt's end name, as its claim read them (so
/// that the end's write need not read them back).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobNames {
    pub task: String,
    pub queue: String,
    pub attempts: u32,
    /// The job's fairness key, which its end charges (`fair::charge_ends`).
    pub fair_key: Option<String>,
}

#[derive(Debug, Clone)]
pub struct HeartbeatParams {
    pub owner: String,
    /// Leases to extend: (job id, lease token).
    pub leases: Vec<(String, String)>,
    pub lease_ms: u64,
    /// Progress to record: (job id, lease token, progress).
    pub progress: Vec<(String, String, ProgressRecord)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeartbeatReply {
    /// Jobs whose lease this owner no longer holds: stop them.
    pub lost: Vec<String>,
    /// Jobs whose cancellation was asked for: stop them.
    pub cancel: Vec<String>,
}

/// Who takes over the leases of running jobs whose runner was lost.
#[derive(Debug, Clone)]
pub struct RescueParams {
    pub owner: String,
    pub lease_ms: u64,
    /// Every running job, not only those whose lease expired: a store that
    /// owns its database alone, at start.
    pub all_running: bool,
    /// Most jobs taken over at once, those whose lease expired first
    /// first: what is taken must be decided before the rescuer's own lease
    /// on it runs out, or another process's rescuer takes it over again.
    pub limit: u32,
}

/// The lowest of a key's `limit` slots not taken, if any is free.
pub fn free_slot(taken: &[i64], limit: i64) -> Option<i64> {
    (0..limit).find(|s| !taken.contains(s))
}
