//! The decision after an attempt, one row per case: each branch of
//! `decide`, then the hand-over to a pinned fallback and the failures that
//! come before an attempt runs.

use super::*;
use crate::retry::{Backoff, BackoffKind};
use crate::workflow::plan::tests::row as plan_row;

const NOW: Millis = 1_700_000_000_000;

/// A row's world: the defaults, as its `given` changes them.
struct Given {
    job: ClaimedJob,
    retry: RetryPolicy,
    rules: AttemptRules,
    fallback: Option<&'static str>,
    /// A workflow job's stages.
    stages: Option<Vec<StepRecord>>,
}

impl Default for Given {
    fn default() -> Self {
        Given {
            job: ClaimedJob {
                id: "job-1".into(),
                tenant: "acme".into(),
                task: task_ref("work"),
                input: r#"{"in":0}"#.into(),
                queue: "default".into(),
                attempt: 1,
                attempts: 1,
                max_attempts: 3,
                deadline_at: None,
                fallback_depth: 0,
                snoozes: 0,
                started_at: NOW - 100,
                lease_token: "lease".into(),
                fuel: None,
                own_task: None,
                begun: true,
                due_at: NOW - 200,
                callback_depth: 0,
                fair_key: None,
                traceparent: None,
                weight: 1,
            },
            // Fixed and without jitter: a retry waits 1000 ms.
            retry: RetryPolicy {
                max_attempts: 3,
                backoff: Backoff {
                    kind: BackoffKind::Fixed,
                    delay_ms: 1000,
                    factor: None,
                    max_delay_ms: None,
                    jitter: Some(0.0),
                },
                non_retryable: Vec::new(),
            },
            rules: AttemptRules {
                snooze_floor_ms: 1000,
                max_snoozes: 3,
            },
            fallback: None,
            stages: None,
        }
    }
}

fn task_ref(name: &str) -> TaskRef {
    TaskRef {
        name: name.into(),
        version: 1,
        digest: format!("sha256:{name}"),
    }
}

/// Stage `seq` of step `name` (task `t-{name}`), begun a second ago if
/// it is active.
fn stage(seq: u32, kind: StepKind, name: &str, status: StepStatus) -> StepRecord {
    StepRecord {
        started_at: (status == StepStatus::Active).then_some(NOW - 1000),
        ..plan_row(seq, kind, name, status)
    }
}

/// Steps `a` (active) and `b`.
fn two_steps() -> Vec<StepRecord> {
    vec![
        stage(0, StepKind::Step, "a", StepStatus::Active),
        stage(1, StepKind::Step, "b", StepStatus::Pending),
    ]
}

fn failed(kind: ErrorKind, code: &str) -> Ending {
    Ending::Failed(JobError::with_code(kind, code, "it broke"))
}

fn boom() -> Ending {
    failed(ErrorKind::TaskFailed, "boom")
}

fn timeout() -> Ending {
    Ending::Failed(JobError::new(ErrorKind::Timeout, "too slow"))
}

fn last_attempt(g: &mut Given) {
    g.job.attempt = 3;
    g.job.attempts = 3;
}

/// A decision in a line: what the job does, then each stage row it
/// writes as `seq:status`.
fn brief(d: &Decision) -> String {
    let Move { action, steps, .. } = match d {
        Decision::Nothing => return "nothing".into(),
        Decision::Fallback { task, error } => {
            return format!("fallback to {task} after {}", error.code)
        }
        Decision::Move(m) => m,
    };
    let what = match action {
        Action::Complete { output } => format!("complete {output}"),
        Action::Retry { delay_ms, error } => format!("retry in {delay_ms} after {}", error.code),
        Action::Fail { error } => format!("fail {}", error.code),
        Action::Snooze { delay_ms } => format!("snooze {delay_ms}"),
        Action::Wait { waiting_for } => format!("wait {waiting_for}"),
        Action::Cancel => "cancel".into(),
        Action::Fallback { task, .. } => format!("fallback to {}", task.name),
        Action::Release { delay_ms } => format!("release in {delay_ms}"),
        Action::Advance { task, input, .. } => format!("advance to {} on {input}", task.name),
        Action::Conclude { output, error } => format!(
            "conclude {output} {}",
            error.as_ref().map_or("cancelled", |e| e.code.as_str())
        ),
    };
    if steps.is_empty() {
        return what;
    }
    let rows: Vec<String> = steps
        .iter()
        .map(|w| format!("{}:{}", w.seq, w.status.as_str()))
        .collect();
    format!("{what}; {}", rows.join(" "))
}

