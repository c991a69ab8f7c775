//! One attempt of a claimed job, read top to bottom as named steps:
//! resolve → prepare → run → decide, ending in the `Finalize` the store
//! writes. Guest code runs here, never inside a database transaction.

use super::callbacks::attach_callbacks;
use super::held::{Held, StopReason};
use crate::bounds::MAX_FALLBACK_DEPTH;
use crate::job::{ErrorKind, JobError};
use crate::parent_close::ParentClose;
use crate::registry::{Registry, RegistryError, TaskVersion, Which};
use crate::retry::{rand_unit, Decision, FailReason};
use crate::sandbox::{
    AttemptReport, AttemptRequest, Ending, Invalid, JobRef, Limits, ProgressHook,
};
use crate::store::{
    Action, AttemptRecord, ClaimedJob, Finalize, Millis, ProgressRecord, StepConfig, StepKind,
    StepRecord, StepStatus, StepWrite, StoreError, TaskRef, Usage,
};
use crate::workflow::orchestrate::Orchestration;
use crate::workflow::Plan;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Longest snooze a guest may ask for: 30 days.
const MAX_SNOOZE_MS: u64 = 30 * 24 * 60 * 60 * 1000;
/// How long a job waits after no sandbox instance was free for it: the
/// pool is shared with runs outside the slots, and meeting it full again
/// at once would only spin.
const UNAVAILABLE_DELAY_MS: u64 = 1_000;
/// How long a job waits when its task or component could not be loaded
/// for a reason that passes (the database or the compiler was busy).
const TRANSIENT_DELAY_MS: u64 = 5_000;
/// The shortest snooze by default: a guest asking for less waits this long.
pub const DEFAULT_SNOOZE_FLOOR_MS: u64 = 1_000;
/// Snoozes one job may make by default; the next fails it.
pub const DEFAULT_MAX_SNOOZES: u32 = 1_000;

/// The host's rules for what a guest may ask of the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptRules {
    /// A snooze shorter than this counts as this long.
    pub snooze_floor_ms: u64,
    /// A job that snoozed this often fails at its next snooze.
    pub max_snoozes: u32,
}

impl Default for AttemptRules {
    fn default() -> Self {
        AttemptRules {
            snooze_floor_ms: DEFAULT_SNOOZE_FLOOR_MS,
            max_snoozes: DEFAULT_MAX_SNOOZES,
        }
    }
}

/// What one attempt produced for the store, and how long the guest ran.
pub struct Executed {
    /// `None` when the lease was lost: the runner writes nothing.
    pub finalize: Option<Finalize>,
    pub ran_for: Duration,
}

