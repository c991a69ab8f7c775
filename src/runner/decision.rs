//! What becomes of a job after an attempt, as a pure function of the
//! attempt's end, the task's policy and the job (DESIGN §8, "an executor
//! you can test without a sandbox"): done, retried, snoozed, waiting,
//! cancelled, given back, handed to its fallback, moved to its workflow's
//! next stage, or failed for good. No I/O: the executor gathers what this
//! reads first (the output checked against the task's schema, the
//! workflow's stages) and carries out what it answers (a fallback pinned,
//! callbacks built, the end written).

use super::held::StopReason;
use crate::bounds::MAX_FALLBACK_DEPTH;
use crate::job::{ErrorKind, JobError};
use crate::registry::TaskVersion;
use crate::retry::{self, FailReason, RetryPolicy};
use crate::sandbox::Ending;
use crate::store::{
    Action, ClaimedJob, StepConfig, StepKind, StepRecord, StepStatus, StepWrite, TaskRef,
};
use crate::time::{rfc3339, Millis};
use crate::workflow::Plan;
use serde_json::json;

/// Longest snooze a guest may ask for: 30 days.
const MAX_SNOOZE_MS: u64 = 30 * 24 * 60 * 60 * 1000;
/// How long a job waits after no sandbox instance was free for it: the
/// pool is shared with runs outside the slots, and meeting it full again
/// at once would only spin.
const UNAVAILABLE_DELAY_MS: u64 = 1_000;
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

/// The task's policy for a job's attempts, as the decision reads it.
#[derive(Debug, Clone, Copy)]
pub struct Policy<'a> {
    /// How failed attempts are retried: a workflow step's own policy,
    /// else its task's.
    pub retry: &'a RetryPolicy,
    /// The host's snooze floor and cap.
    pub rules: &'a AttemptRules,
    /// The task a job of this one hands over to when it fails for good.
    pub fallback: Option<&'a str>,
    /// A workflow job's stages: where its attempts take it.
    pub plan: Option<&'a Plan>,
}

impl<'a> Policy<'a> {
    /// The policy of a job of `task`, at its workflow's stage if `plan`.
    pub fn of(task: &'a TaskVersion, plan: Option<&'a Plan>, rules: &'a AttemptRules) -> Self {
        Policy {
            retry: plan
                .and_then(|p| p.current().config.retry.as_ref())
                .unwrap_or(&task.retry),
            rules,
            fallback: task.spec.fallback.as_deref(),
            plan,
        }
    }

    fn step(&self) -> Option<&'a StepRecord> {
        self.plan.map(Plan::current)
    }
}

/// How an attempt ended, as the runner saw it.
#[derive(Debug, Clone, Copy)]
pub struct AttemptEnd<'a> {
    /// Its ending, a `Done` output already checked against the task's
    /// output schema.
    pub ending: &'a Ending,
    /// Why the runner stopped it, if it did.
    pub stop: Option<StopReason>,
    /// When it ended.
    pub at: Millis,
}

/// What becomes of the job, as data.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Write nothing: the lease is gone, and the job is another runner's.
    Nothing,
    /// The job moves as the store is told.
    Move(Move),
    /// The job failed for good and its task's fallback `task` takes over,
    /// once it is pinned (`fall_back`).
    Fallback { task: String, error: JobError },
}

/// Where the job goes, and the stage rows that change with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    pub action: Action,
    pub steps: Vec<StepWrite>,
    /// What the attempt itself did, where a workflow's stages made of it
    /// another move (a failed step's last attempt handing the job to its
    /// `on_error` chain still failed): its record says this.
    pub attempt: Option<Box<Action>>,
}

/// A fallback's task as the job pins it: its version now, and the
/// attempts it gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Pinned {
    pub task: TaskRef,
    pub max_attempts: u32,
}

/// Decides what becomes of `job` after an attempt that ended as `end`
/// says. `random` draws the retry's jitter, in [0, 1).
pub fn decide(
    end: &AttemptEnd<'_>,
    policy: &Policy<'_>,
    job: &ClaimedJob,
    random: impl FnOnce() -> f64,
) -> Decision {
    match choose(end, policy, job, random) {
        Chosen::Nothing => Decision::Nothing,
        Chosen::Fallback(task, error) => Decision::Fallback { task, error },
        Chosen::Act(action) => Decision::Move(moved(action, policy.plan, job)),
    }
}

/// Why a job fails before its attempt runs: its deadline has passed, or
/// its workflow stage's budget is spent.
pub fn unrunnable(job: &ClaimedJob, step: Option<&StepRecord>, now: Millis) -> Option<JobError> {
    if let Some(deadline) = job.deadline_at.filter(|d| *d <= now) {
        return Some(deadline_error(deadline));
    }
    step.and_then(|s| budget_spent(s, now))
}

/// A job that fails with `error` before it runs: its workflow's stages
/// say where that takes it; a job of one task fails, without its fallback
/// and without stage rows.
pub fn unrun(error: JobError, plan: Option<&Plan>, job: &ClaimedJob) -> Move {
    // As any end: a fallback's stage row settles with it.
    moved(Action::Fail { error }, plan, job)
}

