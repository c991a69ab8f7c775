//! One attempt of a verification job (`verify`): the host, not a guest,
//! runs the candidate component on each recorded job's input in turn,
//! under the task's limits, with no outbound HTTP, no secrets and no
//! sub-tasks, and keeps the runs' results as it goes (a few at a time). An attempt stops
//! after it has burned what was left of the tenant's fuel budget, or after
//! `CHUNK`, and snoozes: its fuel is charged then, and the next attempt
//! goes on from the kept results. The last one completes the job with the
//! report.

use super::end::{check_output, record, release_for_now, Executed, Ran};
use super::held::{Held, StopReason};
use crate::job::{ErrorKind, JobError, JobStatus};
use crate::registry::{Registry, RegistryError, TaskVersion};
use crate::sandbox::{
    AttemptReport, AttemptRequest, Determinism, Ending, JobRef, Program, Redactor,
};
use crate::store::{
    Action, CallKind, CallRecord, ClaimedJob, ProgressRecord, RecordedRun, StoreError, Write,
};
use crate::verify::report::{Ended, Pair, Report, Side, Subject};
use crate::verify::Plan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest one attempt runs samples before it snoozes and is charged.
const CHUNK: Duration = Duration::from_secs(30);
/// Runs are kept (written) this many at a time, or after this long: a
/// write per run would cost more than a short run, and a lost runner's
/// next attempt runs again at most what was not kept.
const KEEP_EVERY: usize = 32;
const KEEP_AFTER: Duration = Duration::from_secs(1);

/// What is kept of one recorded job once the verification reached it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Sample {
    /// Boxed: a kept run is larger than the name of a missing one.
    Ran(Box<Pair>),
    /// Gone (pruned) before it was run again.
    Missing { job: String },
}

/// Why the verification stops before its end.
enum Stop {
    /// Its budget for this attempt is spent: snooze, and go on.
    Chunk,
    Cancelled,
    /// The lease is gone: write nothing.
    Lost,
    /// The runner stops, or the sandbox is full: give it back for now.
    GiveBack(u64),
}