/// Runs one attempt of `job` and decides what becomes of the job.
pub async fn execute(
    registry: &Arc<Registry>,
    held: &Held,
    job: &ClaimedJob,
    rules: &AttemptRules,
    (wake, home): (&Arc<tokio::sync::Notify>, &tokio::runtime::Handle),
) -> Executed {
    let started_at = registry.store().now();
    let (task, program) = match resolve(registry, job).await {
        Ok(resolved) => resolved,
        Err(Unresolved::Broken(error)) => {
            return fail_unrun(job, error, started_at, registry.store().now())
        }
        Err(Unresolved::ForNow(why)) => {
            tracing::warn!(job = %job.id, %why, "the job's task cannot be loaded now; it goes back to the queue");
            return release_for_now(job, started_at);
        }
    };
    let plan = match crate::workflow::plan_at(home, registry.store().clone(), job).await {
        Ok(plan) => plan,
        Err(e) => {
            tracing::warn!(job = %job.id, error = %e, "the job's stages cannot be read now; it goes back to the queue");
            return release_for_now(job, started_at);
        }
    };
    let step = plan.as_ref().map(Plan::current);
    if let Some(deadline) = job.deadline_at.filter(|d| *d <= started_at) {
        let mut unrun = fail_unrun(job, deadline_error(deadline), started_at, started_at);
        if let Some(f) = &mut unrun.finalize {
            if plan.is_some() {
                settle(plan.as_ref(), job, f);
            } else if attach_callbacks(registry, &task, job, f).await.is_err() {
                unrun.finalize = None;
            }
        }
        return unrun;
    }
    if let Some(spent) = step.and_then(|s| budget_spent(s, started_at)) {
        let mut unrun = fail_unrun(job, spent, started_at, started_at);
        if let Some(f) = &mut unrun.finalize {
            settle(plan.as_ref(), job, f);
        }
        return unrun;
    }
    let secrets = match secrets(registry, &task, job).await {
        Ok(s) => s,
        Err(Unresolved::Broken(error)) => {
            return fail_unrun(job, error, started_at, registry.store().now())
        }
        Err(Unresolved::ForNow(why)) => {
            tracing::warn!(job = %job.id, %why, "the job's secrets cannot be read now; it goes back to the queue");
            return release_for_now(job, started_at);
        }
    };
    let mut request = prepare(registry, &task, step, job, held, started_at);
    let orchestration = Arc::new(Orchestration::new(
        registry.clone(),
        &job.id,
        &job.tenant,
        &job.queue,
        request.cancel.clone(),
        Some(wake.clone()),
        Some(home.clone()),
        crate::sandbox::Redactor::new(&secrets),
    ));
    request.secrets = secrets;
    request.orchestrate = Some(orchestration.clone());
    let mut report = registry.sandbox().run(&program, request).await;
    // What its sub-tasks burned is the tenant's too.
    report.fuel_used = report.fuel_used.saturating_add(orchestration.fuel_used());
    report.network.add(&orchestration.network_used());
    let finished_at = registry.store().now();
    let ran_for = report.duration;
    let stop = held.stop_reason(&job.id);
    let ending = snooze_rules(&report.ending, job, rules);
    let action = match decide(registry, &task, step, job, &ending, stop, finished_at).await {
        Some(a) => a,
        None => {
            return Executed {
                finalize: None,
                ran_for,
            }
        }
    };
    let mut f = finalize(job, action, started_at, finished_at, Some(&report));
    f.close_children = closes_children(&task);
    if plan.is_some() {
        // A workflow's stages name what follows; its tasks' callbacks are
        // not run (the workflow's chains are its callbacks).
        settle(plan.as_ref(), job, &mut f);
    } else {
        if attach_callbacks(registry, &task, job, &mut f)
            .await
            .is_err()
        {
            return Executed {
                finalize: None,
                ran_for,
            };
        }
        f.steps = fallback_stages(job, &f.action);
    }
    Executed {
        finalize: Some(f),
        ran_for,
    }
}

/// A job of one task keeps its stages as rows once a fallback takes over
/// (the same rows a workflow's stages are): the task that failed for good
/// and the fallback now active, then that fallback's attempts and end.
/// Nothing for a job still on its own task that goes on with it.
fn fallback_stages(job: &ClaimedJob, action: &Action) -> Vec<StepWrite> {
    let in_fallback = job.own_task.is_some();
    if !in_fallback && !matches!(action, Action::Fallback { .. }) {
        return Vec::new();
    }
    let (status, error) = match action {
        Action::Complete { .. } => (StepStatus::Completed, None),
        Action::Fail { error } | Action::Fallback { error, .. } => {
            (StepStatus::Failed, Some(error.clone()))
        }
        Action::Cancel => (StepStatus::Cancelled, None),
        Action::Retry { .. } | Action::Snooze { .. } | Action::Wait { .. } => {
            (StepStatus::Active, None)
        }
        Action::Release { .. } | Action::Advance { .. } | Action::Conclude { .. } => {
            return Vec::new()
        }
    };
    let stage = |seq: u32, task: &TaskRef, max_attempts: u32| StepRecord {
        seq,
        kind: if seq == 0 {
            StepKind::Task
        } else {
            StepKind::Fallback
        },
        name: task.name.clone(),
        task: task.clone(),
        max_attempts,
        config: StepConfig::default(),
        status: StepStatus::Active,
        attempts: 0,
        output: None,
        error: None,
        started_at: None,
        finished_at: None,
    };
    let seq = job.fallback_depth;
    let stage_max = job.max_attempts.saturating_sub(job.attempts - job.attempt);
    let cur = stage(seq, &job.task, stage_max);
    let mut out = vec![StepWrite {
        row: Some(Box::new(cur.clone())),
        ..cur.write(status, Some(job.attempt), None, error)
    }];
    if let Action::Fallback {
        task, max_attempts, ..
    } = action
    {
        let next = stage(seq + 1, task, *max_attempts);
        out.push(StepWrite {
            row: Some(Box::new(next.clone())),
            ..next.activate()
        });
    }
    out
}

