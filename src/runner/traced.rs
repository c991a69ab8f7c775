//! The spans of an attempt in its job's trace: its wait in the queue
//! (from when the job was due to the attempt's start), the attempt
//! itself, with what it ran, what it burned and how it ended, and, for a
//! workflow's stage, the stage's span that its attempts are under, sent
//! with the attempt that ends the stage. Only what the host knows goes on
//! them; a guest's error message does not (it may quote what the guest
//! was given in secret), its kind and code do.

use crate::otel::{Span, TraceParent};
use crate::registry::TaskVersion;
use crate::sandbox::{AttemptReport, AttemptTrace};
use crate::store::{Action, ClaimedJob, Finalize, NewJob, StepRecord};
use crate::time::Millis;
use opentelemetry::trace::SpanKind;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The attempt's span, made before its guest runs, when traces are on.
pub fn begin(traces: &crate::otel::Traces, job: &ClaimedJob) -> Option<AttemptTrace> {
    traces.is_on().then(|| AttemptTrace {
        traces: traces.clone(),
        attempt: TraceParent::of_job(&job.id, job.traceparent.as_deref()).child(),
    })
}

/// When an attempt ran, by this process's clock (as every span it makes
/// is timed), and when it started by the store's (as `due_at` is).
pub struct Ran {
    pub began: SystemTime,
    pub ended: SystemTime,
    pub started_at: Millis,
}

/// The span of a workflow's stage: under the job's enqueue span, its id
/// made from the job, the stage and when the stage began, so that every
/// attempt of the stage finds it without a stored id (a stage run again
/// from its start, as a redriven job's is, is another span).
fn stage_at(job_at: &TraceParent, job: &ClaimedJob, step: &StepRecord) -> TraceParent {
    job_at.derived(&format!(
        "stage {} {} {}",
        job.id,
        step.seq,
        step.started_at.unwrap_or(0)
    ))
}

/// Sends the attempt's spans under the job's enqueue span: its wait (from
/// `job.due_at` to its start, as long as the store's clock says, ending as
/// it began) and its run; a workflow stage's run goes under the stage's
/// span, which is sent too when `end` ends the stage.
pub fn end(
    trace: &AttemptTrace,
    job: &ClaimedJob,
    (task, step): (&TaskVersion, Option<&StepRecord>),
    ran: &Ran,
    report: Option<&AttemptReport>,
    end: Option<&Finalize>,
) {
    let action = end.map(|f| &f.action);
    let job_at = TraceParent::of_job(&job.id, job.traceparent.as_deref());
    let stage = step.map(|s| (s, stage_at(&job_at, job, s)));
    let wait_ms = u64::try_from(ran.started_at.saturating_sub(job.due_at)).unwrap_or(0);
    let waited = Span::new(
        "queued",
        job_at.child(),
        Some(&job_at),
        ran.began
            .checked_sub(Duration::from_millis(wait_ms))
            .unwrap_or(UNIX_EPOCH),
        ran.began,
    )
    .text("taskbox.job.id", &job.id)
    .text("taskbox.queue", &job.queue)
    .attr("taskbox.attempt", i64::from(job.attempts));
    trace.traces.emit(waited);
    let mut span = Span::new(
        format!("attempt {}", task.record.name),
        trace.attempt,
        Some(stage.as_ref().map_or(&job_at, |(_, at)| at)),
        ran.began,
        ran.ended,
    )
    .kind(SpanKind::Consumer)
    .text("taskbox.job.id", &job.id)
    .text("taskbox.tenant", &job.tenant)
    .task(&task.record.name, task.record.version, &task.record.digest)
    .text("taskbox.queue", &job.queue)
    .attr("taskbox.attempt", i64::from(job.attempts));
    if let Some(own) = &job.own_task {
        span = span.text("taskbox.job.task", own);
    }
    // A workflow's stage: which step of which chain ran.
    if let Some(s) = step {
        span = span
            .text("taskbox.step", &s.name)
            .text("taskbox.step.kind", s.kind.as_str())
            .attr("taskbox.step.seq", i64::from(s.seq));
    }
    if let Some(r) = report {
        span = span
            .attr(
                "taskbox.fuel",
                i64::try_from(r.fuel_used).unwrap_or(i64::MAX),
            )
            .attr(
                "taskbox.memory.peak_bytes",
                i64::try_from(r.peak_memory_bytes).unwrap_or(i64::MAX),
            )
            .attr(
                "taskbox.network.requests",
                i64::try_from(r.network.requests).unwrap_or(i64::MAX),
            )
            .attr(
                "taskbox.network.refused",
                i64::try_from(r.network.refused).unwrap_or(i64::MAX),
            );
    }
    let (outcome, error) = outcome(action);
    span = span.text("taskbox.outcome", outcome);
    if let Some(e) = error {
        span = failed(span, e);
    }
    trace.traces.emit(span);
    if let (Some((step, at)), Some(f)) = (stage, end) {
        if let Some(w) = f
            .steps
            .iter()
            .find(|w| w.seq == step.seq && w.status.is_over())
        {
            stage_span(trace, job, (&job_at, at), (step, w), ran);
        }
    }
}