/// The hand-over `decide` chose, to the fallback as `pinned`; `None`: it
/// cannot be loaded, and the job fails.
pub fn fall_back(job: &ClaimedJob, error: JobError, pinned: Option<Pinned>) -> Move {
    let Some(pinned) = pinned else {
        return moved(Action::Fail { error }, None, job);
    };
    let input: serde_json::Value =
        serde_json::from_str(&job.input).unwrap_or(serde_json::Value::Null);
    let input = json!({
        "input": input,
        "error": error.brief(),
    });
    let action = Action::Fallback {
        task: pinned.task,
        input: input.to_string(),
        max_attempts: pinned.max_attempts,
        error,
    };
    moved(action, None, job)
}

/// The store's action chosen, before the stages have their say.
enum Chosen {
    Nothing,
    Act(Action),
    Fallback(String, JobError),
}

fn choose(
    end: &AttemptEnd<'_>,
    policy: &Policy<'_>,
    job: &ClaimedJob,
    random: impl FnOnce() -> f64,
) -> Chosen {
    let now = end.at;
    let step = policy.step();
    let error = match snooze_rules(end.ending, job, policy.rules) {
        Ending::Done(output) => return Chosen::Act(Action::Complete { output }),
        Ending::Snooze(ms) => {
            return Chosen::Act(Action::Snooze {
                delay_ms: ms.min(MAX_SNOOZE_MS),
            })
        }
        Ending::Wait(waiting_for) => return Chosen::Act(Action::Wait { waiting_for }),
        Ending::Cancelled => {
            return match end.stop {
                Some(StopReason::Lost) => Chosen::Nothing,
                Some(StopReason::Shutdown) => Chosen::Act(Action::Release { delay_ms: 0 }),
                Some(StopReason::Cancel) | None => Chosen::Act(Action::Cancel),
            }
        }
        Ending::Unavailable(_) => {
            return Chosen::Act(Action::Release {
                delay_ms: UNAVAILABLE_DELAY_MS,
            })
        }
        Ending::Failed(e) => match job.deadline_at {
            // The timeout was the deadline's, not the task's.
            Some(d) if e.kind == ErrorKind::Timeout && now >= d => deadline_error(d),
            _ => match step.and_then(|s| budget_spent(s, now)) {
                Some(spent) if e.kind == ErrorKind::Timeout => spent,
                _ => e,
            },
        },
    };
    let retries = RetryPolicy {
        max_attempts: stage_max(job).max(1),
        ..policy.retry.clone()
    };
    let next_at = |delay_ms: u64| crate::time::after(now, delay_ms);
    match retries.decide(&error, job.attempt, random) {
        retry::Decision::RetryAfter(delay_ms) => match job.deadline_at {
            Some(d) if next_at(delay_ms) >= d => {
                fail_or_fallback(policy, job, deadline_error(d), FailReason::DeadlineExceeded)
            }
            // The step's budget would be spent before its next attempt.
            _ => match step.and_then(|s| budget_spent(s, next_at(delay_ms))) {
                Some(_) => Chosen::Act(Action::Fail { error }),
                None => Chosen::Act(Action::Retry { delay_ms, error }),
            },
        },
        retry::Decision::Fail(reason) => fail_or_fallback(policy, job, error, reason),
    }
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

/// A job that failed for good hands over to its task's fallback, if any.
fn fail_or_fallback(
    policy: &Policy<'_>,
    job: &ClaimedJob,
    error: JobError,
    reason: FailReason,
) -> Chosen {
    // A workflow's fallbacks are pinned in its stages (`workflow::plan`).
    if policy.plan.is_some() {
        return Chosen::Act(Action::Fail { error });
    }
    match (policy.fallback, reason) {
        (_, FailReason::DeadlineExceeded) => Chosen::Act(Action::Fail { error }),
        (Some(f), _) if job.fallback_depth < MAX_FALLBACK_DEPTH => {
            Chosen::Fallback(f.to_owned(), error)
        }
        _ => Chosen::Act(Action::Fail { error }),
    }
}

/// `action` with the stage rows that change with it: a workflow's stages
/// say where it takes the job; a job of one task keeps rows once a
/// fallback took over.
fn moved(action: Action, plan: Option<&Plan>, job: &ClaimedJob) -> Move {
    match plan {
        // The attempt's own record keeps what the attempt did.
        Some(plan) => {
            let own = action.clone();
            let (action, steps) = plan.settle(action, &job.input, job.attempt);
            Move {
                attempt: (action != own).then(|| Box::new(own)),
                action,
                steps,
            }
        }
        None => {
            let steps = fallback_stages(job, &action);
            Move {
                action,
                steps,
                attempt: None,
            }
        }
    }
}

/// The attempts the stage running may make: the job's, less those its
/// earlier stages made (none, should a row say the stage made more than
/// the job: the store's numbers are read, not trusted).
fn stage_max(job: &ClaimedJob) -> u32 {
    job.max_attempts
        .saturating_sub(job.attempts.saturating_sub(job.attempt))
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
    let cur = stage(seq, &job.task, stage_max(job));
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

/// When a stage's budget (its `timeout_ms` across attempts) ends.
pub(super) fn budget_end(step: &StepRecord) -> Option<Millis> {
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
            rfc3339(end)
        ),
    ))
}

fn deadline_error(deadline: Millis) -> JobError {
    JobError::new(
        ErrorKind::DeadlineExceeded,
        format!("the job's deadline ({}) has passed", rfc3339(deadline)),
    )
}

#[cfg(test)]
mod tests;