/// What becomes of a job's unfinished children when it ends, if anything
/// (its task's `parent_close`; `abandon` is nothing).
fn closes_children(task: &TaskVersion) -> Option<ParentClose> {
    task.spec
        .parent_close
        .filter(|p| *p != ParentClose::Abandon)
}

/// Gives the job back, uncounted, for a while: what it needs cannot be
/// read now (the database or the compiler was busy).
fn release_for_now(job: &ClaimedJob, at: Millis) -> Executed {
    let action = Action::Release {
        delay_ms: TRANSIENT_DELAY_MS,
    };
    Executed {
        finalize: Some(finalize(job, action, at, at, None)),
        ran_for: Duration::ZERO,
    }
}

/// A workflow job's end: where the attempt's action takes the job, and
/// the stage rows it changes. The attempt's own record keeps what the
/// attempt did.
fn settle(plan: Option<&Plan>, job: &ClaimedJob, f: &mut Finalize) {
    let Some(plan) = plan else {
        return;
    };
    let action = std::mem::replace(&mut f.action, Action::Cancel);
    let (action, steps) = plan.settle(action, &job.input, job.attempt);
    f.action = action;
    f.steps = steps;
}

/// When a stage's budget (its `timeout_ms` across attempts) ends.
fn budget_end(step: &StepRecord) -> Option<Millis> {
    let budget = i64::try_from(step.config.budget_ms?).unwrap_or(i64::MAX);
    Some(step.started_at?.saturating_add(budget))
}

/// The failure of a stage whose budget is spent by `now`.
fn budget_spent(step: &StepRecord, now: Millis) -> Option<JobError> {
    let end = budget_end(step).filter(|end| *end <= now)?;
    Some(JobError::with_code(
        ErrorKind::Timeout,
        "step_budget",
        format!(
            "step {:?} has used its budget of {} ms across its attempts (it ended at {})",
            step.name,
            step.config.budget_ms.unwrap_or_default(),
            crate::store::clock::rfc3339(end)
        ),
    ))
}

/// A snooze shorter than the floor is the floor; one past the cap is a
/// failure (a guest answering `snooze(0)` for ever would loop for ever).
fn snooze_rules(ending: &Ending, job: &ClaimedJob, rules: &AttemptRules) -> Ending {
    match ending {
        Ending::Snooze(_) if job.snoozes >= rules.max_snoozes => {
            Ending::Failed(JobError::with_code(
                ErrorKind::Trap,
                "too_many_snoozes",
                format!(
                    "the job snoozed {} times, the most one job may",
                    job.snoozes
                ),
            ))
        }
        Ending::Snooze(ms) => Ending::Snooze((*ms).max(rules.snooze_floor_ms)),
        other => other.clone(),
    }
}

/// Decides the attempt of a job whose runner died mid-attempt, as one that
/// failed with `runner_lost`: retried after the task's backoff, failed when
/// out of attempts, or handed to the task's fallback, like any other.
/// `None` when it cannot be decided now (its callback cannot be built):
/// it is rescued again when the new lease runs out.
pub async fn lost(registry: &Registry, job: &ClaimedJob) -> Option<Finalize> {
    let now = registry.store().now();
    let error = JobError::new(
        ErrorKind::RunnerLost,
        "the runner holding this job stopped before the attempt ended",
    );
    let task = registry
        .task(&job.tenant, &job.task.name, Some(job.task.version))
        .await;
    let task = match task {
        Ok(task) => task,
        Err(e) => {
            tracing::warn!(job = %job.id, error = %e, "the lost job's task cannot be loaded; it fails");
            return Some(finalize(
                job,
                Action::Fail { error },
                job.started_at,
                now,
                None,
            ));
        }
    };
    let plan = crate::workflow::plan_of(registry.store().as_ref(), job)
        .await
        .ok()?;
    let action = decide(
        registry,
        &task,
        plan.as_ref().map(Plan::current),
        job,
        &Ending::Failed(error.clone()),
        None,
        now,
    )
    .await
    .unwrap_or(Action::Fail { error });
    let mut f = finalize(job, action, job.started_at, now, None);
    f.close_children = closes_children(&task);
    if plan.is_some() {
        settle(plan.as_ref(), job, &mut f);
    } else {
        attach_callbacks(registry, &task, job, &mut f).await.ok()?;
        f.steps = fallback_stages(job, &f.action);
    }
    Some(f)
}