/// Sends the span of a stage that the attempt just ended: from the
/// stage's start (by the store's clock, as far before the attempt's start
/// as the store says) to the attempt's end, with how it ended.
fn stage_span(
    trace: &AttemptTrace,
    job: &ClaimedJob,
    (job_at, at): (&TraceParent, TraceParent),
    (step, w): (&StepRecord, &crate::store::StepWrite),
    ran: &Ran,
) {
    let before = step.started_at.map_or(0, |s| {
        u64::try_from(ran.started_at.saturating_sub(s)).unwrap_or(0)
    });
    let start = ran
        .began
        .checked_sub(Duration::from_millis(before))
        .unwrap_or(UNIX_EPOCH);
    let mut span = Span::new(
        format!("step {}", step.name),
        at,
        Some(job_at),
        start,
        ran.ended,
    )
    .text("taskbox.job.id", &job.id)
    .text("taskbox.tenant", &job.tenant)
    .text("taskbox.step", &step.name)
    .text("taskbox.step.kind", step.kind.as_str())
    .attr("taskbox.step.seq", i64::from(step.seq))
    .task(&step.task.name, step.task.version, &step.task.digest)
    .text("taskbox.step.status", w.status.as_str())
    .attr(
        "taskbox.step.attempts",
        i64::from(w.attempts.unwrap_or(step.attempts)),
    );
    if let Some(e) = &w.error {
        span = failed(span, e);
    }
    trace.traces.emit(span);
}

/// A span that ended in `e`: its kind and code, never its message (a
/// guest's may quote what it was given in secret).
fn failed(span: Span, e: &crate::job::JobError) -> Span {
    let mut span = span
        .text("error.type", e.kind.as_str())
        .text("taskbox.error.code", &e.code);
    span.error = Some(format!("{} ({})", e.kind.as_str(), e.code));
    span
}

/// What became of the job, as the attempt's span says it, and the error
/// that ended it, if one did.
fn outcome(action: Option<&Action>) -> (&'static str, Option<&crate::job::JobError>) {
    match action {
        None => ("abandoned", None),
        Some(Action::Complete { .. }) => ("completed", None),
        Some(Action::Retry { error, .. }) => ("retry", Some(error)),
        Some(Action::Fail { error }) => ("failed", Some(error)),
        Some(Action::Snooze { .. }) => ("snoozed", None),
        Some(Action::Wait { .. }) => ("waiting", None),
        Some(Action::Cancel) => ("cancelled", None),
        Some(Action::Fallback { error, .. }) => ("fallback", Some(error)),
        Some(Action::Release { .. }) => ("released", None),
        // A workflow's stage ended and the next took over: the error is
        // the stage's, when it failed (or the main chain's, for a chain
        // set off by it).
        Some(Action::Advance { error, .. }) => ("advanced", error.as_ref()),
        Some(Action::Conclude { error, .. }) => ("concluded", error.as_ref()),
    }
}

/// Sends the enqueue span of a callback, once it was written with the end
/// of the job that made it, under that job's attempt.
pub fn callback(traces: &crate::otel::Traces, new: &NewJob, made_under: Option<&TraceParent>) {
    if !traces.is_on() {
        return;
    }
    let now = SystemTime::now();
    let by = crate::enqueue::traced::MadeBy {
        parent: made_under,
        remote: false,
        via: "callback",
    };
    crate::enqueue::traced::enqueued(traces, &new.clone().into_record(0, 0), by, now);
}