/// Runs (more of) a verification, and decides what becomes of the job.
pub async fn execute(registry: &Arc<Registry>, held: &Held, job: &ClaimedJob) -> Executed {
    let started_at = registry.store().now();
    let fail = |message: String| {
        let error = JobError::with_code(ErrorKind::Trap, "unverifiable", message);
        let ran = Ran::unrun(started_at, registry.store().now());
        Executed {
            finalize: Some(record(job, Action::Fail { error }, ran)),
            ran_for: Duration::ZERO,
        }
    };
    let plan: Plan = match serde_json::from_str(&job.input) {
        Ok(p) => p,
        Err(e) => return fail(format!("the verification's plan does not read: {e}")),
    };
    let loaded = async {
        let tv = registry
            .task(&job.tenant, &plan.task, Some(plan.version))
            .await?;
        let program = registry.program(&job.tenant, &job.task.digest).await?;
        Ok::<_, RegistryError>((tv, program))
    };
    let (tv, program) = match loaded.await {
        Ok(l) => l,
        Err(
            e @ (RegistryError::Store(StoreError::Unavailable(_) | StoreError::Internal(_))
            | RegistryError::InvalidComponent(crate::sandbox::Invalid::Busy(_))),
        ) => {
            tracing::warn!(job = %job.id, error = %e, "the verification cannot load what it runs now; it goes back to the queue");
            return release_for_now(job, started_at);
        }
        Err(e) => return fail(format!("the task or the candidate cannot be loaded: {e}")),
    };
    // What the report shows is redacted with the task's secrets: a
    // recorded input may carry one the candidate, which has none, echoes.
    let redactor = match registry.secrets_for(&job.tenant, &tv).await {
        Ok(secrets) => Redactor::new(&secrets),
        Err(crate::secrets::SecretsError::Store(
            e @ (StoreError::Unavailable(_) | StoreError::Internal(_)),
        )) => {
            tracing::warn!(job = %job.id, error = %e, "the task's secrets cannot be read now; the verification goes back to the queue");
            return release_for_now(job, started_at);
        }
        Err(e) => {
            return fail(format!(
                "the task's secrets, which its report is redacted with, do not open: {e}"
            ))
        }
    };
    let mut kept = match kept(registry, &job.id).await {
        Ok(k) => k,
        Err(e) => {
            tracing::warn!(job = %job.id, error = %e, "the verification's runs so far cannot be read now");
            return release_for_now(job, started_at);
        }
    };
    let left_in_budget = job.fuel.map(|w| w.budget.saturating_sub(w.used));
    let clock = Instant::now();
    let mut spent = Spent::default();
    let mut stop = None;
    let (mut unkept, mut last_kept) = (Vec::new(), Instant::now());
    for (i, id) in plan.jobs.iter().enumerate() {
        if kept.contains_key(&i) {
            continue;
        }
        if chunk_is_over(spent.fuel, left_in_budget, clock.elapsed()) {
            stop = Some(Stop::Chunk);
            break;
        }
        match held.stop_reason(&job.id, &job.lease_token) {
            Some(StopReason::Cancel) => {
                stop = Some(Stop::Cancelled);
                break;
            }
            Some(StopReason::Lost) => {
                stop = Some(Stop::Lost);
                break;
            }
            Some(StopReason::Shutdown) => {
                stop = Some(Stop::GiveBack(0));
                break;
            }
            None => {}
        }
        let recorded = match registry.store().recorded_run(&job.tenant, id).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(job = %job.id, error = %e, "a recorded job cannot be read now");
                stop = Some(Stop::GiveBack(5_000));
                break;
            }
        };
        let sample = match recorded {
            None => Sample::Missing { job: id.clone() },
            Some(recorded) => {
                let report = run(registry, held, job, &tv, &program, &recorded).await;
                spent.add(&report);
                match &report.ending {
                    Ending::Cancelled => {
                        stop = Some(match held.stop_reason(&job.id, &job.lease_token) {
                            Some(StopReason::Shutdown) => Stop::GiveBack(0),
                            Some(StopReason::Lost) => Stop::Lost,
                            _ => Stop::Cancelled,
                        });
                        break;
                    }
                    Ending::Unavailable(_) => {
                        stop = Some(Stop::GiveBack(5_000));
                        break;
                    }
                    _ => {}
                }
                let candidate = candidate(registry, &tv, &report.ending).await;
                Sample::Ran(Box::new(Pair::of(
                    recorded.id.clone(),
                    recorded.version,
                    Side {
                        ended: &ended_of(&recorded),
                        fuel: recorded.fuel,
                    },
                    Side {
                        ended: &candidate,
                        fuel: report.fuel_used,
                    },
                    &redactor,
                )))
            }
        };
        unkept.push(keeping(registry, job, i, &sample));
        if unkept.len() >= KEEP_EVERY || last_kept.elapsed() >= KEEP_AFTER {
            keep(registry, job, std::mem::take(&mut unkept)).await;
            last_kept = Instant::now();
        }
        kept.insert(i, sample);
        held.progress(&job.id, &job.lease_token, progress(&kept, plan.jobs.len()));
    }
    keep(registry, job, unkept).await;
    let finished_at = registry.store().now();
    let aggregate = spent.report();
    let ran = Ran {
        started_at,
        finished_at,
        report: Some(&aggregate),
    };
    let action = match stop {
        Some(Stop::Lost) => {
            return Executed {
                finalize: None,
                ran_for: spent.wall,
            }
        }
        Some(Stop::Cancelled) => Action::Cancel,
        // Given back uncounted; what ran is still the tenant's.
        Some(Stop::GiveBack(delay_ms)) => Action::Release { delay_ms },
        Some(Stop::Chunk) => Action::Snooze { delay_ms: 0 },
        None => {
            let report = report_of(&plan, &tv, kept);
            match serde_json::to_string(&report) {
                Ok(output) => Action::Complete { output },
                Err(e) => return fail(format!("the report cannot be written: {e}")),
            }
        }
    };
    Executed {
        finalize: Some(record(job, action, ran)),
        ran_for: spent.wall,
    }
}

