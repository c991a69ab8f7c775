//! Each request in a span of its own (method, route and, once its token is
//! read, tenant), so that every line logged while it is answered names
//! them; one line when it is answered, with its status and duration (a
//! server error at `warn`, the rest at `info`); and the same figures in the
//! metrics, by route, never by the raw path (cardinality).

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;
use tracing::Instrument;

pub async fn observe(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let span = tracing::info_span!(
        "request",
        method = %method,
        route = %route,
        tenant = tracing::field::Empty,
    );
    let t0 = Instant::now();
    let response = next.run(req).instrument(span.clone()).await;
    let took = t0.elapsed();
    let status = response.status().as_u16();
    crate::metrics::get().request(method.as_str(), &route, status, took);
    let ms = took.as_secs_f64() * 1000.0;
    span.in_scope(|| {
        if response.status().is_server_error() {
            tracing::warn!(status, ms, "answered with a server error");
        } else {
            tracing::info!(status, ms, "answered");
        }
    });
    response
}
