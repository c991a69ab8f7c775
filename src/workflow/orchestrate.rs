//! Sub-tasks from code: the runner's answer to the orchestrator world's
//! `invoke` and `spawn` for one attempt. Each call takes the next place in
//! the job's order of calls; what it did is recorded there (`job_calls`),
//! so a retried job that makes the same call at the same place gets the
//! recorded result instead of running it again. An `invoke` runs the task
//! inline, in a sandbox of its own with its own limits and retries, within
//! the calling attempt's time; a `spawn` enqueues a child job. Depth and
//! fan-out are bounded, so one tenant's code cannot fork-bomb the queue.

use crate::enqueue::{prepare_job, EnqueueError, JobSpec};
use crate::job::{ErrorKind, JobError};
use crate::network_tally::NetworkTally;
use crate::registry::{Registry, RegistryError, Which};
use crate::retry::{rand_unit, Decision};
use crate::sandbox::{AttemptRequest, Ending, GuestFailure, JobRef, Orchestrate, Redactor};
use crate::store::{CallKind, CallRecord, Inserted, OnConflict, Reuse, Write, Written};
use std::future::Future;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Deepest nesting of `invoke` (a sub-task that invokes another, …).
pub const MAX_INVOKE_DEPTH: u32 = 4;
/// Longest chain of `spawn` (a child that spawns a child, …).
pub const MAX_SPAWN_DEPTH: u32 = 8;
/// Most children one job may spawn.
pub const MAX_CHILDREN: usize = 100;
/// Most calls (invokes and spawns) one attempt may make.
pub const MAX_CALLS: u32 = 1_000;
/// Largest input a call may pass.
pub const MAX_CALL_INPUT: usize = 1 << 20;

/// One attempt's orchestration: the job it is for, where its calls are
/// recorded, and what they cost.
pub struct Orchestration {
    registry: Arc<Registry>,
    /// The job the calls are recorded on (a nested call's, its root's).
    job_id: String,
    tenant: String,
    queue: String,
    /// The place of the call that ran this sub-task (`""` for the job).
    prefix: String,
    /// Invokes deep: 0 for the job's own attempt.
    depth: u32,
    calls: AtomicU32,
    cancel: Option<CancellationToken>,
    /// Fuel the sub-tasks burned, shared by nested ones: the tenant's.
    fuel: Arc<AtomicU64>,
    /// What the sub-tasks' outbound HTTP did, shared likewise.
    network: Arc<std::sync::Mutex<NetworkTally>>,
    /// Tells the claim loop a child was enqueued.
    wake: Option<Arc<Notify>>,
    /// The runtime store calls run on (the server's): a database
    /// connection opened on the guests' runtime would die with it.
    home: Option<Handle>,
    /// The secrets of the attempt that makes the calls and of every
    /// caller above it: an invoked task's result is kept (and answered)
    /// without them, as its own attempt's is without its own.
    redactor: Redactor,
    /// The span of the attempt that makes the calls: a spawned child's
    /// trace continues under it.
    trace: Option<crate::otel::TraceParent>,
}

fn failure(code: &str, message: impl Into<String>, retryable: bool) -> GuestFailure {
    GuestFailure {
        code: code.into(),
        message: message.into(),
        retryable,
    }
}

