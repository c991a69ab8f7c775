//! The queue's rules for moving a job, computed once, backend-neutral, from
//! the state machine in `job.rs`: each move is data (the statuses it may
//! leave, where it goes, what else it changes) that a backend only binds
//! to its own SQL, guarding its update with those statuses. What a snooze
//! does to the attempt count, how a fallback takes over, what a pending
//! cancellation turns an ending into, and which task a claim runs are
//! decided here and nowhere else.

use crate::job::{JobError, JobStatus, Transition};
use crate::records::{Action, AttemptRecord, ClaimedJob, TaskRef};
use crate::time::Millis;

/// One change a move makes besides the job's status, borrowing its values
/// from the ending it was made from.
#[derive(Debug, Clone, PartialEq)]
pub enum Change<'a> {
    /// The job's output (JSON text).
    Output(&'a str),
    /// The error of the attempt that ended.
    Error(&'a JobError),
    /// Due again this many milliseconds after the write, by the store's
    /// clock (0: at once).
    RunAfter(u64),
    /// What a waiting job waits for (JSON text from the guest).
    WaitingFor(&'a str),
    /// The attempt does not use up one of the job's (a snooze, a wait):
    /// `max_attempts` grows by one.
    SpareAttempt,
    /// The attempt did not happen (a release): `attempts` shrinks by one.
    UncountAttempt,
    /// One more snooze on the job's count.
    Snoozed,
    /// The job's next stage takes over: its fallback task, on this input,
    /// with this many attempts of its own after those already made.
    Fallback {
        task: &'a TaskRef,
        input: &'a str,
        max_attempts: u32,
    },
    /// The job's cancellation was answered (a workflow's `on_cancel` chain
    /// takes over): the request is cleared.
    ClearCancel,
    /// The attempt that ended the job, with its log's JSON, kept on the
    /// job's row (`Move::with_attempt`).
    Attempt {
        record: &'a AttemptRecord,
        log: Option<&'a str>,
    },
}

/// A move of one job from one of `from` to `to`.
#[derive(Debug, Clone, PartialEq)]
pub struct Move<'a> {
    pub transition: Transition,
    /// The statuses the job may be in; the update is guarded by them.
    pub from: &'static [JobStatus],
    pub to: JobStatus,
    /// Whether a cancellation asked for while the job ran turns this move
    /// into `cancelled` (the job does not go back to the queue, wait or
    /// fail: it was asked to stop, and now it has).
    pub cancel_wins: bool,
    pub changes: Vec<Change<'a>>,
}

impl<'a> Move<'a> {
    /// A move by `t` from every status the transition table allows it
    /// from, or `None` when it allows none.
    fn new(t: Transition, from: &'static [JobStatus], changes: Vec<Change<'a>>) -> Move<'a> {
        let mut to = None;
        for s in from {
            let next = s.after(t);
            assert!(
                next.is_some() && (to.is_none() || to == next),
                "{t:?} from {s} is not in the transition table"
            );
            to = next;
        }
        Move {
            transition: t,
            from,
            to: to.expect("a move leaves at least one status"),
            cancel_wins: false,
            changes,
        }
    }

    /// How an attempt's end moves its running job.
    pub fn of_ending(action: &'a Action) -> Move<'a> {
        use JobStatus::Running;
        let ending = |t, changes| Move {
            cancel_wins: true,
            ..Move::new(t, &[Running], changes)
        };
        match action {
            // A completion stands even if a cancellation was asked for: the
            // work is done.
            Action::Complete { output } => Move::new(
                Transition::Complete,
                &[Running],
                vec![Change::Output(output)],
            ),
            Action::Retry { delay_ms, error } => ending(
                Transition::Retry,
                vec![Change::RunAfter(*delay_ms), Change::Error(error)],
            ),
            Action::Fail { error } => ending(Transition::Fail, vec![Change::Error(error)]),
            Action::Snooze { delay_ms } => ending(
                Transition::Snooze,
                vec![
                    Change::RunAfter(*delay_ms),
                    Change::SpareAttempt,
                    Change::Snoozed,
                ],
            ),
            Action::Wait { waiting_for } => ending(
                Transition::Wait,
                vec![Change::WaitingFor(waiting_for), Change::SpareAttempt],
            ),
            Action::Cancel => Move::new(Transition::Cancel, &[Running], Vec::new()),
            Action::Fallback {
                task,
                input,
                max_attempts,
                error,
            } => ending(
                Transition::Retry,
                vec![
                    Change::RunAfter(0),
                    Change::Error(error),
                    Change::Fallback {
                        task,
                        input,
                        max_attempts: *max_attempts,
                    },
                ],
            ),
            // Given back uncounted: a queued job again, as a retry leaves it.
            Action::Release { delay_ms } => ending(
                Transition::Retry,
                vec![Change::RunAfter(*delay_ms), Change::UncountAttempt],
            ),
            // A workflow's next stage: queued again at once, on its task.
            // A pending cancel stops the job here unless the workflow has an
            // `on_cancel` chain, which the next attempt's stop hands to.
            Action::Advance {
                task,
                input,
                max_attempts,
                error,
                cancelled,
                cancel_wins,
            } => {
                let mut changes = vec![Change::RunAfter(0)];
                changes.extend(error.as_ref().map(Change::Error));
                changes.push(Change::Fallback {
                    task,
                    input,
                    max_attempts: *max_attempts,
                });
                if *cancelled {
                    changes.push(Change::ClearCancel);
                }
                Move {
                    cancel_wins: *cancel_wins && !*cancelled,
                    ..Move::new(Transition::Retry, &[Running], changes)
                }
            }
            Action::Conclude { output, error } => match error {
                Some(e) => Move::new(
                    Transition::Fail,
                    &[Running],
                    vec![Change::Output(output), Change::Error(e)],
                ),
                None => Move::new(Transition::Cancel, &[Running], vec![Change::Output(output)]),
            },
        }
    }

    /// A cancel by the API of a job that is not running (a running one is
    /// asked to stop instead, and its ending becomes the cancel).
    pub fn cancel() -> Move<'static> {
        Move::new(
            Transition::Cancel,
            &[JobStatus::Queued, JobStatus::Waiting],
            Vec::new(),
        )
    }

    /// A waiting job queued again, due now.
    pub fn resume() -> Move<'static> {
        Move::new(
            Transition::Resume,
            &[JobStatus::Waiting],
            vec![Change::RunAfter(0)],
        )
    }

    /// A queued job past its `expire_after_ms`, failed without running.
    pub fn expire() -> Move<'static> {
        Move::new(Transition::Expire, &[JobStatus::Queued], Vec::new())
    }

    /// A failed job queued again, due now, for a new series of attempts
    /// (its error, output and fallback cleared).
    pub fn redrive() -> Move<'static> {
        Move::new(
            Transition::Redrive,
            &[JobStatus::Failed],
            vec![Change::RunAfter(0)],
        )
    }

    /// Whether the attempt that made this move is kept on the job's row
    /// rather than in a row of `attempts` of its own: it ends the job, so
    /// no later attempt's end writes over it (a redrive, the one way back,
    /// first moves it to `attempts`). A job's life then writes no attempt
    /// row unless an attempt of it leaves it to run again.
    pub fn keeps_attempt(&self) -> bool {
        self.to.is_terminal()
    }

    /// This move, with its attempt kept on the job's row where
    /// `keeps_attempt` says so.
    pub fn with_attempt(mut self, record: &'a AttemptRecord, log: Option<&'a str>) -> Move<'a> {
        if self.keeps_attempt() {
            self.changes.push(Change::Attempt { record, log });
        }
        self
    }

    /// The status the job ends in, given whether its cancellation was
    /// asked for.
    pub fn lands(&self, cancel_requested: bool) -> JobStatus {
        if self.cancel_wins && cancel_requested {
            JobStatus::Cancelled
        } else {
            self.to
        }
    }

    /// Whether the job is due again at once after this move (a backend
    /// may keep that in an index).
    pub fn due_at_once(&self) -> bool {
        self.to == JobStatus::Queued
            && !self
                .changes
                .iter()
                .any(|c| matches!(c, Change::RunAfter(ms) if *ms > 0))
    }
}

