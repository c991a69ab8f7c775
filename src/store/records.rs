//! What the store keeps and what its calls take: plain records, the same for
//! every backend. JSON values are kept as their text; times as Unix ms.

use super::Millis;
use crate::attempt_log::AttemptLog;
use crate::job::{JobError, JobStatus};
use crate::quota::Quotas;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tenant {
    pub name: String,
    pub created_at: Millis,
    /// Its share of the runners against other tenants'; `None`: the default.
    pub weight: Option<u32>,
    /// The quotas the admin set; the others are the server's defaults.
    pub quotas: Quotas,
}

/// What the admin sets on a tenant; everything left out is the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantSettings {
    pub name: String,
    pub weight: Option<u32>,
    pub quotas: Quotas,
}

/// How many of a tenant's jobs are in each unfinished state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct JobGauges {
    pub queued: u64,
    pub running: u64,
    pub waiting: u64,
}

/// What a tenant used in one window (a minute, by the store's clock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UsageWindow {
    pub start: Millis,
    pub fuel: u64,
    pub wall_ms: u64,
    pub attempts: u64,
    /// Outbound HTTP requests its guests made.
    pub http_requests: u64,
    /// Outbound HTTP body bytes its guests sent and received.
    pub http_bytes: u64,
    /// Jobs that ended in the window, by how.
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
}

/// A tenant's usage now: its jobs, and the current and the last window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TenantUsage {
    pub jobs: JobGauges,
    pub current: UsageWindow,
    pub last: UsageWindow,
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum Scope {
    #[serde(rename = "tasks:write")]
    TasksWrite,
    #[serde(rename = "jobs:queue")]
    JobsQueue,
    #[serde(rename = "jobs:run")]
    JobsRun,
    #[serde(rename = "jobs:cancel")]
    JobsCancel,
    #[serde(rename = "jobs:read")]
    JobsRead,
    #[serde(rename = "schedules:write")]
    SchedulesWrite,
    #[serde(rename = "webhooks:write")]
    WebhooksWrite,
    /// `GET /metrics`: the process's figures, of every tenant.
    #[serde(rename = "metrics:read")]
    MetricsRead,
    /// Put, list and delete the tenant's secrets (never read their values).
    #[serde(rename = "secrets:write")]
    SecretsWrite,
}

impl Scope {
    pub const ALL: [Scope; 9] = [
        Scope::TasksWrite,
        Scope::JobsQueue,
        Scope::JobsRun,
        Scope::JobsCancel,
        Scope::JobsRead,
        Scope::SchedulesWrite,
        Scope::WebhooksWrite,
        Scope::MetricsRead,
        Scope::SecretsWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::TasksWrite => "tasks:write",
            Scope::JobsQueue => "jobs:queue",
            Scope::JobsRun => "jobs:run",
            Scope::JobsCancel => "jobs:cancel",
            Scope::JobsRead => "jobs:read",
            Scope::SchedulesWrite => "schedules:write",
            Scope::WebhooksWrite => "webhooks:write",
            Scope::MetricsRead => "metrics:read",
            Scope::SecretsWrite => "secrets:write",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

#[derive(Debug, Clone)]
pub struct NewComponent {
    pub tenant: String,
    pub digest: String,
    pub abi: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComponentRecord {
    pub digest: String,
    pub size: u64,
    pub abi: String,
    #[serde(skip)]
    pub created_at: Millis,
}

#[derive(Debug, Clone)]
pub struct NewTask {
    pub tenant: String,
    pub name: String,
    pub digest: String,
    /// The task definition, JSON text (a `registry::spec::TaskSpec`).
    pub spec: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    pub tenant: String,
    pub name: String,
    pub version: u32,
    pub digest: String,
    pub spec: String,
    pub created_at: Millis,
}

/// A task version pinned into a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TaskRef {
    pub name: String,
    pub version: u32,
    pub digest: String,
}

/// A job to insert. The caller has validated the input and pinned the task.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub id: String,
    pub tenant: String,
    pub task: TaskRef,
    pub queue: String,
    pub priority: i32,
    pub input: String,
    pub max_attempts: u32,
    /// When it becomes due, resolved by the store's clock at the insert.
    pub run_at: RunAt,
    /// Relative to the insert: the job fails `deadline_exceeded` past it.
    pub deadline_ms: Option<u64>,
    /// Schedule-to-start timeout: still queued this long after it came
    /// due (its run_at), the job fails `expired` without running.
    pub expire_after_ms: Option<u64>,
    pub concurrency_key: Option<String>,
    /// How many jobs of the concurrency key may run at once (`None`: 1).
    pub concurrency_limit: Option<u32>,
    /// Whether a new job with this concurrency key cancels the queued ones.
    pub supersedes: bool,
    pub unique_key: Option<String>,
    /// What an insert whose unique key is held answers.
    pub on_conflict: OnConflict,
    /// Whether a unique key of finished jobs may be used again.
    pub reuse: Reuse,
    pub idempotency: Option<Idempotency>,
    /// How many callbacks deep it is: 0 unless it is a task's `on_success`
    /// or `on_fail` job (its parent's and one more).
    pub callback_depth: u32,
}

/// What an insert answers when an unfinished job holds its unique key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnConflict {
    /// A conflict (409).
    #[default]
    Error,
    /// The job that holds it (200).
    UseExisting,
}