impl Orchestration {
    /// The orchestration of an attempt of job `job_id`, whose secrets
    /// `redactor` knows.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        registry: Arc<Registry>,
        job_id: &str,
        tenant: &str,
        queue: &str,
        cancel: Option<CancellationToken>,
        wake: Option<Arc<Notify>>,
        home: Option<Handle>,
        redactor: Redactor,
    ) -> Orchestration {
        Orchestration {
            registry,
            job_id: job_id.to_owned(),
            tenant: tenant.to_owned(),
            queue: queue.to_owned(),
            prefix: String::new(),
            depth: 0,
            calls: AtomicU32::new(0),
            cancel,
            fuel: Arc::new(AtomicU64::new(0)),
            network: Arc::default(),
            wake,
            home,
            redactor,
            trace: None,
        }
    }

    /// Children it spawns continue the trace under `attempt`'s span.
    pub fn traced(mut self, attempt: Option<crate::otel::TraceParent>) -> Orchestration {
        self.trace = attempt;
        self
    }

    /// Runs `f` (store calls) on the home runtime.
    async fn at_home<T: Send + 'static>(
        &self,
        f: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, GuestFailure> {
        match &self.home {
            Some(h) => h
                .spawn(f)
                .await
                .map_err(|e| failure("unavailable", format!("the call was dropped: {e}"), true)),
            None => Ok(f.await),
        }
    }

    /// Fuel the attempt's sub-tasks burned.
    pub fn fuel_used(&self) -> u64 {
        self.fuel.load(Ordering::Relaxed)
    }

    /// What the attempt's sub-tasks' outbound HTTP did.
    pub fn network_used(&self) -> NetworkTally {
        *self.network.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The orchestration of the sub-task that call `call` runs, with
    /// `secrets`, its task's.
    fn nested(&self, call: &str, secrets: &[(String, String)]) -> Orchestration {
        Orchestration {
            registry: self.registry.clone(),
            job_id: self.job_id.clone(),
            tenant: self.tenant.clone(),
            queue: self.queue.clone(),
            prefix: call.to_owned(),
            depth: self.depth + 1,
            calls: AtomicU32::new(0),
            cancel: self.cancel.clone(),
            fuel: self.fuel.clone(),
            network: self.network.clone(),
            wake: self.wake.clone(),
            home: self.home.clone(),
            redactor: self.redactor.with(secrets),
            trace: self.trace,
        }
    }

    /// Sends the span of one run of an invoked task.
    fn invoke_span(
        &self,
        tv: &crate::registry::TaskVersion,
        call: &str,
        attempt: u32,
        (at, parent): (crate::otel::TraceParent, crate::otel::TraceParent),
        started: std::time::SystemTime,
        report: &crate::sandbox::AttemptReport,
    ) {
        let mut span = crate::otel::Span::new(
            format!("invoke {}", tv.record.name),
            at,
            Some(&parent),
            started,
            std::time::SystemTime::now(),
        )
        .text("taskbox.job.id", &self.job_id)
        .text("taskbox.call", call)
        .task(&tv.record.name, tv.record.version, &tv.record.digest)
        .attr("taskbox.attempt", i64::from(attempt))
        .attr(
            "taskbox.fuel",
            i64::try_from(report.fuel_used).unwrap_or(i64::MAX),
        )
        .attr(
            "taskbox.memory.peak_bytes",
            i64::try_from(report.peak_memory_bytes).unwrap_or(i64::MAX),
        );
        let outcome = match &report.ending {
            Ending::Done(_) => "completed",
            Ending::Failed(e) => {
                span = span
                    .text("error.type", e.kind.as_str())
                    .text("taskbox.error.code", &e.code);
                span.error = Some(format!("{} ({})", e.kind.as_str(), e.code));
                "failed"
            }
            Ending::Cancelled => "cancelled",
            Ending::Snooze(_) | Ending::Wait(_) => "unsupported",
            Ending::Unavailable(_) => "unavailable",
        };
        self.registry
            .traces()
            .emit(span.text("taskbox.outcome", outcome));
    }

    /// The next call's place.
    fn next_call(&self) -> Result<String, GuestFailure> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if n > MAX_CALLS {
            return Err(failure(
                "too_many_calls",
                format!("an attempt may make at most {MAX_CALLS} invoke and spawn calls"),
                false,
            ));
        }
        Ok(if self.prefix.is_empty() {
            n.to_string()
        } else {
            format!("{}/{n}", self.prefix)
        })
    }

    /// The result recorded at `call`, if the job made it before; a call of
    /// another kind or task there means the code does not make its calls
    /// in the same order each time, which replay cannot follow.
    async fn recorded(
        &self,
        call: &str,
        kind: CallKind,
        task: &str,
    ) -> Result<Option<String>, GuestFailure> {
        let store = self.registry.store().clone();
        let (id, at) = (self.job_id.clone(), call.to_owned());
        let found = self
            .at_home(async move { store.job_call(&id, &at).await })
            .await?;
        match found {
            Ok(None) => Ok(None),
            Ok(Some(r)) if r.kind == kind && r.task == task => Ok(Some(r.result)),
            Ok(Some(r)) => Err(failure(
                "nondeterministic",
                format!(
                    "call {call} was a {} of task {:?} in an earlier attempt, and is a {} of {task:?} now: \
                     a job must make its invoke and spawn calls in the same order each time",
                    r.kind.as_str(),
                    r.task,
                    kind.as_str()
                ),
                false,
            )),
            Err(e) => Err(failure("unavailable", format!("the queue cannot be read now: {e}"), true)),
        }
    }

    async fn record(&self, call: &str, kind: CallKind, task: &str, result: &str) {
        let store = self.registry.store();
        let rec = CallRecord {
            job_id: self.job_id.clone(),
            call: call.to_owned(),
            kind,
            task: task.to_owned(),
            result: result.to_owned(),
            created_at: store.now(),
        };
        // Unrecorded, the call runs again if the job is retried: the cost
        // of a store that did not answer, not a wrong result.
        let store = store.clone();
        let written = self
            .at_home(async move { store.apply(vec![Write::JobCall(rec)]).await.map(drop) })
            .await
            .unwrap_or_else(|f| Err(crate::store::StoreError::Unavailable(f.message)));
        if let Err(e) = written {
            tracing::warn!(job = %self.job_id, call, error = %e, "an invoke's result could not be recorded");
        }
    }

    fn check(task: &str, input: &str) -> Result<serde_json::Value, GuestFailure> {
        crate::registry::spec::check_name("task", task)
            .map_err(|e| failure("bad_call", e, false))?;
        if input.len() > MAX_CALL_INPUT {
            return Err(failure(
                "bad_call",
                format!(
                    "a call's input is at most {MAX_CALL_INPUT} bytes, not {}",
                    input.len()
                ),
                false,
            ));
        }
        serde_json::from_str(input)
            .map_err(|e| failure("bad_call", format!("the input is not JSON: {e}"), false))
    }

    /// How many spawns deep the job is: its parent's, its parent's parent's …
    async fn spawn_depth(&self) -> Result<u32, GuestFailure> {
        let mut id = self.job_id.clone();
        for depth in 0..=MAX_SPAWN_DEPTH {
            let store = self.registry.store().clone();
            let of = id.clone();
            let parent = self
                .at_home(async move { store.job_parent(&of).await })
                .await?;
            match parent {
                Ok(Some(parent)) => id = parent,
                Ok(None) => return Ok(depth),
                Err(e) => {
                    return Err(failure(
                        "unavailable",
                        format!("the queue cannot be read now: {e}"),
                        true,
                    ))
                }
            }
        }
        Ok(MAX_SPAWN_DEPTH + 1)
    }
}

