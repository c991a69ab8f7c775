//! How an attempt's end is written: the `Finalize` of what was decided and
//! of what ran (its record and its tenant's usage), the ends of attempts
//! that never ran a guest, and the output rule every completed run keeps.
//! Shared by the executor and a verification's runner.

use crate::job::{ErrorKind, JobError};
use crate::registry::{Registry, TaskVersion, Which};
use crate::sandbox::AttemptReport;
use crate::store::{Action, AttemptRecord, ClaimedJob, Finalize, Usage};
use crate::time::Millis;
use std::sync::Arc;
use std::time::Duration;

/// How long a job waits when its task or component could not be loaded
/// for a reason that passes (the database or the compiler was busy).
pub(super) const TRANSIENT_DELAY_MS: u64 = 5_000;

/// What one attempt produced for the store, and how long the guest ran.
pub struct Executed {
    /// `None` when the lease was lost: the runner writes nothing.
    pub finalize: Option<Finalize>,
    pub ran_for: Duration,
}

/// The attempt as its end records it.
#[derive(Clone, Copy)]
pub struct Ran<'a> {
    pub started_at: Millis,
    pub finished_at: Millis,
    /// What the guest did and cost; `None` when it never ran.
    pub report: Option<&'a AttemptReport>,
}

impl Ran<'_> {
    pub fn unrun(started_at: Millis, finished_at: Millis) -> Self {
        Ran {
            started_at,
            finished_at,
            report: None,
        }
    }
}

/// Gives the job back, uncounted, for a while: what it needs cannot be
/// read now (the database or the compiler was busy).
pub(super) fn release_for_now(job: &ClaimedJob, at: Millis) -> Executed {
    let action = Action::Release {
        delay_ms: TRANSIENT_DELAY_MS,
    };
    Executed {
        finalize: Some(record(job, action, Ran::unrun(at, at))),
        ran_for: Duration::ZERO,
    }
}

/// Fails the job without running the guest (it cannot be loaded, or its
/// deadline has passed already).
pub(super) fn fail_unrun(
    job: &ClaimedJob,
    error: JobError,
    started_at: Millis,
    finished_at: Millis,
) -> Executed {
    Executed {
        finalize: Some(record(
            job,
            Action::Fail { error },
            Ran::unrun(started_at, finished_at),
        )),
        ran_for: Duration::ZERO,
    }
}

/// Whether a `Done` output keeps to the task's output schema; what it
/// breaks, as the failure it is.
pub(super) async fn check_output(
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

/// The end of `job` as the store writes it: `action`, and the record and
/// usage of the attempt that `ran`.
pub(super) fn record(job: &ClaimedJob, action: Action, ran: Ran<'_>) -> Finalize {
    record_as(job, action, None, ran)
}

/// `record`, for an attempt whose own end (`did`) its workflow's stages
/// turned into `action`: its record says what it did.
pub(super) fn record_as(
    job: &ClaimedJob,
    action: Action,
    did: Option<&Action>,
    ran: Ran<'_>,
) -> Finalize {
    let Ran {
        started_at,
        finished_at,
        report,
    } = ran;
    // The attempt's error is the one its action carries.
    let own = did.unwrap_or(&action);
    let error = match own {
        Action::Retry { error, .. } | Action::Fail { error } | Action::Fallback { error, .. } => {
            Some(error.clone())
        }
        _ => None,
    };
    let outcome = match own {
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
        runner_us: u64::try_from(r.duration.as_micros()).unwrap_or(u64::MAX),
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