/// Whether a unique key that finished jobs had may be used again
/// (Temporal's workflow-id reuse policy). An unfinished job always holds
/// its key alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reuse {
    /// By any new job.
    #[default]
    Allow,
    /// Only when none of the jobs that had it completed.
    AllowFailedOnly,
    /// Never: one job per key, ever (until it is pruned).
    Reject,
}

/// A queue of a tenant's as listed: its jobs by status, and the run_at of
/// its oldest due queued job (how long the head of the line has waited).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueDepth {
    pub queue: String,
    /// Every status, in `JobStatus::ALL`'s order, with 0 where there are none.
    pub counts: Vec<(JobStatus, u64)>,
    pub oldest_due_run_at: Option<Millis>,
    /// Its jobs are not claimed (enqueue still works).
    pub paused: bool,
}

/// Jobs that had a unique key and have finished.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FinishedWithKey {
    pub any: bool,
    pub completed: bool,
}

impl NewJob {
    /// What the store answers for this job given who holds its unique key
    /// (an unfinished job) and which finished jobs had it: `Ok(None)` to
    /// insert it; the holder (`use_existing`); or a conflict. Decided
    /// here for every backend.
    pub fn unique_verdict(
        &self,
        holder: Option<JobRecord>,
        finished: FinishedWithKey,
    ) -> Result<Option<Inserted>, super::StoreError> {
        let Some(key) = &self.unique_key else {
            return Ok(None);
        };
        if let Some(h) = holder {
            return match self.on_conflict {
                OnConflict::UseExisting => Ok(Some(Inserted::Existing(h))),
                OnConflict::Error => Err(super::StoreError::Conflict(format!(
                    "job {} with unique_key {key:?} has not finished yet; a unique key admits one unfinished job at a time (\"on_conflict\": \"use_existing\" answers that job instead)",
                    h.id
                ))),
            };
        }
        let refused = match self.reuse {
            Reuse::Allow => None,
            Reuse::AllowFailedOnly if finished.completed => {
                Some("a job with it completed, and reuse is allow_failed_only")
            }
            Reuse::Reject if finished.any => Some("a job had it, and reuse is reject"),
            _ => None,
        };
        match refused {
            Some(why) => Err(super::StoreError::Conflict(format!(
                "unique_key {key:?} cannot be used again: {why}"
            ))),
            None => Ok(None),
        }
    }
}

impl NewJob {
    /// A job due now on the default queue, with no keys, deadline or
    /// idempotency: what the conformance suite and the benchmark insert.
    pub fn plain(
        id: impl Into<String>,
        tenant: impl Into<String>,
        task: TaskRef,
        input: impl Into<String>,
    ) -> NewJob {
        NewJob {
            id: id.into(),
            tenant: tenant.into(),
            task,
            queue: "default".into(),
            priority: 0,
            input: input.into(),
            max_attempts: 3,
            run_at: RunAt::Now,
            deadline_ms: None,
            expire_after_ms: None,
            concurrency_key: None,
            concurrency_limit: None,
            supersedes: false,
            unique_key: None,
            on_conflict: OnConflict::Error,
            reuse: Reuse::Allow,
            idempotency: None,
            callback_depth: 0,
        }
    }

