//! The one enqueue path: the rules every new job is held to (its task and
//! input, queue, priority, times, keys, idempotency, the tenant's enqueue
//! rate), whoever asks for it — a request, a batch, and the callbacks,
//! cron slots and workflow steps to come — and the runner's wake-up after
//! the insert, which `Runner::enqueue` does itself.

use crate::admission::Over;
use crate::bounds::MAX_DELAY_MS;
use crate::registry::key_template;
use crate::registry::schema::{CheckError, Violation};
use crate::registry::spec::{check_name, ConcurrencyMode};
use crate::registry::{Registry, RegistryError, TaskVersion, Which};
use crate::runner::Runner;
use crate::store::clock::parse_rfc3339;
use crate::store::{
    Idempotency, Inserted, NewJob, OnConflict, Reuse, RunAt, StoreError, TaskRef, Write, Written,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Priorities run lowest first, within these bounds.
pub const PRIORITY_RANGE: std::ops::RangeInclusive<i32> = -1000..=1000;
/// Longest key (unique, concurrency, idempotency) a job may carry.
pub const MAX_KEY_LEN: usize = 255;
/// Most jobs one batch may hold.
pub const MAX_BATCH: usize = 1_000;

/// One job to enqueue, as `POST /v1/jobs` takes it (and each item of a
/// batch). Unknown fields are refused, so that a misspelled one is not
/// silently ignored.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"task": "echo", "input": {"op": "echo", "value": 1}}))]
pub struct JobSpec {
    pub task: Option<String>,
    pub workflow: Option<String>,
    #[serde(default)]
    pub input: Option<Value>,
    pub queue: Option<String>,
    pub priority: Option<i32>,
    /// An RFC 3339 time; one in the past is now.
    pub run_at: Option<String>,
    pub delay_ms: Option<u64>,
    pub deadline_ms: Option<u64>,
    /// Schedule-to-start timeout (Temporal's): still queued this long
    /// after it came due, the job fails with kind `expired` and never runs.
    pub expire_after_ms: Option<u64>,
    pub unique_key: Option<String>,
    /// With a `unique_key` an unfinished job holds: `error` (409, the
    /// default) or `use_existing` (that job, 200).
    pub on_conflict: Option<OnConflict>,
    /// Whether the `unique_key` of finished jobs may be used again:
    /// `allow` (the default), `allow_failed_only`, `reject`.
    pub reuse: Option<Reuse>,
    pub concurrency_key: Option<String>,
}

impl JobSpec {
    /// A job of `task` on `input`, with the task's defaults for the rest.
    pub fn of(task: impl Into<String>, input: Value) -> Self {
        JobSpec {
            task: Some(task.into()),
            input: Some(input),
            ..JobSpec::default()
        }
    }
}

/// Why a job was not enqueued; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum EnqueueError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("the job's input does not match the task's input_schema")]
    InvalidInput(Vec<Violation>),
    #[error("{0}")]
    BadRequest(String),
    /// Over the tenant's enqueue rate; try again after `retry_after_ms`.
    #[error("the tenant's enqueue rate ({limit} per second, {burst} at once) is used up")]
    RateLimited {
        limit: u64,
        burst: u64,
        retry_after_ms: u64,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<CheckError> for EnqueueError {
    fn from(e: CheckError) -> Self {
        EnqueueError::InvalidInput(e.violations())
    }
}

fn bad(message: impl Into<String>) -> EnqueueError {
    EnqueueError::BadRequest(message.into())
}

/// Enqueues jobs for tenants. One per process, shared by every caller.
pub struct Enqueuer {
    registry: Arc<Registry>,
    runner: Arc<Runner>,
    ids: Mutex<ulid::Generator>,
}

impl Enqueuer {
    pub fn new(registry: Arc<Registry>, runner: Arc<Runner>) -> Self {
        Enqueuer {
            registry,
            runner,
            ids: Mutex::new(ulid::Generator::new()),
        }
    }

    /// A new job id: a ULID, increasing within this process so that
    /// "newest first" is the order of enqueue.
    pub fn new_job_id(&self) -> String {
        let mut g = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        g.generate()
            .unwrap_or_else(|_| ulid::Ulid::generate())
            .to_string()
    }

    /// Enqueues one job: `Created`, or `Existing` when its idempotency key
    /// was seen before with the same request.
    pub async fn enqueue(
        &self,
        tenant: &str,
        spec: JobSpec,
        idempotency: Option<Idempotency>,
    ) -> Result<Inserted, EnqueueError> {
        if let (0, Some(over)) = self.registry.admission().take(tenant, 1).await? {
            return Err(over.into());
        }
        if spec.workflow.is_some() {
            return self.enqueue_workflow(tenant, spec, idempotency).await;
        }
        let new = self.prepare(tenant, spec, idempotency).await?;
        self.runner
            .enqueue(vec![new])
            .await?
            .pop()
            .ok_or_else(|| StoreError::Internal("an insert answered nothing".into()))?
            .map_err(EnqueueError::Store)
    }

    /// Enqueues a job of a workflow: the job and its stages in one write.
    async fn enqueue_workflow(
        &self,
        tenant: &str,
        spec: JobSpec,
        idempotency: Option<Idempotency>,
    ) -> Result<Inserted, EnqueueError> {
        let (job, start) = crate::workflow::start::prepare(
            &self.registry,
            self.new_job_id(),
            tenant,
            spec,
            idempotency,
        )
        .await?;
        let written = self
            .registry
            .store()
            .apply(vec![Write::JobInsert(job), Write::WorkflowStart(start)])
            .await?;
        let inserted = match written.into_iter().next() {
            Some(Written::JobInserted(i)) => i,
            _ => return Err(StoreError::Internal("an insert answered nothing".into()).into()),
        };
        crate::figures::inserted([&inserted]);
        self.runner.queued_again(tenant);
        Ok(inserted)
    }

    /// Enqueues up to `MAX_BATCH` jobs in one write, each under its own
    /// rules: one refused (its input, its keys, the tenant's rate or
    /// quotas) does not refuse the others. The answers are in the order of
    /// the items. Only a store that does not answer fails the whole batch.
    pub async fn enqueue_batch(
        &self,
        tenant: &str,
        items: Vec<(JobSpec, Option<Idempotency>)>,
    ) -> Result<Vec<Result<Inserted, EnqueueError>>, EnqueueError> {
        if items.len() > MAX_BATCH {
            return Err(bad(format!(
                "a batch holds at most {MAX_BATCH} jobs, not {}; send the rest in another",
                items.len()
            )));
        }
        let n = items.len();
        // Items past what the tenant's bucket holds are refused one by one.
        let (granted, over) = self.registry.admission().take(tenant, n).await?;
        let mut answers: Vec<Option<Result<Inserted, EnqueueError>>> = Vec::with_capacity(n);
        let mut jobs = Vec::with_capacity(granted);
        let mut slots = Vec::with_capacity(granted);
        let mut tasks: HashMap<String, Arc<TaskVersion>> = HashMap::new();
        for (i, (spec, idem)) in items.into_iter().enumerate() {
            if i >= granted {
                let over = over.clone().map(EnqueueError::from);
                answers.push(Some(Err(
                    over.unwrap_or_else(|| bad("over the tenant's enqueue rate"))
                )));
                continue;
            }
            match self
                .prepare_with(tenant, spec, idem, Some(&mut tasks))
                .await
            {
                Ok(job) => {
                    slots.push(i);
                    jobs.push(job);
                    answers.push(None);
                }
                Err(e) => answers.push(Some(Err(e))),
            }
        }
        if !jobs.is_empty() {
            let inserted = self.runner.enqueue(jobs).await?;
            if inserted.len() != slots.len() {
                return Err(StoreError::Internal(format!(
                    "a batch insert answered {} of {} jobs",
                    inserted.len(),
                    slots.len()
                ))
                .into());
            }
            for (slot, r) in slots.into_iter().zip(inserted) {
                answers[slot] = Some(r.map_err(EnqueueError::Store));
            }
        }
        Ok(answers
            .into_iter()
            .map(|a| a.unwrap_or_else(|| Err(StoreError::Internal("unanswered".into()).into())))
            .collect())
    }

    /// The job a spec asks for, under every rule of enqueue but the
    /// store's own (uniqueness, idempotency, `max_queued`).
    pub async fn prepare(
        &self,
        tenant: &str,
        spec: JobSpec,
        idempotency: Option<Idempotency>,
    ) -> Result<NewJob, EnqueueError> {
        self.prepare_with(tenant, spec, idempotency, None).await
    }

    /// `prepare`, looking each task up once for a batch (`tasks`).
    async fn prepare_with(
        &self,
        tenant: &str,
        b: JobSpec,
        idempotency: Option<Idempotency>,
        tasks: Option<&mut HashMap<String, Arc<TaskVersion>>>,
    ) -> Result<NewJob, EnqueueError> {
        prepare_job(
            &self.registry,
            self.new_job_id(),
            tenant,
            b,
            idempotency,
            tasks,
        )
        .await
    }
}

/// The job `b` asks for, with id `id`, under every rule of enqueue but the
/// store's own: what `Enqueuer::prepare` does, for callers that insert the
/// job in a write of their own (a callback, with the end it follows).
pub async fn prepare_job(
    registry: &Registry,
    id: String,
    tenant: &str,
    mut b: JobSpec,
    idempotency: Option<Idempotency>,
    tasks: Option<&mut HashMap<String, Arc<TaskVersion>>>,
) -> Result<NewJob, EnqueueError> {
    if b.workflow.is_some() {
        return Err(bad(
            "a workflow job is enqueued on its own (POST /v1/jobs), not in a batch or by a \
             callback or schedule",
        ));
    }
    let name = b
        .task
        .as_deref()
        .ok_or_else(|| bad("the job needs \"task\": the name of the task to run"))?;
    let tv = match tasks {
        Some(tasks) => match tasks.get(name) {
            Some(tv) => tv.clone(),
            None => {
                let tv = registry.task(tenant, name, None).await?;
                tasks.insert(name.to_owned(), tv.clone());
                tv
            }
        },
        None => registry.task(tenant, name, None).await?,
    };
    let input = b.input.take().unwrap_or_else(|| json!({}));
    let input = registry.check(&tv, Which::Input, input).await?;
    let placed = place(&mut b, tv.queue(), tv.spec.deadline_ms)?;
    let concurrency_key = concurrency_key(&tv, &b, &input)?;
    Ok(NewJob {
        id,
        tenant: tenant.to_owned(),
        task: TaskRef {
            name: tv.record.name.clone(),
            version: tv.record.version,
            digest: tv.record.digest.clone(),
        },
        queue: placed.queue,
        priority: placed.priority,
        input: input.to_string(),
        max_attempts: tv.retry.max_attempts,
        run_at: placed.run_at,
        deadline_ms: placed.deadline_ms,
        expire_after_ms: b.expire_after_ms,
        supersedes: tv
            .spec
            .concurrency
            .as_ref()
            .is_some_and(|c| c.mode == ConcurrencyMode::Supersedes),
        concurrency_limit: tv
            .spec
            .concurrency
            .as_ref()
            .and_then(|c| c.limit)
            .filter(|l| *l > 1 && concurrency_key.is_some()),
        concurrency_key,
        unique_key: b.unique_key,
        on_conflict: b.on_conflict.unwrap_or_default(),
        reuse: b.reuse.unwrap_or_default(),
        idempotency,
        callback_depth: 0,
    })
}

/// Where and when a job runs, held to the rules every job is, whatever it
/// runs; its keys are checked too.
pub(crate) struct Placed {
    pub queue: String,
    pub priority: i32,
    pub run_at: RunAt,
    pub deadline_ms: Option<u64>,
}

/// `b`'s placing, with the defaults of what it runs.
pub(crate) fn place(
    b: &mut JobSpec,
    default_queue: &str,
    default_deadline: Option<u64>,
) -> Result<Placed, EnqueueError> {
    let queue = b.queue.take().unwrap_or_else(|| default_queue.to_owned());
    check_name("queue", &queue).map_err(EnqueueError::BadRequest)?;
    let priority = b.priority.unwrap_or(0);
    if !PRIORITY_RANGE.contains(&priority) {
        return Err(bad(format!(
            "priority must be between {} and {} (lower runs first), not {priority}",
            PRIORITY_RANGE.start(),
            PRIORITY_RANGE.end()
        )));
    }
    let run_at = run_at(b)?;
    let deadline_ms = b.deadline_ms.or(default_deadline);
    if deadline_ms.is_some_and(|d| d == 0 || d > MAX_DELAY_MS) {
        return Err(bad(format!(
            "deadline_ms must be between 1 and {MAX_DELAY_MS}"
        )));
    }
    if b.expire_after_ms
        .is_some_and(|d| d == 0 || d > MAX_DELAY_MS)
    {
        return Err(bad(format!(
            "expire_after_ms must be between 1 and {MAX_DELAY_MS}"
        )));
    }
    check_key("unique_key", &b.unique_key)?;
    if b.unique_key.is_none() && (b.on_conflict.is_some() || b.reuse.is_some()) {
        return Err(bad(
            "on_conflict and reuse are rules of a unique_key; give one, or leave them out",
        ));
    }
    check_key("concurrency_key", &b.concurrency_key)?;
    Ok(Placed {
        queue,
        priority,
        run_at,
        deadline_ms,
    })
}

impl From<Over> for EnqueueError {
    fn from(o: Over) -> Self {
        EnqueueError::RateLimited {
            limit: o.limit,
            burst: o.burst,
            retry_after_ms: o.retry_after_ms,
        }
    }
}

/// When the job is due, resolved later by the store, by its clock.
fn run_at(b: &JobSpec) -> Result<RunAt, EnqueueError> {
    match (&b.run_at, b.delay_ms) {
        (Some(_), Some(_)) => Err(bad("give run_at or delay_ms, not both")),
        (Some(t), None) => Ok(RunAt::At(parse_rfc3339(t).ok_or_else(|| {
            bad(format!(
                "run_at {t:?} is not an RFC 3339 time such as 2026-01-31T12:00:00Z"
            ))
        })?)),
        (None, Some(d)) if d > MAX_DELAY_MS => Err(bad(format!(
            "delay_ms must be at most {MAX_DELAY_MS} (a year)"
        ))),
        (None, Some(d)) => Ok(RunAt::After(d)),
        (None, None) => Ok(RunAt::Now),
    }
}

fn check_key(field: &str, key: &Option<String>) -> Result<(), EnqueueError> {
    match key {
        Some(k) if k.is_empty() || k.len() > MAX_KEY_LEN => Err(bad(format!(
            "{field} must be 1 to {MAX_KEY_LEN} bytes long"
        ))),
        _ => Ok(()),
    }
}

/// The concurrency key of a new job: the one it names, or the task's. A
/// task's key that starts with `/` is a JSON pointer into the input.
fn concurrency_key(
    tv: &TaskVersion,
    body: &JobSpec,
    input: &Value,
) -> Result<Option<String>, EnqueueError> {
    if body.concurrency_key.is_some() {
        return Ok(body.concurrency_key.clone());
    }
    let Some(c) = &tv.spec.concurrency else {
        return Ok(None);
    };
    if key_template::is_template(&c.key) {
        // Checked when the task was defined.
        let parts = key_template::parse(&c.key).map_err(bad)?;
        let key = key_template::render(&parts, input).map_err(|(pointer, message)| {
            EnqueueError::InvalidInput(vec![Violation { pointer, message }])
        })?;
        if key.is_empty() || key.len() > MAX_KEY_LEN {
            return Err(EnqueueError::InvalidInput(vec![Violation {
                pointer: String::new(),
                message: format!(
                    "the task's concurrency key {:?} made from the input must be 1 to {MAX_KEY_LEN} bytes long",
                    c.key
                ),
            }]));
        }
        return Ok(Some(key));
    }
    if !c.key.starts_with('/') {
        return Ok(Some(c.key.clone()));
    }
    let violation = |message: String| {
        EnqueueError::InvalidInput(vec![Violation {
            pointer: c.key.clone(),
            message,
        }])
    };
    let key =
        match input.pointer(&c.key) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => return Err(violation(
                "the task's concurrency key is read from here, and the input has no value at it"
                    .into(),
            )),
            Some(other) => other.to_string(),
        };
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(violation(format!(
            "the task's concurrency key is read from here, and must be 1 to {MAX_KEY_LEN} bytes long"
        )));
    }
    Ok(Some(key))
}
