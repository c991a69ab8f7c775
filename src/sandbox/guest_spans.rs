//! The guest's own spans (`taskbox:task/trace`): kept open in the store,
//! each under the innermost one still open or else the attempt's span,
//! and sent as they end — every name, value and message through the
//! attempt's redactor and cut to size, a bounded number per attempt. With
//! traces off the calls cost a check and nothing else. Spans still open
//! when the store goes end with it.

use super::network::AttemptTrace;
use super::redact::Redactor;
use crate::otel::{Event, Span, MAX_GUEST_ATTRIBUTES};
use opentelemetry::KeyValue;
use std::time::SystemTime;

/// Most spans one attempt may make; past it they are dropped.
pub const MAX_GUEST_SPANS: u32 = 256;
/// Most events one span keeps.
pub const MAX_GUEST_EVENTS: usize = 128;
/// Longest span, event or attribute name kept.
pub const MAX_NAME_BYTES: usize = 128;

/// One attempt's guest spans.
pub struct GuestSpans {
    trace: Option<AttemptTrace>,
    redactor: Redactor,
    /// Open spans, outermost first, with their handles.
    open: Vec<(u32, Span)>,
    /// Spans started so far (their handles are 1 to this).
    made: u32,
}

/// `s` redacted and cut to `max` bytes, without redacting more of it than
/// the cut keeps: a guest's long text costs the host a window of it.
fn bounded(redactor: &Redactor, s: &str, max: usize) -> String {
    let window = max.saturating_add(redactor.longest().saturating_mul(2));
    if s.len() <= window {
        return cut_to(&redactor.apply(s), max);
    }
    let mut end = window;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    // Cut, the window's end may hold the start of a secret: `apply_cut`
    // drops what could be one.
    cut_to(&redactor.apply_cut(&s[..end]), max)
}

/// `s` cut to at most `max` bytes on a character boundary.
fn cut_to(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

impl GuestSpans {
    pub fn new(trace: Option<AttemptTrace>, redactor: Redactor) -> GuestSpans {
        GuestSpans {
            trace,
            redactor,
            open: Vec::new(),
            made: 0,
        }
    }

    fn attributes(&self, attributes: Vec<(String, String)>) -> Vec<KeyValue> {
        attributes
            .into_iter()
            .take(MAX_GUEST_ATTRIBUTES)
            .map(|(k, v)| {
                KeyValue::new(
                    bounded(&self.redactor, &k, MAX_NAME_BYTES),
                    bounded(&self.redactor, &v, crate::otel::MAX_VALUE_BYTES),
                )
            })
            .collect()
    }

    /// `start-span`: the new span's handle, or 0 when traces are off or
    /// the attempt has made all it may.
    pub fn start(&mut self, name: String, attributes: Vec<(String, String)>) -> u32 {
        let Some(trace) = &self.trace else { return 0 };
        if self.made >= MAX_GUEST_SPANS {
            return 0;
        }
        let parent = self.open.last().map_or(trace.attempt, |(_, s)| s.at);
        let now = SystemTime::now();
        let mut span = Span::new(
            bounded(&self.redactor, &name, MAX_NAME_BYTES),
            trace.attempt.child(),
            Some(&parent),
            now,
            now,
        );
        span.attributes = self.attributes(attributes);
        self.made += 1;
        self.open.push((self.made, span));
        self.made
    }

    fn find(&mut self, handle: u32) -> Option<&mut Span> {
        self.open
            .iter_mut()
            .find(|(h, _)| *h == handle)
            .map(|(_, s)| s)
    }

    /// `add-event`.
    pub fn event(&mut self, handle: u32, name: String, attributes: Vec<(String, String)>) {
        let name = bounded(&self.redactor, &name, MAX_NAME_BYTES);
        let attributes = self.attributes(attributes);
        if let Some(span) = self.find(handle) {
            if span.events.len() < MAX_GUEST_EVENTS {
                span.events
                    .push(Event::new(name, SystemTime::now(), attributes, 0));
            }
        }
    }

    /// `set-error`.
    pub fn error(&mut self, handle: u32, message: String) {
        let message = bounded(&self.redactor, &message, crate::otel::MAX_VALUE_BYTES);
        if let Some(span) = self.find(handle) {
            span.error = Some(message);
        }
    }

    /// `end-span`: it and those opened inside it end now.
    pub fn end(&mut self, handle: u32) {
        let Some(at) = self.open.iter().position(|(h, _)| *h == handle) else {
            return;
        };
        let now = SystemTime::now();
        let ended: Vec<(u32, Span)> = self.open.drain(at..).collect();
        if let Some(trace) = &self.trace {
            for (_, mut span) in ended.into_iter().rev() {
                span.end = now.max(span.start);
                trace.traces.emit(span);
            }
        }
    }
}

impl Drop for GuestSpans {
    fn drop(&mut self) {
        if let Some((first, _)) = self.open.first() {
            self.end(*first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otel::{TraceParent, Traces};

    fn spans() -> GuestSpans {
        // Traces on but going nowhere: the spans are made all the same.
        let trace = AttemptTrace {
            traces: Traces::off(),
            attempt: TraceParent::for_job("job", None),
        };
        GuestSpans::new(
            Some(trace),
            Redactor::new(&[("KEY".into(), "s3cr3t-value".into())]),
        )
    }

    #[test]
    fn spans_nest_under_the_innermost_open_one() {
        let mut g = spans();
        let attempt = g.trace.as_ref().unwrap().attempt;
        let outer = g.start("outer".into(), vec![]);
        let inner = g.start("inner".into(), vec![]);
        assert_eq!((outer, inner), (1, 2));
        assert_eq!(g.open[0].1.parent, Some(attempt.span_id));
        assert_eq!(g.open[1].1.parent, Some(g.open[0].1.at.span_id));
        // Ending the outer one ends the inner one too.
        g.end(outer);
        assert!(g.open.is_empty());
        // An unknown or ended handle is ignored.
        g.end(inner);
        g.event(7, "e".into(), vec![]);
    }

    #[test]
    fn secrets_are_redacted_and_sizes_bounded() {
        let mut g = spans();
        let h = g.start(
            "call s3cr3t-value".into(),
            (0..100)
                .map(|i| (format!("k{i}"), "s3cr3t-value".repeat(200)))
                .collect(),
        );
        g.error(h, "failed with s3cr3t-value".into());
        for _ in 0..200 {
            g.event(h, "x".repeat(1000), vec![]);
        }
        let s = &g.open[0].1;
        assert!(!s.name.contains("s3cr3t"), "{}", s.name);
        assert_eq!(s.attributes.len(), MAX_GUEST_ATTRIBUTES);
        let v = s.attributes[0].value.as_str();
        assert!(
            !v.contains("s3cr") && v.len() <= crate::otel::MAX_VALUE_BYTES,
            "{v}"
        );
        assert!(!s.error.as_deref().unwrap().contains("s3cr3t"));
        assert_eq!(s.events.len(), MAX_GUEST_EVENTS);
        assert!(s.events[0].name.len() <= MAX_NAME_BYTES);
    }

    #[test]
    fn an_attempt_makes_a_bounded_number_and_none_when_off() {
        let mut g = spans();
        for _ in 0..MAX_GUEST_SPANS {
            let h = g.start("s".into(), vec![]);
            assert_ne!(h, 0);
            g.end(h);
        }
        assert_eq!(g.start("one too many".into(), vec![]), 0);
        let mut off = GuestSpans::new(None, Redactor::default());
        assert_eq!(off.start("s".into(), vec![]), 0);
    }
}
