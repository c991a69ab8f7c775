//! Traces of jobs, sent over OTLP when the server is given an endpoint:
//! every job is a trace (its enqueue, its waits in the queue, its attempts,
//! what its guest asked for and its own spans), made of spans with the
//! times and parents the job's records say, not of the tasks that happen
//! to be running when they end.
//!
//! Off (no endpoint), every call here returns at once; a span is never
//! built. On, a span goes to a batch processor on the runtime and out to
//! the collector in batches: a full queue drops spans, never waits.

/// A trace's context as W3C `traceparent` carries it, in the lowest floor.
pub use taskbox_core::trace_context as context;
mod export;

pub use context::{BadTraceParent, TraceParent};
pub use export::{OtlpEndpoint, OtlpError, OtlpProtocol};

use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks, SpanProcessor};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

pub use opentelemetry::trace::Event;

/// Most bytes of a span's string attribute: a guest's or a URL's longer
/// text is cut, so that a span stays small whatever the guest sends.
pub const MAX_VALUE_BYTES: usize = 1_024;
/// Most attributes and events a guest's span may carry.
pub const MAX_GUEST_ATTRIBUTES: usize = 32;

/// Where spans go: nowhere (off), or an exporter behind a batch
/// processor. Cheap to clone; one per server.
#[derive(Clone, Default)]
pub struct Traces {
    sink: Option<Arc<Sink>>,
}

struct Sink {
    processor: Box<dyn SpanProcessor>,
    scope: InstrumentationScope,
}

/// One span, made whole: the trace code fills it and `Traces::emit` sends
/// it. Its own place (`at`) is its trace, its id and whether it is
/// sampled; `parent` is the span it is under (`None`: a root).
#[derive(Debug, Clone)]
pub struct Span {
    pub name: Cow<'static, str>,
    pub kind: SpanKind,
    pub at: TraceParent,
    pub parent: Option<[u8; 8]>,
    /// Its parent is another process's (a client's request).
    pub parent_remote: bool,
    pub start: SystemTime,
    pub end: SystemTime,
    pub attributes: Vec<KeyValue>,
    pub events: Vec<Event>,
    /// It ended in error, and why.
    pub error: Option<String>,
}

impl Span {
    /// A span at `at` under `parent`, from `start` to `end`, with nothing
    /// on it yet.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        at: TraceParent,
        parent: Option<&TraceParent>,
        start: SystemTime,
        end: SystemTime,
    ) -> Span {
        Span {
            name: name.into(),
            kind: SpanKind::Internal,
            at,
            parent: parent.map(|p| p.span_id),
            parent_remote: false,
            start,
            end: end.max(start),
            attributes: Vec::new(),
            events: Vec::new(),
            error: None,
        }
    }

    pub fn kind(mut self, kind: SpanKind) -> Span {
        self.kind = kind;
        self
    }

    pub fn attr(mut self, key: &'static str, value: impl Into<opentelemetry::Value>) -> Span {
        self.attributes.push(KeyValue::new(key, value));
        self
    }

    /// A string attribute, cut at `MAX_VALUE_BYTES`.
    pub fn text(self, key: &'static str, value: &str) -> Span {
        self.attr(key, cut(value).to_owned())
    }

    /// The task version a span is of: its name, version and digest.
    pub fn task(self, name: &str, version: u32, digest: &str) -> Span {
        self.text("taskbox.task", name)
            .attr("taskbox.task.version", i64::from(version))
            .text("taskbox.digest", digest)
    }
}

/// `s` cut at `MAX_VALUE_BYTES` (on a character's boundary).
pub fn cut(s: &str) -> &str {
    crate::text::prefix(s, MAX_VALUE_BYTES)
}

impl Traces {
    /// Spans go nowhere.
    pub fn off() -> Traces {
        Traces::default()
    }

    /// Spans go to `endpoint`, in batches, from a task on the current
    /// runtime.
    pub fn start(endpoint: &OtlpEndpoint) -> Result<Traces, OtlpError> {
        let processor = export::processor(endpoint)?;
        Ok(Traces {
            sink: Some(Arc::new(Sink {
                processor,
                scope: InstrumentationScope::builder("taskbox")
                    .with_version(env!("CARGO_PKG_VERSION"))
                    .build(),
            })),
        })
    }

    pub fn is_on(&self) -> bool {
        self.sink.is_some()
    }

    /// Sends a span, if traces are on and it is sampled.
    pub fn emit(&self, span: Span) {
        let Some(sink) = &self.sink else { return };
        if !span.at.sampled {
            return;
        }
        let flags = TraceFlags::SAMPLED;
        let mut events = SpanEvents::default();
        events.events = span.events;
        let data = SpanData {
            span_context: SpanContext::new(
                TraceId::from_bytes(span.at.trace_id),
                SpanId::from_bytes(span.at.span_id),
                flags,
                false,
                TraceState::default(),
            ),
            parent_span_id: span
                .parent
                .map(SpanId::from_bytes)
                .unwrap_or(SpanId::INVALID),
            parent_span_is_remote: span.parent_remote,
            span_kind: span.kind,
            name: span.name,
            start_time: span.start,
            end_time: span.end,
            attributes: span.attributes,
            dropped_attributes_count: 0,
            events,
            links: SpanLinks::default(),
            status: match span.error {
                Some(e) => Status::error(e),
                None => Status::Unset,
            },
            instrumentation_scope: sink.scope.clone(),
        };
        sink.processor.on_end(data);
    }

    /// Sends what is batched and stops the exporter. Blocks while the
    /// batch goes out (on a thread of its own, off the runtime's workers).
    pub async fn shutdown(&self) {
        let Some(sink) = self.sink.clone() else {
            return;
        };
        let done = tokio::task::spawn_blocking(move || sink.processor.shutdown()).await;
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "the trace exporter did not stop cleanly"),
            Err(e) => tracing::warn!(error = %e, "the trace exporter's stop failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_cut_on_a_character() {
        assert_eq!(cut("abc"), "abc");
        let long = "é".repeat(MAX_VALUE_BYTES);
        let c = cut(&long);
        assert!(c.len() <= MAX_VALUE_BYTES && c.len() >= MAX_VALUE_BYTES - 1);
        assert!(c.chars().all(|ch| ch == 'é'));
    }

    #[test]
    fn off_sends_nothing_and_costs_nothing() {
        let t = Traces::off();
        assert!(!t.is_on());
        let at = TraceParent::for_job("x", None);
        t.emit(Span::new(
            "x",
            at,
            None,
            SystemTime::now(),
            SystemTime::now(),
        ));
    }
}
