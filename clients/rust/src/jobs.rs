//! Jobs, typed: enqueue (waiting out a 429's `Retry-After`), read, wait for the end, cancel.

use crate::client::Client;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::time::{Duration, Instant};

/// One job to enqueue, as `POST /v1/jobs` takes it. Unset fields take the
/// task's (or the server's) defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct JobSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// A workflow to run instead of a task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    pub input: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// An RFC 3339 time; one in the past is now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unique_key: Option<String>,
    /// `error` (409, the default) or `use_existing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_conflict: Option<String>,
    /// `allow` (the default), `allow_failed_only` or `reject`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuse: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expire_after_ms: Option<u64>,
    /// In place of the task's throttle: at most `limit` jobs of `key`
    /// start in any `period_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle: Option<Throttle>,
    /// In place of the task's debounce: it replaces the pending job of
    /// its key, and runs `period_ms` after the last enqueue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debounce: Option<Debounce>,
    /// The key the tenant's claims share the runners' time by (1 to 64
    /// bytes; the concurrency key when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness_key: Option<String>,
    /// The fairness key's weight, 1 to 1000 (1 when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness_weight: Option<u32>,
}

/// A job enqueued while another of `key` is pending replaces it, and runs
/// `period_ms` after the last enqueue, but never later than `max_wait_ms`
/// after the first (ten periods when absent).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Debounce {
    pub key: String,
    pub period_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait_ms: Option<u64>,
}

/// A debounced job's key and chain, as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DebounceView {
    /// The key made from its input.
    pub key: String,
    pub period_ms: u64,
    pub max_wait_ms: u64,
    /// When its chain's first job was enqueued (RFC 3339).
    pub since: String,
    /// The pending job it replaced (which was cancelled): on an enqueue's
    /// answer, whether it debounced another.
    pub replaced: Option<String>,
    /// The job that replaced it and runs in its place, once one did.
    pub successor: Option<String>,
}

/// At most `limit` jobs of one key start in any `period_ms`; the rest wait
/// their turn. On a job as the API shows it, `key` is the key made from its
/// input.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Throttle {
    pub key: String,
    pub limit: u32,
    pub period_ms: u64,
}

impl JobSpec {
    /// A job of `task` with this input.
    pub fn task(task: impl Into<String>, input: impl Serialize) -> Result<JobSpec, Error> {
        Ok(JobSpec {
            task: Some(task.into()),
            input: to_input(input)?,
            ..JobSpec::default()
        })
    }

    /// A run of `workflow` with this input.
    pub fn workflow(workflow: impl Into<String>, input: impl Serialize) -> Result<JobSpec, Error> {
        Ok(JobSpec {
            workflow: Some(workflow.into()),
            input: to_input(input)?,
            ..JobSpec::default()
        })
    }
}

fn to_input(input: impl Serialize) -> Result<Value, Error> {
    serde_json::to_value(input)
        .map_err(|e| Error::Config(format!("the job's input is not JSON: {e}")))
}

/// Where a job is in its life. A status this client does not know (a newer
/// server's) reads as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Queued,
    Running,
    Waiting,
    Completed,
    Failed,
    Cancelled,
    #[serde(other)]
    Other,
}

impl JobStatus {
    /// Completed, failed or cancelled: nothing changes it by itself any more.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobStatus::Completed | JobStatus::Failed | JobStatus::Cancelled
        )
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        f.write_str(&text)
    }
}

/// A task version pinned into a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRef {
    pub name: String,
    pub version: u32,
    pub digest: String,
}

/// Why a job failed: `kind` is the host's class (`task_failed`, `timeout`,
/// `fuel_exhausted`, …), `code` the task's own (or the host's) code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobError {
    pub kind: String,
    pub code: String,
    pub message: String,
}

/// The guest's latest progress report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub percent: u8,
    pub note: String,
}

/// A job as the API shows it (`GET /v1/jobs/{id}`, and what enqueue,
/// cancel and run answer). Times are RFC 3339, UTC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: String,
    /// Whose job it is.
    #[serde(default)]
    pub tenant: String,
    pub task: TaskRef,
    pub status: JobStatus,
    pub queue: String,
    pub priority: i32,
    pub input: Value,
    /// The task's output, once it completed.
    pub output: Option<Value>,
    pub error: Option<JobError>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub run_at: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub concurrency_key: Option<String>,
    pub unique_key: Option<String>,
    pub progress: Option<Progress>,
    /// What a waiting job waits for, as the guest said it.
    pub waiting_for: Option<Value>,
    /// The fallback task running it, once its own task failed for good.
    pub fallback: Option<TaskRef>,
    pub deadline_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_after_ms: Option<u64>,
    pub cancel_requested: bool,
    /// The job whose output this one took from its task's result cache,
    /// without an attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
    /// Its throttle, with the key made from its input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<Throttle>,
    /// Its debounce: the job it replaced, and its successor once replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debounce: Option<DebounceView>,
    /// The fairness key it named, and the key's weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness_weight: Option<u32>,
    /// The trace the job continues (the enqueue's `traceparent` header, or
    /// the attempt that spawned it), as its enqueue span's `traceparent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// The job that spawned this one (`GET /v1/jobs/{id}` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The jobs this one spawned (`GET /v1/jobs/{id}` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<String>,
    /// The callbacks its ends made, `{kind, job, task}` each (`GET
    /// /v1/jobs/{id}` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callbacks: Vec<Value>,
    /// The job whose end made this one its callback, `{kind, job, task}`
    /// (`GET /v1/jobs/{id}` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_of: Option<Value>,
    /// A workflow job's workflow and stages, as the API shows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Value>,
}

