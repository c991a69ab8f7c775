//! The span of the enqueue that made a job, whoever made it (a request, a
//! schedule's slot, a guest's spawn, a job's callback): the root of the
//! job's own trace, or a child of the span it continues.

use crate::otel::{Span, TraceParent, Traces};
use crate::store::JobRecord;
use opentelemetry::trace::SpanKind;
use std::time::SystemTime;

/// Who made a job, for its enqueue's span: under which span (`None`: the
/// root of its own trace), and whether that span is another process's.
#[derive(Debug, Clone, Copy)]
pub struct MadeBy<'a> {
    pub parent: Option<&'a TraceParent>,
    pub remote: bool,
    /// What made it: `request`, `schedule`, `spawn` or `callback`.
    pub via: &'static str,
}

/// Sends the span of the enqueue that made `job`, from `start` to now.
pub fn enqueued(traces: &Traces, job: &JobRecord, by: MadeBy<'_>, start: SystemTime) {
    if !traces.is_on() {
        return;
    }
    let at = TraceParent::of_job(&job.id, job.traceparent.as_deref());
    let mut span = Span::new("enqueue", at, by.parent, start, SystemTime::now())
        .kind(SpanKind::Producer)
        .text("taskbox.job.id", &job.id)
        .text("taskbox.tenant", &job.tenant)
        .task(&job.task.name, job.task.version, &job.task.digest)
        .text("taskbox.queue", &job.queue);
    span = span.text("taskbox.enqueued_by", by.via);
    span.parent_remote = by.remote;
    if let Some(from) = &job.cached_from {
        span = span.text("taskbox.cached_from", from);
    }
    traces.emit(span);
}