/// Fails the job without running the guest (it cannot be loaded, or its
/// deadline has passed already).
fn fail_unrun(
    job: &ClaimedJob,
    error: JobError,
    started_at: Millis,
    finished_at: Millis,
) -> Executed {
    Executed {
        finalize: Some(finalize(
            job,
            Action::Fail { error },
            started_at,
            finished_at,
            None,
        )),
        ran_for: Duration::ZERO,
    }
}

/// Why a job's task could not be loaded.
enum Unresolved {
    /// For good: the job fails.
    Broken(JobError),
    /// For now (the database or the compiler was busy): the job waits.
    ForNow(String),
}

/// The task version and compiled program this attempt runs.
async fn resolve(
    registry: &Registry,
    job: &ClaimedJob,
) -> Result<(Arc<TaskVersion>, Arc<crate::sandbox::Program>), Unresolved> {
    let unloadable = |e: RegistryError| match e {
        RegistryError::Store(StoreError::Unavailable(_) | StoreError::Internal(_))
        | RegistryError::InvalidComponent(Invalid::Busy(_)) => Unresolved::ForNow(e.to_string()),
        e => {
            tracing::error!(job = %job.id, task = %job.task.name, error = %e, "cannot resolve the job's task");
            Unresolved::Broken(JobError::with_code(
                ErrorKind::Trap,
                "unloadable",
                format!("the task's pinned version or component cannot be loaded: {e}"),
            ))
        }
    };
    let task = registry
        .task(&job.tenant, &job.task.name, Some(job.task.version))
        .await
        .map_err(unloadable)?;
    let program = registry
        .program(&job.tenant, &job.task.digest)
        .await
        .map_err(unloadable)?;
    Ok((task, program))
}

/// The secrets the task declares, opened: the ones its tenant has. A
/// store that does not answer waits; a secret that does not open (the
/// key changed) fails the job rather than run it without.
async fn secrets(
    registry: &Registry,
    task: &TaskVersion,
    job: &ClaimedJob,
) -> Result<Vec<(String, String)>, Unresolved> {
    registry
        .secrets_for(&job.tenant, task)
        .await
        .map_err(|e| match e {
            crate::secrets::SecretsError::Store(
                s @ (StoreError::Unavailable(_) | StoreError::Internal(_)),
            ) => Unresolved::ForNow(s.to_string()),
            e => {
                tracing::error!(job = %job.id, task = %job.task.name, error = %e, "cannot open the job's secrets");
                let code = match e {
                    crate::secrets::SecretsError::NoKey => "secrets_unavailable",
                    _ => "secrets_unreadable",
                };
                Unresolved::Broken(JobError::with_code(ErrorKind::Trap, code, e.to_string()))
            }
        })
}

/// The sandbox request: the task's limits, cut short by the job's
/// deadline, with cancellation and progress wired to the held lease.
fn prepare(
    registry: &Registry,
    task: &TaskVersion,
    step: Option<&StepRecord>,
    job: &ClaimedJob,
    held: &Held,
    now: Millis,
) -> AttemptRequest {
    let mut limits = match step.and_then(|s| s.config.limits.as_ref()) {
        Some(own) => Limits::resolve(own, task.limits, &registry.sandbox().config().ceilings),
        None => task.limits,
    };
    let ends = [job.deadline_at, step.and_then(budget_end)];
    for end in ends.into_iter().flatten() {
        let left = u64::try_from(end - now).unwrap_or(1).max(1);
        limits.timeout_ms = limits.timeout_ms.min(left);
    }
    let mut req = AttemptRequest::new(
        JobRef {
            id: job.id.clone(),
            attempt: job.attempt,
            queue: job.queue.clone(),
        },
        job.input.clone(),
        limits,
    );
    req.cancel = Some(held.cancel_token(&job.id));
    req.tenant = Arc::from(job.tenant.as_str());
    req.network = task.network.clone();
    let (held, id) = (held.clone(), job.id.clone());
    let hook: ProgressHook = Arc::new(move |p| {
        held.progress(
            &id,
            ProgressRecord {
                percent: p.percent,
                note: p.note.clone(),
            },
        )
    });
    req.on_progress = Some(hook);
    req
}

