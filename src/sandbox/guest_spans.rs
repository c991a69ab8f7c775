//! The guest's own spans (`taskbox:task/trace`): kept open in the store,
//! each under the innermost one still open or else the attempt's span,
//! and sent as they end — every name, value and message through the
//! attempt's redactor and cut to size, each span taking a place in the
//! attempt's budget (`attempt_spans`), which its requests share. With
//! traces off the calls cost a check and nothing else. Spans still open
//! when the store goes end with it.

use super::attempt_spans::{AttemptSpans, MAX_NAME_BYTES};
use crate::otel::{Event, Span, MAX_GUEST_ATTRIBUTES, MAX_VALUE_BYTES};
use opentelemetry::KeyValue;
use std::time::SystemTime;

/// Most events one span keeps.
pub const MAX_GUEST_EVENTS: usize = 128;

/// One attempt's guest spans.
pub struct GuestSpans {
    spans: Option<AttemptSpans>,
    /// Open spans, outermost first, with their handles.
    open: Vec<(u32, Span)>,
    /// Spans started so far (their handles are 1 to this).
    made: u32,
}

impl GuestSpans {
    pub fn new(spans: Option<AttemptSpans>) -> GuestSpans {
        GuestSpans {
            spans,
            open: Vec::new(),
            made: 0,
        }
    }

    /// Attributes as a span keeps them; none with traces off.
    fn attributes(&self, attributes: Vec<(String, String)>) -> Vec<KeyValue> {
        let Some(spans) = &self.spans else {
            return Vec::new();
        };
        attributes
            .into_iter()
            .take(MAX_GUEST_ATTRIBUTES)
            .map(|(k, v)| {
                KeyValue::new(
                    spans.text(&k, MAX_NAME_BYTES),
                    spans.text(&v, MAX_VALUE_BYTES),
                )
            })
            .collect()
    }

    /// `start-span`: the new span's handle, or 0 when traces are off or
    /// the attempt has made all the spans it may.
    pub fn start(&mut self, name: String, attributes: Vec<(String, String)>) -> u32 {
        let Some(spans) = &self.spans else { return 0 };
        if !spans.take() {
            return 0;
        }
        let attempt = spans.attempt();
        let parent = self.open.last().map_or(attempt, |(_, s)| s.at);
        let now = SystemTime::now();
        let mut span = Span::new(
            spans.text(&name, MAX_NAME_BYTES),
            attempt.child(),
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
        let Some(spans) = &self.spans else { return };
        let name = spans.text(&name, MAX_NAME_BYTES);
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
        let Some(spans) = &self.spans else { return };
        let message = spans.text(&message, MAX_VALUE_BYTES);
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
        if let Some(spans) = &self.spans {
            for (_, mut span) in ended.into_iter().rev() {
                span.end = now.max(span.start);
                spans.emit(span);
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
    use crate::sandbox::attempt_spans::MAX_SPANS_PER_ATTEMPT;
    use crate::sandbox::{AttemptTrace, Redactor};

    fn spans() -> GuestSpans {
        // Traces on but going nowhere: the spans are made all the same.
        let trace = AttemptTrace {
            traces: Traces::off(),
            attempt: TraceParent::for_job("job", None),
        };
        GuestSpans::new(Some(AttemptSpans::new(
            trace,
            Redactor::new(&[("KEY".into(), "s3cr3t-value".into())]),
        )))
    }

    #[test]
    fn spans_nest_under_the_innermost_open_one() {
        let mut g = spans();
        let attempt = g.spans.as_ref().unwrap().attempt();
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
        assert!(!v.contains("s3cr") && v.len() <= MAX_VALUE_BYTES, "{v}");
        assert!(!s.error.as_deref().unwrap().contains("s3cr3t"));
        assert_eq!(s.events.len(), MAX_GUEST_EVENTS);
        assert!(s.events[0].name.len() <= MAX_NAME_BYTES);
    }

    #[test]
    fn an_attempt_makes_a_bounded_number_and_none_when_off() {
        let mut g = spans();
        for _ in 0..MAX_SPANS_PER_ATTEMPT {
            let h = g.start("s".into(), vec![]);
            assert_ne!(h, 0);
            g.end(h);
        }
        assert_eq!(g.start("one too many".into(), vec![]), 0);
        let mut off = GuestSpans::new(None);
        assert_eq!(off.start("s".into(), vec![]), 0);
    }
}