fn enqueue_failure(e: EnqueueError) -> GuestFailure {
    match e {
        EnqueueError::Registry(RegistryError::TaskNotFound(t)) => failure(
            "task_not_found",
            format!("task {t:?} does not exist"),
            false,
        ),
        EnqueueError::InvalidInput(v) => failure(
            "invalid_input",
            v.iter()
                .map(|v| format!("{}: {}", v.pointer, v.message))
                .collect::<Vec<_>>()
                .join("; "),
            false,
        ),
        EnqueueError::Store(crate::store::StoreError::QuotaExceeded(e)) => failure(
            "quota_exceeded",
            format!("the child was not enqueued: {e}"),
            true,
        ),
        EnqueueError::Store(e) => failure("unavailable", e.to_string(), true),
        e => failure("refused", e.to_string(), false),
    }
}

fn of_error(e: &JobError) -> GuestFailure {
    failure(
        &e.code,
        e.message.clone(),
        e.retryable != Some(false) && !e.kind.is_deterministic(),
    )
}

#[async_trait::async_trait]
impl Orchestrate for Orchestration {
    async fn invoke(&self, task: String, input: String) -> Result<String, GuestFailure> {
        let call = self.next_call()?;
        let value = Self::check(&task, &input)?;
        if let Some(out) = self.recorded(&call, CallKind::Invoke, &task).await? {
            return Ok(out);
        }
        if self.depth >= MAX_INVOKE_DEPTH {
            return Err(failure(
                "too_deep",
                format!("invoked tasks may nest at most {MAX_INVOKE_DEPTH} deep"),
                false,
            ));
        }
        let (registry, tenant, name) = (self.registry.clone(), self.tenant.clone(), task.clone());
        let (tv, program, secrets) = self
            .at_home(async move {
                let tv = registry
                    .task(&tenant, &name, None)
                    .await
                    .map_err(|e| enqueue_failure(e.into()))?;
                registry
                    .check(&tv, Which::Input, value)
                    .await
                    .map_err(|e| enqueue_failure(e.into()))?;
                let program = registry
                    .program(&tenant, &tv.record.digest)
                    .await
                    .map_err(|e| failure("unavailable", e.to_string(), true))?;
                // The invoked task's own secrets, as its own job would get them.
                let secrets = registry
                    .secrets_for(&tenant, &tv)
                    .await
                    .map_err(|e| match e {
                        crate::secrets::SecretsError::NoKey => {
                            failure("secrets_unavailable", e.to_string(), false)
                        }
                        e => failure("secrets_unreadable", e.to_string(), true),
                    })?;
                Ok::<_, GuestFailure>((tv, program, secrets))
            })
            .await??;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = AttemptRequest::new(
                JobRef {
                    id: format!("{}/{call}", self.job_id),
                    attempt,
                    queue: self.queue.clone(),
                },
                input.clone(),
                tv.limits,
            );
            // Its spans (requests, the guest's own, its invokes) are under
            // the span of this run of it, under the caller's attempt.
            let span_at = self.trace.map(|t| t.child());
            req.trace = span_at.map(|attempt| crate::sandbox::AttemptTrace {
                traces: self.registry.traces().clone(),
                attempt,
            });
            req.cancel = self.cancel.clone();
            req.orchestrate = Some(Arc::new(
                self.nested(&call, &secrets).traced(span_at.or(self.trace)),
            ));
            req.tenant = Arc::from(self.tenant.as_str());
            req.network = tv.network.clone();
            req.secrets = secrets.clone();
            let started = std::time::SystemTime::now();
            let report = self.registry.sandbox().run(&program, req).await;
            if let (Some(at), Some(parent)) = (span_at, self.trace) {
                self.invoke_span(&tv, &call, attempt, (at, parent), started, &report);
            }
            self.fuel.fetch_add(report.fuel_used, Ordering::Relaxed);
            self.network
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .add(&report.network);
            let error = match report.ending {
                Ending::Done(out) => {
                    let checked = match &tv.output_schema {
                        None => Ok(()),
                        Some(_) => match serde_json::from_str(&out) {
                            Ok(v) => self
                                .registry
                                .check(&tv, Which::Output, v)
                                .await
                                .map(drop)
                                .map_err(|e| enqueue_failure(e.into())),
                            Err(e) => Err(failure("invalid_output", e.to_string(), false)),
                        },
                    };
                    checked?;
                    // Redacted of its own secrets already; of its callers'
                    // too (one may have passed its own in the input), so
                    // the row holds none, and a replayed call answers what
                    // the first one did.
                    let out = self.redactor.apply(&out).into_owned();
                    self.record(&call, CallKind::Invoke, &task, &out).await;
                    return Ok(out);
                }
                Ending::Cancelled => {
                    return Err(failure("cancelled", "the job was cancelled", false))
                }
                Ending::Snooze(_) | Ending::Wait(_) => {
                    return Err(failure(
                        "unsupported",
                        format!("task {task:?} snoozed or waited; an invoked task must finish"),
                        false,
                    ))
                }
                Ending::Unavailable(why) => JobError::new(ErrorKind::Trap, why),
                Ending::Failed(e) => e,
            };
            match tv.retry.decide(&error, attempt, rand_unit) {
                Decision::RetryAfter(ms) => {
                    let wait = tokio::time::sleep(Duration::from_millis(ms));
                    match &self.cancel {
                        Some(c) => tokio::select! {
                            _ = wait => {}
                            _ = c.cancelled() => return Err(failure("cancelled", "the job was cancelled", false)),
                        },
                        None => wait.await,
                    }
                }
                Decision::Fail(_) => return Err(of_error(&error)),
            }
        }
    }

    async fn spawn(&self, task: String, input: String) -> Result<String, GuestFailure> {
        let call = self.next_call()?;
        let value = Self::check(&task, &input)?;
        if let Some(child) = self.recorded(&call, CallKind::Spawn, &task).await? {
            return Ok(child);
        }
        let store = self.registry.store().clone();
        let id = self.job_id.clone();
        let children = self
            .at_home(async move { store.job_calls(&id).await })
            .await?
            .map_err(|e| failure("unavailable", e.to_string(), true))?
            .iter()
            .filter(|c| c.kind == CallKind::Spawn)
            .count();
        if children >= MAX_CHILDREN {
            return Err(failure(
                "too_many_children",
                format!("a job may spawn at most {MAX_CHILDREN} children"),
                false,
            ));
        }
        if self.spawn_depth().await? >= MAX_SPAWN_DEPTH {
            return Err(failure(
                "too_deep",
                format!("spawned jobs may nest at most {MAX_SPAWN_DEPTH} deep"),
                false,
            ));
        }
        let mut spec = JobSpec::of(task.clone(), value);
        // One child per place, even from two attempts at once (one whose
        // lease was lost still running): the place is its unique key.
        spec.unique_key = Some(format!("spawn:{}:{call}", self.job_id));
        spec.on_conflict = Some(OnConflict::UseExisting);
        spec.reuse = Some(Reuse::Reject);
        spec.trace = self.trace;
        let (registry, tenant) = (self.registry.clone(), self.tenant.clone());
        let parent = self.trace;
        let start = std::time::SystemTime::now();
        let child = self
            .at_home(async move {
                // A child is a job like any: charged to the tenant's
                // enqueue rate. Over it, the call fails retryably, and the
                // attempt that made it may retry later.
                let taken = registry
                    .admission()
                    .take_one(&tenant)
                    .await
                    .map_err(|e| failure("unavailable", e.to_string(), true))?;
                if let Err(over) = taken {
                    return Err(failure(
                        "rate_limited",
                        format!("the child was not enqueued: {over}"),
                        true,
                    ));
                }
                let id = crate::job::new_id();
                let new = prepare_job(&registry, id, &tenant, spec, None, None)
                    .await
                    .map_err(enqueue_failure)?;
                let written = registry
                    .store()
                    .apply(vec![Write::JobInsert(new.clone())])
                    .await
                    .map_err(|e| enqueue_failure(e.into()))?;
                crate::figures::inserted(written.iter().filter_map(|w| match w {
                    Written::JobInserted(i) => Some(i),
                    _ => None,
                }));
                if let Some(Written::JobInserted(Inserted::Created(j))) = written.first() {
                    let by = crate::enqueue::traced::MadeBy {
                        parent: parent.as_ref(),
                        remote: false,
                        via: "spawn",
                    };
                    crate::enqueue::traced::enqueued(registry.traces(), j, by, start);
                }
                Ok::<_, GuestFailure>(match written.first() {
                    Some(Written::JobInserted(Inserted::Created(j) | Inserted::Existing(j))) => {
                        j.id.clone()
                    }
                    _ => new.id,
                })
            })
            .await??;
        // Recorded after the insert: were this lost, the retried call would
        // find the child by its key, and record it then.
        self.record(&call, CallKind::Spawn, &task, &child).await;
        if let Some(w) = &self.wake {
            w.notify_one();
        }
        Ok(child)
    }
}