/// What becomes of the job after this attempt; `None`: write nothing (the
/// lease is gone).
async fn decide(
    registry: &Registry,
    task: &Arc<TaskVersion>,
    step: Option<&StepRecord>,
    job: &ClaimedJob,
    ending: &Ending,
    stop: Option<StopReason>,
    now: Millis,
) -> Option<Action> {
    let error = match ending {
        Ending::Done(output) => match check_output(registry, task, output).await {
            Ok(()) => {
                return Some(Action::Complete {
                    output: output.clone(),
                })
            }
            Err(e) => e,
        },
        Ending::Snooze(ms) => {
            return Some(Action::Snooze {
                delay_ms: (*ms).min(MAX_SNOOZE_MS),
            })
        }
        Ending::Wait(what) => {
            return Some(Action::Wait {
                waiting_for: what.clone(),
            })
        }
        Ending::Cancelled => {
            return match stop {
                Some(StopReason::Lost) => None,
                Some(StopReason::Shutdown) => Some(Action::Release { delay_ms: 0 }),
                Some(StopReason::Cancel) | None => Some(Action::Cancel),
            }
        }
        Ending::Unavailable(why) => {
            tracing::warn!(job = %job.id, %why, "no sandbox slot; the job goes back to the queue");
            return Some(Action::Release {
                delay_ms: UNAVAILABLE_DELAY_MS,
            });
        }
        Ending::Failed(e) => match job.deadline_at {
            // The timeout was the deadline's, not the task's.
            Some(d) if e.kind == ErrorKind::Timeout && now >= d => deadline_error(d),
            _ => match step.and_then(|s| budget_spent(s, now)) {
                Some(spent) if e.kind == ErrorKind::Timeout => spent,
                _ => e.clone(),
            },
        },
    };
    let stage_max = job.max_attempts.saturating_sub(job.attempts - job.attempt);
    // A workflow step's own policy, else its task's.
    let base = step
        .and_then(|s| s.config.retry.as_ref())
        .unwrap_or(&task.retry);
    let policy = crate::retry::RetryPolicy {
        max_attempts: stage_max.max(1),
        ..base.clone()
    };
    let next_at = |delay_ms: u64| now.saturating_add(i64::try_from(delay_ms).unwrap_or(i64::MAX));
    match policy.decide(&error, job.attempt, rand_unit) {
        Decision::RetryAfter(delay_ms) => match job.deadline_at {
            Some(d) if next_at(delay_ms) >= d => {
                fail_or_fallback(
                    registry,
                    task,
                    step,
                    job,
                    deadline_error(d),
                    FailReason::DeadlineExceeded,
                )
                .await
            }
            // The step's budget would be spent before its next attempt.
            _ => match step.and_then(|s| budget_spent(s, next_at(delay_ms))) {
                Some(_) => Some(Action::Fail { error }),
                None => Some(Action::Retry { delay_ms, error }),
            },
        },
        Decision::Fail(reason) => fail_or_fallback(registry, task, step, job, error, reason).await,
    }
}