    /// The job as it is once inserted, due at `run_at` (resolved) and
    /// written at `now`: what a store answers without reading it back.
    pub fn into_record(self, now: Millis, run_at: Millis) -> JobRecord {
        JobRecord {
            deadline_at: self
                .deadline_ms
                .map(|d| now.saturating_add(i64::try_from(d).unwrap_or(i64::MAX))),
            id: self.id,
            tenant: self.tenant,
            task: self.task,
            status: crate::job::JobStatus::Queued,
            queue: self.queue,
            priority: self.priority,
            input: self.input,
            output: None,
            error: None,
            attempts: 0,
            max_attempts: self.max_attempts,
            run_at,
            created_at: now,
            started_at: None,
            finished_at: None,
            expire_after_ms: self.expire_after_ms,
            concurrency_key: self.concurrency_key,
            unique_key: self.unique_key,
            progress: None,
            waiting_for: None,
            fallback: None,
            cancel_requested: false,
        }
    }
}

/// When a job becomes due. Relative times are resolved by the store, by the
/// database's clock, in the write that uses them: with many processes on
/// one database, only its clock is the same for all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RunAt {
    #[default]
    Now,
    /// This many milliseconds after the write.
    After(u64),
    /// At this time; a time in the past is now (it buys no place in the line).
    At(Millis),
}

impl RunAt {
    /// The time this is, at `now` by the store's clock.
    pub fn resolve(self, now: Millis) -> Millis {
        match self {
            RunAt::Now => now,
            RunAt::After(ms) => now.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX)),
            RunAt::At(t) => t.max(now),
        }
    }
}

/// A failed job to re-drive: a new series of `attempts` attempts, on
/// `task` (a newer version of its task) or, when `None`, on the version
/// and digest it pinned.
#[derive(Debug, Clone, PartialEq)]
pub struct Redrive {
    pub id: String,
    pub task: Option<TaskRef>,
    pub attempts: u32,
    /// A workflow job's stage to start again at, with its input, and the
    /// stage rows that go back to pending (`workflow::plan::restart`).
    pub stage: Option<Box<(TaskRef, String, Vec<crate::store::StepWrite>)>>,
}

/// An `Idempotency-Key` and the hash of the request it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    pub key: String,
    pub body_hash: String,
}

#[derive(Debug, Clone)]
pub enum Inserted {
    Created(JobRecord),
    /// The same idempotency key and body were seen before: that job.
    Existing(JobRecord),
}

impl Inserted {
    pub fn job(&self) -> &JobRecord {
        match self {
            Inserted::Created(j) | Inserted::Existing(j) => j,
        }
    }
}

/// The guest's latest progress report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProgressRecord {
    pub percent: u8,
    pub note: String,
}

/// A job as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    pub id: String,
    pub tenant: String,
    pub task: TaskRef,
    pub status: JobStatus,
    pub queue: String,
    pub priority: i32,
    pub input: String,
    pub output: Option<String>,
    pub error: Option<JobError>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub run_at: Millis,
    pub created_at: Millis,
    pub started_at: Option<Millis>,
    pub finished_at: Option<Millis>,
    pub deadline_at: Option<Millis>,
    /// A queued job fails `expired` this long after it came due (run_at).
    pub expire_after_ms: Option<u64>,
    pub concurrency_key: Option<String>,
    pub unique_key: Option<String>,
    pub progress: Option<ProgressRecord>,
    /// What a waiting job waits for (JSON text from the guest).
    pub waiting_for: Option<String>,
    /// The fallback task running (or that ran) in place of `task`.
    pub fallback: Option<TaskRef>,
    pub cancel_requested: bool,
}