/// Whether an attempt that burned `spent` fuel in `ran` stops here and
/// snoozes: once it has run something, when it burned what was left of
/// its tenant's budget at the claim (the run that overdraws it finishes,
/// as a job's attempt does), or ran for `CHUNK`.
fn chunk_is_over(spent: u64, left_in_budget: Option<u64>, ran: Duration) -> bool {
    spent > 0 && (left_in_budget.is_some_and(|left| spent >= left) || ran >= CHUNK)
}

/// The runs a verification kept so far, by their place in its plan.
async fn kept(registry: &Registry, id: &str) -> Result<BTreeMap<usize, Sample>, StoreError> {
    let mut out = BTreeMap::new();
    for call in registry.store().job_calls(id).await? {
        if call.kind != CallKind::Verify {
            continue;
        }
        // One that does not read is run again.
        if let (Ok(i), Ok(s)) = (call.call.parse(), serde_json::from_str(&call.result)) {
            out.insert(i, s);
        }
    }
    Ok(out)
}

/// A run as it is kept: a call of the verification job's, at its place
/// in the plan.
fn keeping(registry: &Registry, job: &ClaimedJob, i: usize, sample: &Sample) -> Write {
    Write::JobCall(CallRecord {
        job_id: job.id.clone(),
        call: i.to_string(),
        kind: CallKind::Verify,
        task: job.task.name.clone(),
        // A `Sample` always writes.
        result: serde_json::to_string(sample).unwrap_or_default(),
        created_at: registry.store().now(),
    })
}

/// Keeps runs, in one write, so that a later attempt goes on after them.
/// Unkept (the store did not answer), they run again then.
async fn keep(registry: &Registry, job: &ClaimedJob, runs: Vec<Write>) {
    if runs.is_empty() {
        return;
    }
    let n = runs.len();
    if let Err(e) = registry.store().apply(runs).await {
        tracing::warn!(job = %job.id, runs = n, error = %e, "a verification's runs could not be kept");
    }
}

/// Runs the candidate on a recorded job's input: the task's limits, no
/// outbound HTTP, no secrets, no sub-tasks (an invoke or spawn fails
/// `unavailable`), and, for a deterministic task, the recorded job's
/// clock and seed, so that its output is comparable exactly.
async fn run(
    registry: &Registry,
    held: &Held,
    job: &ClaimedJob,
    tv: &TaskVersion,
    program: &Program,
    recorded: &RecordedRun,
) -> AttemptReport {
    let mut req = AttemptRequest::new(
        JobRef {
            id: recorded.id.clone(),
            attempt: 1,
            queue: job.queue.clone(),
        },
        recorded.input.clone(),
        tv.limits,
    );
    req.cancel = Some(held.cancel_token(&job.id, &job.lease_token));
    req.tenant = Arc::from(job.tenant.as_str());
    if tv.spec.deterministic {
        req.determinism = Some(Determinism::of_job(&recorded.id));
    }
    registry.sandbox().run(program, req).await
}

/// How the candidate's run ended, as the report compares it: an output
/// that breaks the task's output schema is a failure, as in a job.
async fn candidate(registry: &Registry, tv: &Arc<TaskVersion>, ending: &Ending) -> Ended {
    match ending {
        Ending::Done(output) => match check_output(registry, tv, output).await {
            Ok(()) => Ended::Completed(json_of(output)),
            Err(e) => failed(&e),
        },
        Ending::Failed(e) => failed(e),
        Ending::Snooze(ms) => Ended::Stopped(format!("snoozed for {ms} ms")),
        Ending::Wait(what) => Ended::Stopped(format!("waited for {what}")),
        Ending::Cancelled | Ending::Unavailable(_) => Ended::Stopped("did not run".into()),
    }
}

/// An output as JSON; text that is not JSON, as a string.
fn json_of(output: &str) -> serde_json::Value {
    serde_json::from_str(output).unwrap_or_else(|_| serde_json::Value::String(output.to_owned()))
}

