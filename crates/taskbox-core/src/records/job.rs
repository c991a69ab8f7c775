//! A job and its attempts as the store keeps them, and the queries that list them.

use super::*;

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
    /// The job whose output a cache hit took (it made no attempt).
    pub cached_from: Option<String>,
    /// At most so many of its key's jobs start a period.
    pub throttle: Option<crate::throttle::Throttle>,
    /// Its debounce: its chain, the job it replaced, its successor.
    pub debounce: Option<crate::debounce::Debounced>,
    /// The fairness key it named (else its concurrency key is its key),
    /// and that key's weight.
    pub fairness_key: Option<String>,
    pub fairness_weight: Option<u32>,
    /// The trace it continues (`NewJob::traceparent`).
    pub traceparent: Option<String>,
}

/// Which jobs to list, newest first.
#[derive(Debug, Clone, Default)]
pub struct JobQuery {
    /// Whose jobs: one tenant's, or (`None`) every tenant's.
    pub tenant: Option<String>,
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

/// A job's end as a verification reads it (`JobStore::recorded_run`).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRun {
    pub id: String,
    /// The version of the task its last attempt ran.
    pub version: u32,
    pub input: String,
    pub status: JobStatus,
    pub output: Option<String>,
    pub error: Option<JobError>,
    /// Its last attempt's fuel.
    pub fuel: u64,
}