/// Which jobs to list, newest first.
#[derive(Debug, Clone, Default)]
pub struct JobQuery {
    pub tenant: String,
    pub status: Option<JobStatus>,
    pub task: Option<String>,
    pub queue: Option<String>,
    pub limit: u32,
    /// Only jobs older than this id (the previous page's last).
    pub before: Option<String>,
    /// Stop adding jobs once their inputs, outputs and errors pass this
    /// many bytes (at least one job is listed): a page's memory is bounded.
    pub max_bytes: usize,
}

/// One page of a job list.
#[derive(Debug, Clone, Default)]
pub struct JobPage {
    pub jobs: Vec<JobRecord>,
    /// The page stopped at its byte budget before its limit: more follow.
    pub cut: bool,
}

/// Which attempts of a job to list, oldest first.
#[derive(Debug, Clone)]
pub struct AttemptQuery {
    pub tenant: String,
    pub job_id: String,
    /// Only attempts after this number (the previous page's last).
    pub after: Option<u32>,
    pub limit: u32,
}

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

/// One attempt, as recorded for `GET /v1/jobs/{id}/attempts`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptRecord {
    pub attempt: u32,
    pub task: TaskRef,
    pub started_at: Millis,
    pub finished_at: Millis,
    /// `completed`, `failed`, `retried`, `snoozed`, `waiting`, `cancelled`
    /// or `fallback` (a lost attempt is one of these, with a `runner_lost`
    /// error).
    pub outcome: String,
    pub error: Option<JobError>,
    pub fuel_used: u64,
    pub peak_memory_bytes: u64,
    pub log: Option<AttemptLog>,
    /// What its outbound HTTP did, if it made or was refused any request.
    pub network: Option<crate::network_tally::NetworkTally>,
}

/// What to do with a job once its attempt is over.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Complete {
        output: String,
    },
    /// Run again after the backoff.
    Retry {
        delay_ms: u64,
        error: JobError,
    },
    /// Fail for good.
    Fail {
        error: JobError,
    },
    /// Run again after the delay, without using up an attempt.
    Snooze {
        delay_ms: u64,
    },
    Wait {
        waiting_for: String,
    },
    /// The cancellation asked for took effect.
    Cancel,
    /// Failed for good; the task's fallback runs next, on this input.
    Fallback {
        task: TaskRef,
        input: String,
        max_attempts: u32,
        error: JobError,
    },
    /// Give the job back without counting the attempt: the runner is
    /// stopping (no delay), or had no sandbox for it (a delay, so that a
    /// full pool is not met again at once).
    Release {
        delay_ms: u64,
    },
    /// A workflow's stage is over and the next one takes over at once, on
    /// this input, with this many attempts of its own: the next step, a
    /// step's fallback, or the first of its `on_error` (`error`: the
    /// failure that set it off) or `on_cancel` (`cancelled`) chain.
    Advance {
        task: TaskRef,
        input: String,
        max_attempts: u32,
        error: Option<JobError>,
        /// This stage is the answer to the job's cancellation (its
        /// `on_cancel` chain): the request is cleared.
        cancelled: bool,
        /// A cancellation asked for during the attempt ends the job here
        /// (it has no `on_cancel` chain to run).
        cancel_wins: bool,
    },
    /// A workflow's `on_error` chain (`error`: the failure the job ends
    /// with) or `on_cancel` chain (`None`) is over: the job ends failed or
    /// cancelled, its output the final context.
    Conclude {
        output: String,
        error: Option<JobError>,
    },
}

/// One finished attempt to write, fenced by its lease token.
#[derive(Debug, Clone)]
pub struct Finalize {
    pub id: String,
    /// The job's tenant, as its claim said.
    pub tenant: String,
    pub lease_token: String,
    pub action: Action,
    /// `None` for `Release`: an attempt that did not happen.
    pub attempt: Option<AttemptRecord>,
    /// What the attempt cost its tenant; charged even when the write is
    /// fenced out (the guest ran all the same).
    pub usage: Option<Usage>,
    /// Jobs to enqueue with the end, as the job lands (its task's
    /// `on_success` and `on_fail`).
    pub callbacks: Option<Box<Callbacks>>,
    /// What the end's events name.
    pub names: JobNames,
    /// A workflow job's stages the end changes, written with it.
    pub steps: Vec<crate::store::StepWrite>,
    /// What becomes of the job's unfinished children if the end ends it
    /// (`None`: they go on).
    pub close_children: Option<crate::parent_close::ParentClose>,
}