/// What a backend reads of a job it has just claimed: the columns of its
/// stage, from which `claimed` decides what the attempt runs.
#[derive(Debug, Clone)]
pub struct ClaimedRow {
    pub id: String,
    pub tenant: String,
    /// The job's own task and input.
    pub task: TaskRef,
    pub input: String,
    /// The fallback that took over, with its input, if one did.
    pub fallback: Option<(TaskRef, String)>,
    pub queue: String,
    /// Attempts of the job in all, this one included.
    pub attempts: u32,
    /// Attempts made before the stage running now began.
    pub stage_offset: u32,
    pub max_attempts: u32,
    pub deadline_at: Option<Millis>,
    pub fallback_depth: u32,
    pub snoozes: u32,
    pub started_at: Millis,
    pub lease_token: String,
    /// Its runner was about to start its guest (`ClaimedJob::begun`).
    pub begun: bool,
    /// When the job was due.
    pub due_at: Millis,
    pub callback_depth: u32,
    /// Its fairness key (its own, or else its concurrency key).
    pub fair_key: Option<String>,
    /// The trace it continues, if not its own (`NewJob::traceparent`).
    pub traceparent: Option<String>,
}

impl From<ClaimedRow> for ClaimedJob {
    /// The attempt runs the stage in charge: the fallback once one took
    /// over, else the job's own task; its number counts from that stage's
    /// start.
    fn from(r: ClaimedRow) -> ClaimedJob {
        let (own_task, (task, input)) = match r.fallback {
            Some(f) => (Some(r.task.name), f),
            None => (None, (r.task, r.input)),
        };
        ClaimedJob {
            id: r.id,
            tenant: r.tenant,
            task,
            input,
            queue: r.queue,
            attempt: r.attempts.saturating_sub(r.stage_offset),
            attempts: r.attempts,
            max_attempts: r.max_attempts,
            deadline_at: r.deadline_at,
            fallback_depth: r.fallback_depth,
            snoozes: r.snoozes,
            started_at: r.started_at,
            lease_token: r.lease_token,
            fuel: None,
            own_task,
            begun: r.begun,
            due_at: r.due_at,
            callback_depth: r.callback_depth,
            fair_key: r.fair_key,
            traceparent: r.traceparent,
            weight: 1,
        }
    }
}