/// A job that failed for good hands over to its task's fallback, if any.
async fn fail_or_fallback(
    registry: &Registry,
    task: &TaskVersion,
    step: Option<&StepRecord>,
    job: &ClaimedJob,
    error: JobError,
    reason: FailReason,
) -> Option<Action> {
    // A workflow's fallbacks are pinned in its stages (`workflow::plan`).
    if step.is_some() {
        return Some(Action::Fail { error });
    }
    let fallback = match (&task.spec.fallback, reason) {
        (_, FailReason::DeadlineExceeded) => None,
        (Some(f), _) if job.fallback_depth < MAX_FALLBACK_DEPTH => Some(f),
        _ => None,
    };
    let Some(name) = fallback else {
        return Some(Action::Fail { error });
    };
    let fb = match registry.task(&job.tenant, name, None).await {
        Ok(fb) => fb,
        Err(e) => {
            tracing::warn!(job = %job.id, fallback = %name, error = %e, "fallback unavailable; the job fails");
            return Some(Action::Fail { error });
        }
    };
    let input: serde_json::Value =
        serde_json::from_str(&job.input).unwrap_or(serde_json::Value::Null);
    let fb_input = json!({
        "input": input,
        "error": error.brief(),
    });
    Some(Action::Fallback {
        task: TaskRef {
            name: fb.record.name.clone(),
            version: fb.record.version,
            digest: fb.record.digest.clone(),
        },
        input: fb_input.to_string(),
        max_attempts: fb.retry.max_attempts,
        error,
    })
}

async fn check_output(
    registry: &Registry,
    task: &Arc<TaskVersion>,
    output: &str,
) -> Result<(), JobError> {
    if task.output_schema.is_none() {
        return Ok(());
    }
    let value: serde_json::Value = serde_json::from_str(output)
        .map_err(|e| JobError::new(ErrorKind::InvalidOutput, format!("output is not JSON: {e}")))?;
    registry
        .check(task, Which::Output, value)
        .await
        .map(drop)
        .map_err(|e| {
            let list: Vec<String> = e
                .violations()
                .iter()
                .map(|v| {
                    format!(
                        "{}: {}",
                        if v.pointer.is_empty() {
                            "/"
                        } else {
                            &v.pointer
                        },
                        v.message
                    )
                })
                .collect();
            JobError::new(
                ErrorKind::InvalidOutput,
                format!(
                    "output breaks the task's output_schema: {}",
                    list.join("; ")
                ),
            )
        })
}

fn deadline_error(deadline: Millis) -> JobError {
    JobError::new(
        ErrorKind::DeadlineExceeded,
        format!(
            "the job's deadline ({}) has passed",
            crate::store::clock::rfc3339(deadline)
        ),
    )
}

fn finalize(
    job: &ClaimedJob,
    action: Action,
    started_at: Millis,
    finished_at: Millis,
    report: Option<&AttemptReport>,
) -> Finalize {
    // The attempt's error is the one its action carries.
    let error = match &action {
        Action::Retry { error, .. } | Action::Fail { error } | Action::Fallback { error, .. } => {
            Some(error.clone())
        }
        _ => None,
    };
    let outcome = match &action {
        Action::Complete { .. } => "completed",
        Action::Retry { .. } => "retried",
        Action::Fail { .. } => "failed",
        Action::Snooze { .. } => "snoozed",
        Action::Wait { .. } => "waiting",
        Action::Cancel => "cancelled",
        Action::Fallback { .. } => "fallback",
        Action::Release { .. } => "released",
        // Made from an attempt's action by `settle`, never before.
        Action::Advance { .. } | Action::Conclude { .. } => "completed",
    };
    let attempt = (!matches!(action, Action::Release { .. })).then(|| AttemptRecord {
        attempt: job.attempts,
        task: job.task.clone(),
        started_at,
        finished_at,
        outcome: outcome.to_owned(),
        error,
        fuel_used: report.map_or(0, |r| r.fuel_used),
        peak_memory_bytes: report.map_or(0, |r| r.peak_memory_bytes),
        log: report
            .map(|r| r.log.clone())
            .filter(|l| !l.lines.is_empty() || l.dropped_lines > 0),
        network: report.map(|r| r.network).filter(|n| !n.is_empty()),
    });
    // Whatever the guest burned is its tenant's, even when the attempt
    // itself is not counted (a shutdown gives the job back).
    let usage = report.map(|r| Usage {
        fuel: r.fuel_used,
        wall_ms: u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
        http_requests: r.network.requests,
        http_bytes: r
            .network
            .bytes_sent
            .saturating_add(r.network.bytes_received),
    });
    Finalize {
        id: job.id.clone(),
        tenant: job.tenant.clone(),
        lease_token: job.lease_token.clone(),
        action,
        attempt,
        usage,
        callbacks: None,
        names: job.names(),
        steps: Vec::new(),
        close_children: None,
    }
}