impl Finalize {
    /// Gives a claimed job back without an attempt (uncounted), to be
    /// claimed again after `delay_ms`.
    pub fn release(job: &ClaimedJob, delay_ms: u64) -> Finalize {
        Finalize {
            id: job.id.clone(),
            tenant: job.tenant.clone(),
            lease_token: job.lease_token.clone(),
            action: Action::Release { delay_ms },
            attempt: None,
            usage: None,
            callbacks: None,
            names: job.names(),
            steps: Vec::new(),
            close_children: None,
        }
    }
}

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

/// A task's callbacks for one attempt's end: inserted in the end's
/// transaction, the one that matches where the job lands (a completion,
/// or a failure for good; a job that a pending cancel stops runs none),
/// so exactly once. Not held to the tenant's `max_queued`: each comes of
/// a job the tenant was already granted, one for one.
#[derive(Debug, Clone, Default)]
pub struct Callbacks {
    pub on_success: Option<NewJob>,
    pub on_fail: Option<NewJob>,
}

impl Callbacks {
    /// The job to enqueue for a job that landed in `status`.
    pub fn landing(&self, status: JobStatus) -> Option<&NewJob> {
        match status {
            JobStatus::Completed => self.on_success.as_ref(),
            JobStatus::Failed => self.on_fail.as_ref(),
            _ => None,
        }
    }
}

/// What one attempt cost, charged to its tenant's current window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    pub fuel: u64,
    pub wall_ms: u64,
    /// Outbound HTTP requests that went out.
    pub http_requests: u64,
    /// Outbound HTTP body bytes, sent and received.
    pub http_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finalized {
    /// The job's status after the write.
    Done(JobStatus),
    /// The lease was gone: nothing was written.
    Fenced,
}

#[derive(Debug, Clone)]
pub enum CancelOutcome {
    /// It was queued or waiting, and is cancelled.
    Cancelled(JobRecord),
    /// It is running; its runner has been asked to stop it.
    Requested(JobRecord),
    /// It had ended already.
    AlreadyEnded(JobRecord),
    /// A workflow job that was queued or waiting: its `on_cancel` chain
    /// runs now, and the job ends cancelled after it.
    Handed(JobRecord),
}

/// A cancel of a workflow job that is not running (`Write::JobCancelStages`):
/// its stages settle, and its `on_cancel` chain, if it has one, takes over
/// (task, input, attempts). A job that is running meanwhile is asked to
/// stop, as any cancel does, and its runner settles it.
#[derive(Debug, Clone)]
pub struct CancelStages {
    pub tenant: String,
    pub id: String,
    pub on_cancel: Option<(TaskRef, String, u32)>,
    pub steps: Vec<crate::store::StepWrite>,
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

/// One write of a transaction (`JobStore::apply`), as data, so that any
/// backend applies the same list in one transaction of its own.
#[derive(Debug, Clone)]
pub enum Write {
    /// As `job_insert`, for one job; an idempotent repeat answers the job
    /// that exists.
    JobInsert(NewJob),
    /// As `job_finalize`, for one attempt; fenced out, it fails the whole.
    JobFinalize(Box<Finalize>),
    JobCancel {
        tenant: String,
        id: String,
    },
    JobResume {
        tenant: String,
        id: String,
        input: Option<String>,
    },
    JobRunNow {
        tenant: String,
        id: String,
    },
    /// As `schedule_put`: a refused one (its rev moved on) fails the whole,
    /// so a slot's job is written only by the write that moves its
    /// schedule past the slot.
    SchedulePut(crate::store::SchedulePut),
    /// Starts the workflow job the `JobInsert` before it made: its stages'
    /// rows, and the first of them as its stage. A job that insert did not
    /// make (an idempotent repeat) is left as it is.
    WorkflowStart(crate::store::WorkflowStart),
    /// As `job_cancel`, for a workflow job: answers `JobCancelled`.
    JobCancelStages(CancelStages),
    /// Records an orchestration call; a place already taken keeps its
    /// first record. Answers `JobCallRecorded`.
    JobCall(crate::store::CallRecord),
}

/// What one write of a transaction did, in the order of the writes.
#[derive(Debug, Clone)]
pub enum Written {
    JobInserted(Inserted),
    /// The job's status after the attempt's end.
    JobFinalized(JobStatus),
    JobCancelled(CancelOutcome),
    JobResumed(JobRecord),
    JobRanNow(JobRecord),
    SchedulePut(crate::store::ScheduleRecord),
    /// Whether the job was started (false: the insert answered a job that
    /// existed).
    WorkflowStarted(bool),
    /// Whether the call was recorded (false: its place was taken).
    JobCallRecorded(bool),
}

/// One row of the outbox: the events one write recorded for one tenant
/// (`store::outbox` writes them, `events::decode` reads them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// Its place among every tenant's rows, in the order they were
    /// recorded (a store-wide cursor; not shown to tenants).
    pub gseq: i64,
    pub tenant: String,
    /// The tenant's sequence number of the row's last event.
    pub seq: u64,
    /// How many events it holds: they are `seq - n + 1 ..= seq`.
    pub n: u32,
    pub at: Millis,
    /// A JSON array of the events.
    pub body: String,
}