/// A fresh random token: a claim's lease token, which fences the writes
/// of one claim of a job against any other claim of it (and a name no
/// other process has).
pub fn random_token() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("the system's random source failed");
    hex::encode(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::ErrorKind;

    fn every_ending() -> Vec<Action> {
        let error = JobError::new(ErrorKind::Timeout, "slow");
        vec![
            Action::Complete { output: "1".into() },
            Action::Retry {
                delay_ms: 5,
                error: error.clone(),
            },
            Action::Fail {
                error: error.clone(),
            },
            Action::Snooze { delay_ms: 0 },
            Action::Wait {
                waiting_for: "{}".into(),
            },
            Action::Cancel,
            Action::Fallback {
                task: TaskRef {
                    name: "f".into(),
                    version: 1,
                    digest: "d".into(),
                },
                input: "{}".into(),
                max_attempts: 2,
                error,
            },
            Action::Release { delay_ms: 0 },
            Action::Advance {
                task: TaskRef {
                    name: "next".into(),
                    version: 1,
                    digest: "d".into(),
                },
                input: "{}".into(),
                max_attempts: 3,
                error: None,
                cancelled: false,
                cancel_wins: true,
            },
            Action::Conclude {
                output: "{}".into(),
                error: None,
            },
        ]
    }

    /// A workflow's next stage: a pending cancel ends the job there unless
    /// an `on_cancel` chain is to answer it; the handover to that chain
    /// clears the request; a chain's end stands whatever is pending.
    #[test]
    fn a_debounce_ends_the_job_it_replaces_as_a_cancel_does() {
        let (to, from) = crate::debounce::Replace::statuses();
        assert_eq!(to, Move::cancel().to);
        assert!(Move::cancel().from.contains(&from));
    }

    #[test]
    fn a_workflows_moves_answer_a_pending_cancellation_as_their_chains_say() {
        let task = TaskRef {
            name: "next".into(),
            version: 1,
            digest: "d".into(),
        };
        let advance = |cancelled, cancel_wins| Action::Advance {
            task: task.clone(),
            input: "{}".into(),
            max_attempts: 1,
            error: None,
            cancelled,
            cancel_wins,
        };
        let a = advance(false, false);
        assert_eq!(Move::of_ending(&a).lands(true), JobStatus::Queued);
        let a = advance(true, false);
        let m = Move::of_ending(&a);
        assert_eq!(m.lands(true), JobStatus::Queued);
        assert!(m.changes.contains(&Change::ClearCancel));
        let failed = Action::Conclude {
            output: "{}".into(),
            error: Some(JobError::new(ErrorKind::TaskFailed, "x")),
        };
        assert_eq!(Move::of_ending(&failed).lands(true), JobStatus::Failed);
    }

    #[test]
    fn every_ending_is_a_move_of_the_table_from_running() {
        for a in every_ending() {
            let m = Move::of_ending(&a);
            assert_eq!(m.from, [JobStatus::Running], "{a:?}");
            assert_eq!(JobStatus::Running.after(m.transition), Some(m.to), "{a:?}");
        }
    }

    /// The attempt that ends the job rides on the end's write of its row;
    /// one after which the job runs again is a row of its own, so that
    /// the next attempt's end does not write over it.
    #[test]
    fn only_an_attempt_that_ends_the_job_is_kept_on_its_row() {
        let record = AttemptRecord {
            attempt: 1,
            task: TaskRef {
                name: "t".into(),
                version: 1,
                digest: "d".into(),
            },
            started_at: 0,
            finished_at: 1,
            outcome: "x".into(),
            error: None,
            fuel_used: 0,
            peak_memory_bytes: 0,
            log: None,
            network: None,
        };
        for a in every_ending() {
            let ends = matches!(
                a,
                Action::Complete { .. }
                    | Action::Fail { .. }
                    | Action::Cancel
                    | Action::Conclude { .. }
            );
            let m = Move::of_ending(&a).with_attempt(&record, None);
            assert_eq!(m.keeps_attempt(), ends, "{a:?}");
            let kept = m
                .changes
                .iter()
                .any(|c| matches!(c, Change::Attempt { .. }));
            assert_eq!(kept, ends, "{a:?}");
        }
    }

    /// Asked to stop, a job that would go on (queued again, waiting,
    /// failed) is cancelled instead; a completion and a cancel stand.
    #[test]
    fn a_pending_cancellation_turns_every_ending_but_a_completion() {
        for a in every_ending() {
            let m = Move::of_ending(&a);
            let want = match a {
                Action::Complete { .. } => JobStatus::Completed,
                _ => JobStatus::Cancelled,
            };
            // (The workflow cases that go on are the test below's.)
            assert_eq!(m.lands(true), want, "{a:?}");
            assert_eq!(m.lands(false), m.to, "{a:?}");
        }
    }

    #[test]
    fn snoozes_and_waits_spare_the_attempt_and_releases_uncount_it() {
        let spares = |a: &Action| Move::of_ending(a).changes.contains(&Change::SpareAttempt);
        let all = every_ending();
        let sparing: Vec<_> = all.iter().filter(|a| spares(a)).collect();
        assert_eq!(sparing.len(), 2);
        assert!(sparing
            .iter()
            .all(|a| matches!(a, Action::Snooze { .. } | Action::Wait { .. })));
        let release = Move::of_ending(&Action::Release { delay_ms: 0 });
        assert!(release.changes.contains(&Change::UncountAttempt));
        assert!(release.due_at_once());
        assert!(!Move::of_ending(&Action::Release { delay_ms: 1 }).due_at_once());
    }

    #[test]
    fn the_api_cancels_and_resumes_by_the_table() {
        let c = Move::cancel();
        assert_eq!(c.to, JobStatus::Cancelled);
        assert!(c
            .from
            .iter()
            .all(|s| s.after(Transition::Cancel) == Some(c.to)));
        let r = Move::resume();
        assert_eq!(
            (r.from, r.to),
            ([JobStatus::Waiting].as_slice(), JobStatus::Queued)
        );
        let d = Move::redrive();
        assert_eq!(
            (d.from, d.to),
            ([JobStatus::Failed].as_slice(), JobStatus::Queued)
        );
        // Nothing else leaves a job's end.
        for s in [JobStatus::Completed, JobStatus::Cancelled] {
            assert_eq!(s.after(Transition::Redrive), None);
        }
    }

    #[test]
    fn a_claim_runs_the_stage_in_charge() {
        let own = TaskRef {
            name: "own".into(),
            version: 1,
            digest: "a".into(),
        };
        let fb = TaskRef {
            name: "fb".into(),
            version: 2,
            digest: "b".into(),
        };
        let row = ClaimedRow {
            id: "j".into(),
            tenant: "t".into(),
            task: own.clone(),
            input: "in".into(),
            fallback: None,
            queue: "default".into(),
            attempts: 4,
            stage_offset: 0,
            max_attempts: 5,
            deadline_at: None,
            fallback_depth: 0,
            snoozes: 0,
            started_at: 1,
            lease_token: "l".into(),
            begun: true,
            due_at: 0,
            callback_depth: 0,
            fair_key: None,
            traceparent: None,
        };
        let c = ClaimedJob::from(row.clone());
        assert_eq!((c.task, c.input.as_str(), c.attempt), (own, "in", 4));
        let c = ClaimedJob::from(ClaimedRow {
            fallback: Some((fb.clone(), "fin".into())),
            stage_offset: 3,
            fallback_depth: 1,
            ..row
        });
        assert_eq!((c.task, c.input.as_str(), c.attempt), (fb, "fin", 1));
    }
}