struct Row {
    case: &'static str,
    ending: Ending,
    stop: Option<StopReason>,
    given: fn(&mut Given),
    want: &'static str,
}

fn row(case: &'static str, ending: Ending, given: fn(&mut Given), want: &'static str) -> Row {
    Row {
        case,
        ending,
        stop: None,
        given,
        want,
    }
}

fn stopped(case: &'static str, stop: StopReason, given: fn(&mut Given), want: &'static str) -> Row {
    Row {
        case,
        ending: Ending::Cancelled,
        stop: Some(stop),
        given,
        want,
    }
}

#[test]
fn each_ending_becomes_its_decision() {
    let done = || Ending::Done(r#"{"x":1}"#.into());
    let rows = [
        row("success", done(), |_| {}, r#"complete {"x":1}"#),
        row(
            "guest failure, attempts left",
            boom(),
            |_| {},
            "retry in 1000 after boom",
        ),
        row(
            "guest failure, none left",
            boom(),
            last_attempt,
            "fail boom",
        ),
        row(
            "guest failure the guest says not to retry",
            Ending::Failed(JobError {
                retryable: Some(false),
                ..JobError::with_code(ErrorKind::TaskFailed, "boom", "it broke")
            }),
            |_| {},
            "fail boom",
        ),
        row(
            "guest failure of a code the task never retries",
            boom(),
            |g| g.retry.non_retryable = vec!["boom".into()],
            "fail boom",
        ),
        row(
            "a trap fails at once",
            failed(ErrorKind::Trap, "unreachable"),
            |_| {},
            "fail unreachable",
        ),
        row(
            "attempts of earlier stages count against the job's",
            boom(),
            |g| {
                g.job.attempts = 3;
                g.job.max_attempts = 3;
            },
            "fail boom",
        ),
        row(
            "timeout, attempts left",
            timeout(),
            |_| {},
            "retry in 1000 after timeout",
        ),
        row(
            "timeout at the deadline: the deadline's, and no fallback",
            timeout(),
            |g| {
                g.job.deadline_at = Some(NOW);
                g.fallback = Some("rescue");
            },
            "fail deadline_exceeded",
        ),
        row(
            "a retry that would start past the deadline fails now",
            boom(),
            |g| {
                g.job.deadline_at = Some(NOW + 500);
                g.fallback = Some("rescue");
            },
            "fail deadline_exceeded",
        ),
        row(
            "snooze under the floor",
            Ending::Snooze(10),
            |_| {},
            "snooze 1000",
        ),
        row(
            "snooze over the floor",
            Ending::Snooze(5000),
            |_| {},
            "snooze 5000",
        ),
        row(
            "snooze past the longest",
            Ending::Snooze(u64::MAX),
            |_| {},
            "snooze 2592000000",
        ),
        row(
            "snooze under max_snoozes",
            Ending::Snooze(5000),
            |g| g.job.snoozes = 2,
            "snooze 5000",
        ),
        row(
            "snooze over max_snoozes",
            Ending::Snooze(5000),
            |g| g.job.snoozes = 3,
            "fail too_many_snoozes",
        ),
        row(
            "snooze over max_snoozes, fallback present",
            Ending::Snooze(5000),
            |g| {
                g.job.snoozes = 3;
                g.fallback = Some("rescue");
            },
            "fallback to rescue after too_many_snoozes",
        ),
        row(
            "wait",
            Ending::Wait(r#"{"for":"approval"}"#.into()),
            |_| {},
            r#"wait {"for":"approval"}"#,
        ),
        stopped("pending cancel", StopReason::Cancel, |_| {}, "cancel"),
        row(
            "cancelled with no reason held",
            Ending::Cancelled,
            |_| {},
            "cancel",
        ),
        stopped("lease lost", StopReason::Lost, |_| {}, "nothing"),
        stopped(
            "runner stopping",
            StopReason::Shutdown,
            |_| {},
            "release in 0",
        ),
        row(
            "no sandbox slot",
            Ending::Unavailable("full".into()),
            |_| {},
            "release in 1000",
        ),
        row(
            "fallback present, attempts left: retried first",
            boom(),
            |g| g.fallback = Some("rescue"),
            "retry in 1000 after boom",
        ),
        row(
            "fallback present, none left",
            boom(),
            |g| {
                last_attempt(g);
                g.fallback = Some("rescue");
            },
            "fallback to rescue after boom",
        ),
        row(
            "fallback present, the chain at its deepest",
            boom(),
            |g| {
                last_attempt(g);
                g.fallback = Some("rescue");
                g.job.own_task = Some("first".into());
                g.job.fallback_depth = MAX_FALLBACK_DEPTH;
            },
            "fail boom; 8:failed",
        ),
        row(
            "a fallback's attempt: its stage row follows",
            done(),
            |g| {
                g.job.own_task = Some("first".into());
                g.job.fallback_depth = 1;
                g.job.attempts = 4;
                g.job.max_attempts = 6;
            },
            r#"complete {"x":1}; 1:completed"#,
        ),
        row(
            "a fallback's attempt retried: its stage stays active",
            boom(),
            |g| {
                g.job.own_task = Some("first".into());
                g.job.fallback_depth = 1;
                g.job.attempts = 4;
                g.job.max_attempts = 6;
            },
            "retry in 1000 after boom; 1:active",
        ),
        row(
            "workflow step done: the next step",
            done(),
            |g| g.stages = Some(two_steps()),
            r#"advance to t-b on {"in":0,"x":1}; 0:completed 1:active"#,
        ),
        row(
            "workflow's last step done: the job completes",
            done(),
            |g| g.stages = Some(vec![stage(0, StepKind::Step, "a", StepStatus::Active)]),
            r#"complete {"in":0,"x":1}; 0:completed"#,
        ),
        row(
            "workflow step failed for good: its own fallback next",
            boom(),
            |g| {
                last_attempt(g);
                g.stages = Some(vec![
                    stage(0, StepKind::Step, "a", StepStatus::Active),
                    stage(1, StepKind::Fallback, "rescue", StepStatus::Pending),
                    stage(2, StepKind::Step, "b", StepStatus::Pending),
                ]);
            },
            r#"advance to t-rescue on {"input":{"in":0},"error":{"kind":"task_failed","code":"boom","message":"it broke"}}; 0:failed 1:active"#,
        ),
        row(
            "workflow step failed for good: the stages decide, not the task's fallback",
            boom(),
            |g| {
                last_attempt(g);
                g.fallback = Some("rescue");
                g.stages = Some(two_steps());
            },
            "fail boom; 0:failed 1:skipped",
        ),
        row(
            "workflow step failed, attempts left: its count moves on",
            boom(),
            |g| g.stages = Some(two_steps()),
            "retry in 1000 after boom; 0:active",
        ),
        row(
            "workflow step timed out with its budget spent",
            timeout(),
            |g| {
                let mut stages = two_steps();
                stages[0].config.budget_ms = Some(500);
                g.stages = Some(stages);
            },
            "fail step_budget; 0:failed 1:skipped",
        ),
        row(
            "workflow step's retry would outlast its budget",
            boom(),
            |g| {
                let mut stages = two_steps();
                stages[0].config.budget_ms = Some(1500);
                g.stages = Some(stages);
            },
            "fail boom; 0:failed 1:skipped",
        ),
        row(
            "workflow step snoozes: its count moves on",
            Ending::Snooze(5000),
            |g| g.stages = Some(two_steps()),
            "snooze 5000; 0:active",
        ),
        stopped(
            "workflow step cancelled, no on_cancel chain",
            StopReason::Cancel,
            |g| g.stages = Some(two_steps()),
            "cancel; 0:cancelled 1:skipped",
        ),
        stopped(
            "workflow step given back: its count undone",
            StopReason::Shutdown,
            |g| g.stages = Some(two_steps()),
            "release in 0; 0:active",
        ),
    ];
    let mut wrong = Vec::new();
    for r in &rows {
        let mut g = Given::default();
        (r.given)(&mut g);
        let plan = g.stages.map(|s| Plan::of(s).expect("a stage is active"));
        let policy = Policy {
            retry: &g.retry,
            rules: &g.rules,
            fallback: g.fallback,
            plan: plan.as_ref(),
        };
        let end = AttemptEnd {
            ending: &r.ending,
            stop: r.stop,
            at: NOW,
        };
        let got = brief(&decide(&end, &policy, &g.job, || 0.5));
        if got != r.want {
            wrong.push(format!("{}:\n   want {}\n    got {got}", r.case, r.want));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn a_fallback_takes_over_as_pinned() {
    let job = Given::default().job;
    let error = JobError::with_code(ErrorKind::TaskFailed, "boom", "it broke");
    let pinned = Pinned {
        task: task_ref("rescue"),
        max_attempts: 2,
    };
    let moved = fall_back(&job, error.clone(), Some(pinned));
    assert_eq!(
        brief(&Decision::Move(moved.clone())),
        "fallback to rescue; 0:failed 1:active"
    );
    let Action::Fallback {
        input,
        max_attempts,
        ..
    } = &moved.action
    else {
        panic!("{moved:?}");
    };
    assert_eq!(*max_attempts, 2);
    assert_eq!(
        input,
        r#"{"input":{"in":0},"error":{"kind":"task_failed","code":"boom","message":"it broke"}}"#
    );
    // One that cannot be loaded: the job fails where it is.
    let moved = fall_back(&job, error, None);
    assert_eq!(brief(&Decision::Move(moved)), "fail boom");
}

#[test]
fn a_job_past_its_deadline_or_budget_never_runs() {
    let mut job = Given::default().job;
    assert_eq!(unrunnable(&job, None, NOW), None);
    job.deadline_at = Some(NOW);
    let error = unrunnable(&job, None, NOW).expect("past its deadline");
    assert_eq!(error.code, "deadline_exceeded");
    assert_eq!(
        brief(&Decision::Move(unrun(error, None, &job))),
        "fail deadline_exceeded"
    );
    // A one-task job on its fallback: the fallback's stage row ends too.
    job.own_task = Some("first".into());
    job.fallback_depth = 1;
    let error = unrunnable(&job, None, NOW).expect("past its deadline");
    assert_eq!(
        brief(&Decision::Move(unrun(error, None, &job))),
        "fail deadline_exceeded; 1:failed"
    );

    let job = Given::default().job;
    let mut stages = two_steps();
    stages[0].config.budget_ms = Some(1000);
    let plan = Plan::of(stages).expect("a stage is active");
    let error = unrunnable(&job, Some(plan.current()), NOW).expect("its budget spent");
    assert_eq!(error.code, "step_budget");
    assert_eq!(
        brief(&Decision::Move(unrun(error, Some(&plan), &job))),
        "fail step_budget; 0:failed 1:skipped"
    );
}
