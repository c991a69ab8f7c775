//! One attempt of a claimed job, read top to bottom as named steps:
//! resolve → instantiate → call → classify → decide → finalize, ending in
//! the `Finalize` the store writes. The decision is `decision`'s, a pure
//! function: what it reads is gathered here first, and what it answers is
//! carried out here after (a fallback pinned, callbacks built). Guest code
//! runs here, never inside a database transaction.

use super::callbacks::attach_callbacks;
use super::decision::{self, AttemptEnd, AttemptRules, Decision, Move, Pinned, Policy};
use super::end::{check_output, fail_unrun, record, record_as, release_for_now, Executed, Ran};
use super::held::Held;
use crate::job::{ErrorKind, JobError};
use crate::parent_close::ParentClose;
use crate::registry::{Registry, RegistryError, TaskVersion};
use crate::retry::rand_unit;
use crate::sandbox::{
    AttemptReport, AttemptRequest, Determinism, Ending, Invalid, JobRef, Limits, Program,
    ProgressHook,
};
use crate::store::{Action, ClaimedJob, Finalize, ProgressRecord, StepRecord, StoreError, TaskRef};
use crate::time::Millis;
use crate::workflow::orchestrate::Orchestration;
use crate::workflow::Plan;
use std::sync::Arc;
use std::time::Duration;

