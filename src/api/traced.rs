//! The trace an enqueue request continues: its W3C `traceparent` header.

use crate::otel::TraceParent;
use axum::http::HeaderMap;

/// The request's `traceparent`, if it sent one that reads. One that does
/// not is ignored (the W3C rule: a broken parent starts a new trace
/// rather than failing the request), and the log says so.
pub fn request_trace(headers: &HeaderMap) -> Option<TraceParent> {
    let v = headers.get("traceparent")?;
    match v.to_str().map_err(|_| crate::otel::BadTraceParent::Form) {
        Ok(s) => match TraceParent::parse(s) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::debug!(error = %e, "a request's traceparent was ignored");
                None
            }
        },
        Err(e) => {
            tracing::debug!(error = %e, "a request's traceparent was ignored");
            None
        }
    }
}
