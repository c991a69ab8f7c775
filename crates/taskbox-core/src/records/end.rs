//! The end of an attempt: what to do with the job, what it cost, its callbacks, and what the end or a cancel answered.

use super::*;

/// What to do with a job once its attempt is over.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Complete {
        output: String,
    },
    /// Run again after the backoff.
    Retry {
        delay_ms: u64,
        error: JobError,
    },
    /// Fail for good.
    Fail {
        error: JobError,
    },
    /// Run again after the delay, without using up an attempt.
    Snooze {
        delay_ms: u64,
    },
    Wait {
        waiting_for: String,
    },
    /// The cancellation asked for took effect.
    Cancel,
    /// Failed for good; the task's fallback runs next, on this input.
    Fallback {
        task: TaskRef,
        input: String,
        max_attempts: u32,
        error: JobError,
    },
    /// Give the job back without counting the attempt: the runner is
    /// stopping (no delay), or had no sandbox for it (a delay, so that a
    /// full pool is not met again at once).
    Release {
        delay_ms: u64,
    },
    /// A workflow's stage is over and the next one takes over at once, on
    /// this input, with this many attempts of its own: the next step, a
    /// step's fallback, or the first of its `on_error` (`error`: the
    /// failure that set it off) or `on_cancel` (`cancelled`) chain.
    Advance {
        task: TaskRef,
        input: String,
        max_attempts: u32,
        error: Option<JobError>,
        /// This stage is the answer to the job's cancellation (its
        /// `on_cancel` chain): the request is cleared.
        cancelled: bool,
        /// A cancellation asked for during the attempt ends the job here
        /// (it has no `on_cancel` chain to run).
        cancel_wins: bool,
    },
    /// A workflow's `on_error` chain (`error`: the failure the job ends
    /// with) or `on_cancel` chain (`None`) is over: the job ends failed or
    /// cancelled, its output the final context.
    Conclude {
        output: String,
        error: Option<JobError>,
    },
}

/// One finished attempt to write, fenced by its lease token.
#[derive(Debug, Clone)]
pub struct Finalize {
    pub id: String,
    /// The job's tenant, as its claim said.
    pub tenant: String,
    pub lease_token: String,
    pub action: Action,
    /// `None` for `Release`: an attempt that did not happen.
    pub attempt: Option<AttemptRecord>,
    /// What the attempt cost its tenant; charged even when the write is
    /// fenced out (the guest ran all the same).
    pub usage: Option<Usage>,
    /// Jobs to enqueue with the end, as the job lands (its task's
    /// `on_success` and `on_fail`).
    pub callbacks: Option<Box<Callbacks>>,
    /// What the end's events name.
    pub names: JobNames,
    /// A workflow job's stages the end changes, written with it.
    pub steps: Vec<crate::records::StepWrite>,
    /// What becomes of the job's unfinished children if the end ends it
    /// (`None`: they go on).
    pub close_children: Option<crate::parent_close::ParentClose>,
}

impl Finalize {
    /// Gives a claimed job back without an attempt (uncounted), to be
    /// claimed again after `delay_ms`.
    pub fn release(job: &ClaimedJob, delay_ms: u64) -> Finalize {
        Finalize {
            id: job.id.clone(),
            tenant: job.tenant.clone(),
            lease_token: job.lease_token.clone(),
            action: Action::Release { delay_ms },
            attempt: None,
            usage: None,
            callbacks: None,
            names: job.names(),
            steps: Vec::new(),
            close_children: None,
        }
    }
}

/// A task's callbacks for one attempt's end: inserted in the end's
/// transaction, the one that matches where the job lands (a completion,
/// or a failure for good; a job that a pending cancel stops runs none),
/// so exactly once. Not held to the tenant's `max_queued`: each comes of
/// a job the tenant was already granted, one for one.
#[derive(Debug, Clone, Default)]
pub struct Callbacks {
    pub on_success: Option<NewJob>,
    pub on_fail: Option<NewJob>,
    /// The span of the attempt that made them, when traces are on: they
    /// continue its trace, and their enqueue's span is under it.
    pub made_under: Option<crate::trace_context::TraceParent>,
}

impl Callbacks {
    /// The job to enqueue for a job that landed in `status`.
    pub fn landing(&self, status: JobStatus) -> Option<&NewJob> {
        match status {
            JobStatus::Completed => self.on_success.as_ref(),
            JobStatus::Failed => self.on_fail.as_ref(),
            _ => None,
        }
    }
}

/// What one attempt cost, charged to its tenant's current window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    pub fuel: u64,
    pub wall_ms: u64,
    /// The attempt's time in its runner's slot, in µs: what the fair share
    /// of claims charges (`fair::Fairness::charge`).
    pub runner_us: u64,
    /// Outbound HTTP requests that went out.
    pub http_requests: u64,
    /// Outbound HTTP body bytes, sent and received.
    pub http_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finalized {
    /// The job's status after the write.
    Done(JobStatus),
    /// The lease was gone: nothing was written.
    Fenced,
}

#[derive(Debug, Clone)]
pub enum CancelOutcome {
    /// It was queued or waiting, and is cancelled.
    Cancelled(JobRecord),
    /// It is running; its runner has been asked to stop it.
    Requested(JobRecord),
    /// It had ended already.
    AlreadyEnded(JobRecord),
    /// A workflow job that was queued or waiting: its `on_cancel` chain
    /// runs now, and the job ends cancelled after it.
    Handed(JobRecord),
}

/// A cancel of a workflow job that is not running (`Write::JobCancelStages`):
/// its stages settle, and its `on_cancel` chain, if it has one, takes over
/// (task, input, attempts). A job that is running meanwhile is asked to
/// stop, as any cancel does, and its runner settles it.
#[derive(Debug, Clone)]
pub struct CancelStages {
    pub tenant: String,
    pub id: String,
    pub on_cancel: Option<(TaskRef, String, u32)>,
    pub steps: Vec<crate::records::StepWrite>,
}
