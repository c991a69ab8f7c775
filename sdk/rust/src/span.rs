//! The task's own spans in its attempt's trace (`taskbox:task/trace`): [`Ctx::span`] starts
//! one, and it ends when dropped. The host redacts the task's secrets from them and bounds
//! them; without a trace collector on the server, and in a native test, they cost nothing.

use crate::Ctx;

/// An open span. Spans started while it is open nest under it; dropping it ends it (and any
/// still open inside it).
#[derive(Debug)]
pub struct Span {
    /// The host's handle; 0 for none (a native test, or one the host dropped).
    handle: u32,
}

fn pairs(attributes: &[(&str, &str)]) -> Vec<(String, String)> {
    attributes
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

impl Ctx {
    /// Starts a span named `name` with these attributes.
    pub fn span(&self, name: &str, attributes: &[(&str, &str)]) -> Span {
        let handle = if self.in_host() {
            crate::bindings::taskbox::task::trace::start_span(name, &pairs(attributes))
        } else {
            0
        };
        Span { handle }
    }
}

impl Span {
    /// Adds an event, at this moment, with these attributes.
    pub fn event(&self, name: &str, attributes: &[(&str, &str)]) {
        if self.handle != 0 {
            crate::bindings::taskbox::task::trace::add_event(self.handle, name, &pairs(attributes));
        }
    }

    /// Marks the span as failed, saying why.
    pub fn error(&self, message: &str) {
        if self.handle != 0 {
            crate::bindings::taskbox::task::trace::set_error(self.handle, message);
        }
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if self.handle != 0 {
            crate::bindings::taskbox::task::trace::end_span(self.handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_native_test_makes_spans_that_do_nothing() {
        let ctx = Ctx::test();
        let span = ctx.span("work", &[("k", "v")]);
        span.event("e", &[]);
        span.error("why");
        drop(span);
    }
}
