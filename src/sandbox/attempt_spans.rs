//! Where a sandboxed attempt's spans go: its outbound requests' and the
//! guest's own (`trace` import) alike, through one budget of
//! [`MAX_SPANS_PER_ATTEMPT`] and the attempt's redactor. A guest chooses
//! how many spans it makes (each request is one) and what they say (a
//! method, a host, a name, an attribute), and they go to a collector that
//! is the operator's: so every span takes a place in the budget, and every
//! text a guest chose goes through [`AttemptSpans::text`], redacted then
//! cut.

use super::redact::Redactor;
use crate::otel::{Span, TraceParent, Traces};
use crate::text::prefix;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Most spans one attempt makes, its requests' and its own together;
/// past it they are not made (the attempt's span still counts its
/// requests). An invoked task's run is an attempt of its own, with its own.
pub const MAX_SPANS_PER_ATTEMPT: u32 = 256;
/// Longest span, event or attribute name, or HTTP method, kept from a
/// guest's text; attribute values are held to `otel::MAX_VALUE_BYTES`.
pub const MAX_NAME_BYTES: usize = 128;

/// Where an attempt's spans go, and the attempt's own span.
#[derive(Clone)]
pub struct AttemptTrace {
    pub traces: Traces,
    pub attempt: TraceParent,
}

/// One attempt's span budget and redactor, shared by its requests and
/// its `trace` calls. Cheap to clone.
#[derive(Clone)]
pub struct AttemptSpans {
    trace: AttemptTrace,
    redactor: Redactor,
    made: Arc<AtomicU32>,
}

impl AttemptSpans {
    /// Spans of a job "job" with traces off, whose one secret is
    /// `s3cr3t-value`.
    #[cfg(test)]
    pub(crate) fn for_tests() -> AttemptSpans {
        AttemptSpans::new(
            AttemptTrace {
                traces: Traces::off(),
                attempt: TraceParent::for_job("job", None),
            },
            Redactor::new(&[("KEY".into(), "s3cr3t-value".into())]),
        )
    }

    pub fn new(trace: AttemptTrace, redactor: Redactor) -> AttemptSpans {
        AttemptSpans {
            trace,
            redactor,
            made: Arc::default(),
        }
    }

    /// The attempt's own span, which every span here is under.
    pub fn attempt(&self) -> TraceParent {
        self.trace.attempt
    }

    /// Takes a place for one more span: false once the attempt has made
    /// all it may.
    pub fn take(&self) -> bool {
        self.made
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < MAX_SPANS_PER_ATTEMPT).then_some(n + 1)
            })
            .is_ok()
    }

    /// Sends a span that took its place.
    pub fn emit(&self, span: Span) {
        self.trace.traces.emit(span);
    }

    /// A guest's `s` as a span may carry it: redacted, then cut to `max`
    /// bytes (issue 39: a cut first could keep the start of a secret),
    /// redacting no more of it than the cut keeps, so a long text costs
    /// the host a window of it.
    pub fn text(&self, s: &str, max: usize) -> String {
        let window = max.saturating_add(self.redactor.longest().saturating_mul(2));
        // No mark where it is cut: the cap is the attribute's.
        if s.len() <= window {
            return prefix(&self.redactor.apply(s), max).to_owned();
        }
        // Cut, the window's end may hold the start of a secret:
        // `apply_cut` drops what could be one.
        prefix(&self.redactor.apply_cut(prefix(s, window)), max).to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans() -> AttemptSpans {
        AttemptSpans::for_tests()
    }

    #[test]
    fn an_attempt_takes_at_most_its_places_across_clones() {
        let a = spans();
        let b = a.clone();
        for i in 0..MAX_SPANS_PER_ATTEMPT {
            assert!(if i % 2 == 0 { a.take() } else { b.take() });
        }
        assert!(!a.take() && !b.take());
        // Another attempt's budget is its own.
        assert!(spans().take());
    }

    #[test]
    fn text_is_redacted_before_it_is_cut() {
        let s = spans();
        assert_eq!(s.text("x s3cr3t-value", 100), "x [redacted]");
        // The cut falls inside the secret: none of it is kept.
        let cut = s.text(&format!("{}s3cr3t-value", "x".repeat(8)), 12);
        assert!(!cut.contains("s3"), "{cut}");
        // A long text: only a window is redacted, and nothing of a secret
        // at its edge is kept.
        let long = format!("{}s3cr3t-value{}", "y".repeat(20), "z".repeat(10_000));
        let cut = s.text(&long, 25);
        assert!(cut.len() <= 25 && !cut.contains("s3cr"), "{cut}");
        let edge = format!("{}s3cr3t-value", "y".repeat(30));
        assert!(!s.text(&edge, 10).contains('s'));
    }
}