/// Runs one attempt of `job` and decides what becomes of the job.
pub async fn execute(
    registry: &Arc<Registry>,
    held: &Held,
    job: &ClaimedJob,
    rules: &AttemptRules,
    (wake, home): (&Arc<tokio::sync::Notify>, &tokio::runtime::Handle),
) -> Executed {
    // A verification runs no guest of its own: the host runs the
    // candidate on recorded jobs.
    if crate::verify::task_of(&job.task.name).is_some() {
        return super::verify::execute(registry, held, job).await;
    }
    let started_at = registry.store().now();
    // Resolve: the task and program pinned, the workflow's stage, the
    // secrets; a job that may not run any more ends here.
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
    if let Some(error) = decision::unrunnable(job, step, started_at) {
        let decided = Decision::Move(decision::unrun(error, plan.as_ref(), job));
        let ran = Ran::unrun(started_at, started_at);
        let finalize = finalize(registry, &task, (job, None), decided, plan.is_some(), ran).await;
        return Executed {
            // It ends as any attempt's end does: its children close too.
            finalize: finalize.map(|f| Finalize {
                close_children: closes_children(&task),
                ..f
            }),
            ran_for: Duration::ZERO,
        };
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
    // Instantiate and call: the guest runs, its sub-tasks with it.
    let trace = super::traced::begin(registry.traces(), job);
    let began = std::time::SystemTime::now();
    let mut request = instantiate(registry, &task, step, job, held, started_at);
    request.trace = trace.clone();
    let report = call(registry, &program, request, job, secrets, (wake, home)).await;
    let finished_at = registry.store().now();
    let stop = held.stop_reason(&job.id, &job.lease_token);
    // Classify: the ending as the decision reads it.
    let ending = classify(registry, &task, job, &report.ending).await;
    // Decide.
    let end = AttemptEnd {
        ending: &ending,
        stop,
        at: finished_at,
    };
    let policy = Policy::of(&task, plan.as_ref(), rules);
    let decided = decision::decide(&end, &policy, job, rand_unit);
    // Finalize.
    let ran = Ran {
        started_at,
        finished_at,
        report: Some(&report),
    };
    let span = trace.as_ref().map(|t| &t.attempt);
    let finalize = finalize(registry, &task, (job, span), decided, plan.is_some(), ran).await;
    if let Some(t) = &trace {
        let ran = super::traced::Ran {
            began,
            ended: std::time::SystemTime::now(),
            started_at,
        };
        super::traced::end(
            t,
            job,
            (&task, step),
            &ran,
            Some(&report),
            finalize.as_ref(),
        );
    }
    Executed {
        finalize: finalize.map(|f| Finalize {
            close_children: closes_children(&task),
            ..f
        }),
        ran_for: report.duration,
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
    let ran = Ran::unrun(job.started_at, now);
    // A verification starts again from the runs it kept.
    if crate::verify::task_of(&job.task.name).is_some() {
        let action = if job.attempts < job.max_attempts {
            Action::Retry { delay_ms: 0, error }
        } else {
            Action::Fail { error }
        };
        return Some(record(job, action, ran));
    }
    let task = registry
        .task(&job.tenant, &job.task.name, Some(job.task.version))
        .await;
    let task = match task {
        Ok(task) => task,
        // The store did not answer (it restarts, a connection broke): the
        // task's retries and callbacks cannot be known now, and failing the
        // job without them would lose its `on_fail`. Rescued again later.
        Err(crate::registry::RegistryError::Store(e)) => {
            tracing::warn!(job = %job.id, error = %e, "the lost job's task cannot be read now; it is rescued again when its new lease runs out");
            return None;
        }
        Err(e) => {
            tracing::warn!(job = %job.id, error = %e, "the lost job's task cannot be loaded; it fails");
            return Some(record(job, Action::Fail { error }, ran));
        }
    };
    let plan = crate::workflow::plan_of(registry.store().as_ref(), job)
        .await
        .ok()?;
    let end = AttemptEnd {
        ending: &Ending::Failed(error),
        stop: None,
        at: now,
    };
    // A lost attempt never snoozed: the host's snooze rules do not apply.
    let rules = AttemptRules::default();
    let decided = decision::decide(
        &end,
        &Policy::of(&task, plan.as_ref(), &rules),
        job,
        rand_unit,
    );
    let f = finalize(registry, &task, (job, None), decided, plan.is_some(), ran).await?;
    Some(Finalize {
        close_children: closes_children(&task),
        ..f
    })
}

/// What becomes of a job's unfinished children when it ends, if anything
/// (its task's `parent_close`; `abandon` is nothing).
fn closes_children(task: &TaskVersion) -> Option<ParentClose> {
    task.spec
        .parent_close
        .filter(|p| *p != ParentClose::Abandon)
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

/// The request the sandbox instantiates the program for: the task's (or
/// the stage's) limits, cut short by the job's deadline and the stage's
/// budget, with cancellation and progress wired to the held lease.
fn instantiate(
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
    let ends = [job.deadline_at, step.and_then(decision::budget_end)];
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
    req.cancel = Some(held.cancel_token(&job.id, &job.lease_token));
    req.tenant = Arc::from(job.tenant.as_str());
    req.network = task.network.clone();
    if task.spec.deterministic {
        req.determinism = Some(Determinism::of_job(&job.id));
    }
    let (held, id, lease) = (held.clone(), job.id.clone(), job.lease_token.clone());
    let hook: ProgressHook = Arc::new(move |p| {
        held.progress(
            &id,
            &lease,
            ProgressRecord {
                percent: p.percent,
                note: p.note.clone(),
            },
        )
    });
    req.on_progress = Some(hook);
    req
}

/// Runs the guest, and adds what its sub-tasks burned: that is the
/// tenant's too.
async fn call(
    registry: &Arc<Registry>,
    program: &Program,
    mut request: AttemptRequest,
    job: &ClaimedJob,
    secrets: Vec<(String, String)>,
    (wake, home): (&Arc<tokio::sync::Notify>, &tokio::runtime::Handle),
) -> AttemptReport {
    let orchestration = Arc::new(
        Orchestration::new(
            registry.clone(),
            &job.id,
            &job.tenant,
            &job.queue,
            request.cancel.clone(),
            Some(wake.clone()),
            Some(home.clone()),
            crate::sandbox::Redactor::new(&secrets),
        )
        .traced(request.trace.as_ref().map(|t| t.attempt)),
    );
    request.secrets = secrets;
    request.orchestrate = Some(orchestration.clone());
    let mut report = registry.sandbox().run(program, request).await;
    report.fuel_used = report.fuel_used.saturating_add(orchestration.fuel_used());
    report.network.add(&orchestration.network_used());
    report
}

/// The attempt's ending as the decision reads it: an output that breaks
/// the task's output schema is a failure (`invalid_output`).
async fn classify(
    registry: &Registry,
    task: &Arc<TaskVersion>,
    job: &ClaimedJob,
    ending: &Ending,
) -> Ending {
    match ending {
        Ending::Done(output) => match check_output(registry, task, output).await {
            Ok(()) => ending.clone(),
            Err(e) => Ending::Failed(e),
        },
        Ending::Unavailable(why) => {
            tracing::warn!(job = %job.id, %why, "no sandbox slot; the job goes back to the queue");
            ending.clone()
        }
        other => other.clone(),
    }
}

/// Carries out what was decided: a fallback pinned, then the end as the
/// store writes it, with a job of one task's callbacks. `None`: write
/// nothing (the lease is gone, or a callback cannot be built now).
async fn finalize(
    registry: &Registry,
    task: &TaskVersion,
    (job, attempt_span): (&ClaimedJob, Option<&crate::otel::TraceParent>),
    decided: Decision,
    workflow: bool,
    ran: Ran<'_>,
) -> Option<Finalize> {
    let Move {
        action,
        steps,
        attempt,
    } = match decided {
        Decision::Nothing => return None,
        Decision::Move(moved) => moved,
        Decision::Fallback { task, error } => {
            let pinned = pin(registry, job, &task).await;
            decision::fall_back(job, error, pinned)
        }
    };
    let mut f = record_as(job, action, attempt.as_deref(), ran);
    f.steps = steps;
    // A workflow's stages name what follows; its tasks' callbacks are not
    // run (the workflow's chains are its callbacks).
    if !workflow {
        attach_callbacks(registry, task, (job, attempt_span), &mut f)
            .await
            .ok()?;
    }
    Some(f)
}

/// The fallback task `name` as the job pins it: its live version, or a
/// staged one for a rollout's share of job ids. `None` (logged): it
/// cannot be loaded, and the job fails instead.
async fn pin(registry: &Registry, job: &ClaimedJob, name: &str) -> Option<Pinned> {
    match registry.task_for(&job.tenant, name, &job.id).await {
        Ok(fb) => Some(Pinned {
            task: TaskRef {
                name: fb.record.name.clone(),
                version: fb.record.version,
                digest: fb.record.digest.clone(),
            },
            max_attempts: fb.retry.max_attempts,
        }),
        Err(e) => {
            tracing::warn!(job = %job.id, fallback = %name, error = %e, "fallback unavailable; the job fails");
            None
        }
    }
}