fn failed(e: &JobError) -> Ended {
    Ended::Failed {
        kind: e.kind.as_str().to_owned(),
        code: e.code.clone(),
        message: e.message.clone(),
    }
}

/// How the recorded job ended.
fn ended_of(r: &RecordedRun) -> Ended {
    match (r.status, &r.output, &r.error) {
        (JobStatus::Completed, Some(out), _) => Ended::Completed(json_of(out)),
        (_, _, Some(e)) => failed(e),
        (status, _, _) => Ended::Stopped(format!("recorded as {}", status.as_str())),
    }
}

fn progress(kept: &BTreeMap<usize, Sample>, of: usize) -> ProgressRecord {
    let different = kept
        .values()
        .filter(|s| matches!(s, Sample::Ran(p) if !p.same))
        .count();
    ProgressRecord {
        percent: u8::try_from(kept.len() * 100 / of.max(1)).unwrap_or(100),
        note: format!("{} of {of} run, {different} different", kept.len()),
    }
}

fn report_of(plan: &Plan, tv: &TaskVersion, kept: BTreeMap<usize, Sample>) -> Report {
    let mut pairs = Vec::with_capacity(kept.len());
    let mut missing = Vec::new();
    for sample in kept.into_values() {
        match sample {
            Sample::Ran(p) => pairs.push(*p),
            Sample::Missing { job } => missing.push(job),
        }
    }
    Report::of(
        Subject {
            task: plan.task.clone(),
            version: plan.version,
            component: plan.component.clone(),
            requests_refused: tv.spec.network.is_some() || !tv.spec.secrets.is_empty(),
        },
        pairs,
        missing,
    )
}

/// What this attempt's runs cost, summed: its record and its tenant's
/// usage.
#[derive(Default)]
struct Spent {
    fuel: u64,
    peak: u64,
    wall: Duration,
}

impl Spent {
    fn add(&mut self, r: &AttemptReport) {
        self.fuel = self.fuel.saturating_add(r.fuel_used);
        self.peak = self.peak.max(r.peak_memory_bytes);
        self.wall += r.duration;
    }

    fn report(&self) -> AttemptReport {
        AttemptReport {
            ending: Ending::Done(String::new()),
            fuel_used: self.fuel,
            peak_memory_bytes: self.peak,
            duration: self.wall,
            log: Default::default(),
            progress: None,
            network: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_stops_at_its_tenants_budget_or_its_time() {
        let s = Duration::from_secs;
        for (spent, left, ran, over) in [
            // Nothing run yet: always one run, whatever is left.
            (0, Some(0), s(60), false),
            (0, None, s(0), false),
            // No budget: by time alone.
            (10, None, s(1), false),
            (10, None, CHUNK, true),
            // A budget: at what was left of it.
            (99, Some(100), s(1), false),
            (100, Some(100), s(1), true),
            (500, Some(100), s(1), true),
            (1, Some(100), CHUNK, true),
        ] {
            assert_eq!(
                chunk_is_over(spent, left, ran),
                over,
                "{spent} {left:?} {ran:?}"
            );
        }
    }

    #[test]
    fn kept_runs_read_back_and_progress_counts_the_different() {
        let pair = |same: bool| {
            Sample::Ran(Box::new(Pair::of(
                "j".into(),
                1,
                Side {
                    ended: &Ended::Completed(serde_json::json!(1)),
                    fuel: 1,
                },
                Side {
                    ended: &Ended::Completed(serde_json::json!(if same { 1 } else { 2 })),
                    fuel: 1,
                },
                &Redactor::default(),
            )))
        };
        let mut kept = BTreeMap::new();
        kept.insert(0, pair(true));
        kept.insert(1, pair(false));
        kept.insert(2, Sample::Missing { job: "gone".into() });
        for s in kept.values() {
            let text = serde_json::to_string(s).unwrap();
            assert_eq!(&serde_json::from_str::<Sample>(&text).unwrap(), s);
        }
        let p = progress(&kept, 4);
        assert_eq!(
            (p.percent, p.note.as_str()),
            (75, "3 of 4 run, 1 different")
        );
    }
}