/// An event row's columns as both backends read them: gseq, tenant,
/// seq, n, at, body.
pub type EventColumns = (i64, String, i64, i64, i64, String);

impl From<EventColumns> for EventRow {
    fn from((gseq, tenant, seq, n, at, body): EventColumns) -> EventRow {
        EventRow {
            gseq,
            tenant,
            seq: u64::try_from(seq).unwrap_or(0),
            n: u32::try_from(n).unwrap_or(0),
            at,
            body,
        }
    }
}

/// Where the outbox stands: what readers can read now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventHeads {
    /// The last row any reader can read (0: none yet).
    pub gseq: i64,
    /// The tenant's last readable sequence number, when one was asked for.
    pub seq: u64,
    /// The tenant's first sequence number still kept (older ones were
    /// pruned); `seq + 1` when none is.
    pub first: u64,
}

/// A webhook to record: where a tenant's events go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWebhook {
    pub id: String,
    pub tenant: String,
    pub url: String,
    /// The event types it wants (never empty).
    pub events: Vec<crate::events::EventType>,
    /// The key its deliveries are signed with.
    pub secret: String,
}

/// A webhook as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRecord {
    pub id: String,
    pub tenant: String,
    pub url: String,
    pub events: Vec<crate::events::EventType>,
    pub secret: String,
    pub created_at: Millis,
}

/// One event to send to one webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub webhook: String,
    pub tenant: String,
    pub seq: u64,
    pub kind: crate::events::EventType,
    /// The request body, JSON text, sent as it is on every try.
    pub body: String,
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Not answered 2xx yet; tried again at `next_at`.
    Pending,
    Delivered,
    /// Its time ran out without a 2xx.
    Dead,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Dead => "dead",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryStatus> {
        [
            DeliveryStatus::Pending,
            DeliveryStatus::Delivered,
            DeliveryStatus::Dead,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
    }
}

/// A delivery as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: i64,
    pub webhook: String,
    pub tenant: String,
    pub seq: u64,
    pub kind: crate::events::EventType,
    pub body: String,
    pub status: DeliveryStatus,
    /// Tries so far.
    pub attempts: u32,
    pub created_at: Millis,
    /// When it is tried next (pending), or when its sender's hold on it
    /// ends (being sent).
    pub next_at: Option<Millis>,
    pub last_at: Option<Millis>,
    /// The HTTP status of the last try, if it got one.
    pub last_status: Option<u16>,
    /// What went wrong with the last try.
    pub last_error: Option<String>,
}

/// How one try of a delivery went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryTry {
    pub id: i64,
    pub at: Millis,
    /// The HTTP status, if the endpoint answered.
    pub status: Option<u16>,
    /// `None`: answered 2xx, delivered.
    pub error: Option<String>,
    /// When to try again after a failure; `None` after a failure: dead.
    pub next_at: Option<Millis>,
}
