//! What an enqueue hands the store: a new job, its rules for unique keys and idempotency, when it is due, and what the insert answered.

use super::*;

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
    /// A deterministic task's result cache, which the insert consults.
    pub cache: Option<CacheProbe>,
    /// At most so many of its key's jobs start a period.
    pub throttle: Option<crate::throttle::Throttle>,
    /// It replaces its key's pending job; the insert settles its chain.
    /// Boxed: most jobs have none, and a new job travels in `Write`.
    pub debounce: Option<Box<crate::debounce::Debounced>>,
    /// The key its tenant's claims share by (`fair_keys`) when it is not
    /// its concurrency key, and the key's weight (`None`: 1).
    pub fairness_key: Option<String>,
    pub fairness_weight: Option<u32>,
    /// The trace it continues, as its own context (`otel::TraceParent::
    /// stored_for`); `None`: its trace is its own, made from its id.
    pub traceparent: Option<Box<crate::trace_context::TraceParent>>,
}

/// What an insert looks for in a deterministic task's result cache: the
/// newest completed job of the tenant with this key (its pinned digest and
/// canonical input) that ran (was not itself a hit), finished at most
/// `ttl_ms` before the insert. Found, the new job completes at once with
/// its output; else the job goes in with the key, for later ones to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheProbe {
    pub key: String,
    pub ttl_ms: u64,
}

impl NewJob {
    /// Where its insert looks in the result cache, at `now`: its key, and
    /// the oldest end inside the TTL. `None` when its task keeps no cache,
    /// or it is due later (it asked to run then, not to be answered now).
    pub fn cache_lookup(&self, now: Millis, run_at: Millis) -> Option<(&str, Millis)> {
        let probe = self.cache.as_ref().filter(|_| run_at <= now)?;
        let since = now.saturating_sub(i64::try_from(probe.ttl_ms).unwrap_or(i64::MAX));
        Some((probe.key.as_str(), since))
    }
}

/// The completed job a cache hit takes its output from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSource {
    pub id: String,
    pub output: Option<String>,
    /// The fuel its attempts burned: what the hit saved.
    pub fuel: u64,
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
    pub tenant: String,
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
    ) -> Result<Option<Inserted>, crate::store_error::StoreError> {
        let Some(key) = &self.unique_key else {
            return Ok(None);
        };
        if let Some(h) = holder {
            return match self.on_conflict {
                OnConflict::UseExisting => Ok(Some(Inserted::Existing(h))),
                OnConflict::Error => Err(crate::store_error::StoreError::Conflict(format!(
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
            Some(why) => Err(crate::store_error::StoreError::Conflict(format!(
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
            cache: None,
            throttle: None,
            debounce: None,
            fairness_key: None,
            fairness_weight: None,
            traceparent: None,
        }
    }

    /// The job as it is once inserted, due at `run_at` (resolved) and
    /// written at `now`: what a store answers without reading it back.
    pub fn into_record(self, now: Millis, run_at: Millis) -> JobRecord {
        JobRecord {
            deadline_at: self.deadline_ms.map(|d| crate::time::after(now, d)),
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
            cached_from: None,
            throttle: self.throttle,
            debounce: self.debounce.map(|d| *d),
            fairness_key: self.fairness_key,
            fairness_weight: self.fairness_weight,
            traceparent: self.traceparent.map(|t| t.to_string()),
        }
    }

    /// The job as a cache hit inserts it, at `now`: completed at once with
    /// the source's output, no attempt made.
    pub fn into_cached(self, now: Millis, run_at: Millis, source: &CacheSource) -> JobRecord {
        JobRecord {
            status: crate::job::JobStatus::Completed,
            output: source.output.clone(),
            started_at: Some(now),
            finished_at: Some(now),
            cached_from: Some(source.id.clone()),
            ..self.into_record(now, run_at)
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
            RunAt::After(ms) => crate::time::after(now, ms),
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
    pub stage: Option<Box<(TaskRef, String, Vec<crate::records::StepWrite>)>>,
    /// Its result cache key on the task it runs now (`enqueue::cache::
    /// key_of`), in place of the one it had: a redrive onto the newest
    /// version runs another digest, and the output it ends with must not
    /// be served under the pinned one's key. `None`: no key (a task
    /// without a cache, a workflow job).
    pub cache_key: Option<String>,
}

/// A waiting job's new input, as a resume gives it: JSON text, and the
/// job's result cache key on it (`enqueue::cache`), which replaces the
/// old input's: what the job ends with is the new input's output. A job
/// in its fallback takes it as the fallback's input, and keeps no key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInput {
    pub input: String,
    pub cache_key: Option<String>,
}

impl NewInput {
    /// A new input for a job without a result cache.
    pub fn plain(input: impl Into<String>) -> Self {
        NewInput {
            input: input.into(),
            cache_key: None,
        }
    }
}

/// An `Idempotency-Key` and the hash of the request it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    pub key: String,
    pub body_hash: String,
}

impl Idempotency {
    /// A repeated enqueue under this key, of the job `seen` made with a
    /// body of hash `seen_hash`: that job, if the request's body is the
    /// same, else a conflict that says so.
    pub fn repeat(
        &self,
        seen_hash: Option<&str>,
        seen: JobRecord,
    ) -> Result<Inserted, crate::store_error::StoreError> {
        if seen_hash == Some(self.body_hash.as_str()) {
            return Ok(Inserted::Existing(seen));
        }
        Err(crate::store_error::StoreError::Conflict(format!(
            "Idempotency-Key {:?} was already used with a different request body; send the same body to get the same job, or use a new key",
            self.key
        )))
    }
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