/// A 429 waited out: how long, and which try of the request it was.
pub type OnRateLimited<'a> = dyn Fn(Duration, u32) + Send + Sync + 'a;

/// How [`Client::enqueue_with`] behaves.
pub struct EnqueueOptions<'a> {
    /// Sent as `Idempotency-Key`: a retried call with the same key and body
    /// gets the same job (200) rather than a second one.
    pub idempotency_key: Option<String>,
    /// How many 429s with a `Retry-After` to wait out before giving up (default 5).
    pub max_rate_limit_retries: u32,
    /// Told of each wait, before it starts.
    pub on_rate_limited: Option<&'a OnRateLimited<'a>>,
}

impl Default for EnqueueOptions<'_> {
    fn default() -> Self {
        EnqueueOptions {
            idempotency_key: None,
            max_rate_limit_retries: 5,
            on_rate_limited: None,
        }
    }
}

/// How long [`Client::wait_for_job`] waits, and how often it looks.
#[derive(Debug, Clone)]
pub struct WaitOptions {
    /// Give up ([`Error::WaitTimedOut`]) after this long; default 60 s.
    pub timeout: Duration,
    /// The first pause between looks, doubled up to `max_interval`; default 50 ms.
    pub interval: Duration,
    /// Default 1 s.
    pub max_interval: Duration,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions {
            timeout: Duration::from_secs(60),
            interval: Duration::from_millis(50),
            max_interval: Duration::from_secs(1),
        }
    }
}

impl Client {
    /// Enqueues a job, waiting out up to five 429 `RATE_LIMITED` answers for
    /// as long as each one's `Retry-After` says.
    pub async fn enqueue(&self, spec: &JobSpec) -> Result<Job, Error> {
        self.enqueue_with(spec, &EnqueueOptions::default()).await
    }

    /// Enqueues a job as `options` say. A 429 without `Retry-After` is a
    /// quota (`QUOTA_EXCEEDED`, a tenant's `max_queued`): waiting a moment
    /// does not end it, so it is returned at once.
    pub async fn enqueue_with(
        &self,
        spec: &JobSpec,
        options: &EnqueueOptions<'_>,
    ) -> Result<Job, Error> {
        let body = serde_json::to_value(spec)
            .map_err(|e| Error::Config(format!("the job cannot be written as JSON: {e}")))?;
        let mut tries = 0;
        loop {
            let mut call = self.post(&["v1", "jobs"]).json(body.clone());
            if let Some(key) = &options.idempotency_key {
                call = call.header("Idempotency-Key", key.clone());
            }
            match call.send().await {
                Ok(reply) => return reply.json(),
                Err(Error::Api(e)) if e.status == 429 && tries < options.max_rate_limit_retries => {
                    let Some(wait) = e.retry_after else {
                        return Err(Error::Api(e));
                    };
                    tries += 1;
                    if let Some(told) = options.on_rate_limited {
                        told(wait, tries);
                    }
                    tokio::time::sleep(wait).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The job now.
    pub async fn job(&self, id: &str) -> Result<Job, Error> {
        self.get(&["v1", "jobs", id]).send().await?.json()
    }

    /// Asks for the job to be cancelled: a queued job ends at once, a
    /// running one when its attempt stops. The job as the server left it.
    pub async fn cancel_job(&self, id: &str) -> Result<Job, Error> {
        self.post(&["v1", "jobs", id, "cancel"])
            .send()
            .await?
            .json()
    }

    /// Looks at the job until it is completed, failed or cancelled, and
    /// returns it. A server that does not answer, or asks for a pause (429,
    /// 502–504), is waited out within the same timeout.
    pub async fn wait_for_job(&self, id: &str, options: &WaitOptions) -> Result<Job, Error> {
        let started = Instant::now();
        let mut interval = options.interval;
        let mut last_status = None;
        loop {
            match self.job(id).await {
                Ok(job) if job.status.is_final() => return Ok(job),
                Ok(job) => last_status = Some(job.status),
                Err(e) if e.is_transient() => {}
                Err(e) => return Err(e),
            }
            let left = options.timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(Error::WaitTimedOut {
                    id: id.to_owned(),
                    status: last_status.map_or_else(|| "unknown".to_owned(), |s| s.to_string()),
                    waited: options.timeout,
                });
            }
            tokio::time::sleep(interval.min(left)).await;
            interval = (interval * 2).min(options.max_interval);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_spec_sends_only_what_was_set() {
        let mut spec = JobSpec::task("resize", json!({"width": 3})).unwrap();
        spec.priority = Some(2);
        assert_eq!(
            serde_json::to_value(&spec).unwrap(),
            json!({"task": "resize", "input": {"width": 3}, "priority": 2})
        );
        let run = JobSpec::workflow("order", json!(null)).unwrap();
        assert_eq!(
            serde_json::to_value(&run).unwrap(),
            json!({"workflow": "order", "input": null})
        );
    }

    #[test]
    fn statuses_read_with_room_for_new_ones() {
        let read = |s: &str| serde_json::from_value::<JobStatus>(json!(s)).unwrap();
        assert_eq!(read("completed"), JobStatus::Completed);
        assert!(read("cancelled").is_final());
        assert!(!read("waiting").is_final());
        assert_eq!(read("paused_by_a_newer_server"), JobStatus::Other);
        assert_eq!(JobStatus::Running.to_string(), "running");
    }
}
