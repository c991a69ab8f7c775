//! The span of one outbound request, as OpenTelemetry's HTTP conventions
//! name it: a standard method names it (`GET`, …), and any other method
//! makes it `HTTP`, with `http.request.method` `_OTHER` and the guest's
//! method, redacted and cut, as `http.request.method_original`. The host,
//! which a guest may make of anything, is redacted and cut too; the
//! scheme is only ever `http` or `https`; a URL's path and query and the
//! request's headers, which may carry what a guest was given in secret,
//! are never on it. The request carries its span's context in its
//! `traceparent`, or the attempt's past the attempt's budget of spans.

use crate::otel::{Span, TraceParent, MAX_VALUE_BYTES};
use crate::sandbox::attempt_spans::{AttemptSpans, MAX_NAME_BYTES};
use opentelemetry::trace::SpanKind;
use std::time::SystemTime;
use wasmtime_wasi_http::{Error, WasiBody};

/// The methods a span is named by (RFC 9110's and PATCH): a span's name
/// is from a fixed set, whatever method a guest makes up.
const STANDARD: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];

/// A request's span, begun as the guest hands the request over.
pub struct RequestSpan {
    spans: AttemptSpans,
    at: TraceParent,
    start: SystemTime,
    /// The standard method it is, or `None` for any other.
    method: Option<&'static str>,
    /// Any other method, redacted and cut.
    original: Option<String>,
    host: Option<String>,
    scheme: Option<&'static str>,
}

/// Sets the request's `traceparent` to its span's context (a guest's own
/// header of that name would name a span never sent) and begins the span,
/// if the attempt has a place left for it; past that, the request carries
/// the attempt's context and makes no span. With traces off, nothing.
pub fn begin(
    spans: Option<&AttemptSpans>,
    request: &mut http::Request<WasiBody>,
) -> Option<RequestSpan> {
    let spans = spans?;
    let span = spans.take().then(|| {
        let method = request.method().as_str();
        let standard = STANDARD.iter().find(|m| **m == method).copied();
        RequestSpan {
            spans: spans.clone(),
            at: spans.attempt().child(),
            start: SystemTime::now(),
            method: standard,
            original: standard
                .is_none()
                .then(|| spans.text(method, MAX_NAME_BYTES)),
            host: request.uri().host().map(|h| spans.text(h, MAX_VALUE_BYTES)),
            scheme: match request.uri().scheme_str() {
                Some("http") => Some("http"),
                Some("https") => Some("https"),
                _ => None,
            },
        }
    });
    let context = span.as_ref().map_or(spans.attempt(), |s| s.at);
    if let Ok(v) = http::HeaderValue::from_str(&context.to_string()) {
        request.headers_mut().insert("traceparent", v);
    }
    span
}

impl RequestSpan {
    /// Sends the span, with the response's status or the request's error.
    pub fn end(self, status: Option<u16>, outcome: Result<(), &Error>) {
        let mut span = Span::new(
            self.method.unwrap_or("HTTP"),
            self.at,
            Some(&self.spans.attempt()),
            self.start,
            SystemTime::now(),
        )
        .kind(SpanKind::Client)
        .text("http.request.method", self.method.unwrap_or("_OTHER"));
        if let Some(m) = &self.original {
            span = span.text("http.request.method_original", m);
        }
        if let Some(h) = &self.host {
            span = span.text("server.address", h);
        }
        if let Some(s) = self.scheme {
            span = span.text("url.scheme", s);
        }
        if let Some(s) = status {
            span = span.attr("http.response.status_code", i64::from(s));
        }
        if let Err(e) = outcome {
            // The host's words, but some carry what the guest gave (a
            // resolver's answer about its name).
            span.error = Some(self.spans.text(&e.to_string(), MAX_VALUE_BYTES));
        } else if let Some(s) = status.filter(|s| *s >= 500) {
            span.error = Some(format!("status {s}"));
        }
        self.spans.emit(span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn spans() -> AttemptSpans {
        AttemptSpans::for_tests()
    }

    fn request(method: &str, uri: &str) -> http::Request<WasiBody> {
        let body = http_body_util::Empty::<bytes::Bytes>::new()
            .map_err(|never| match never {})
            .boxed_unsync();
        http::Request::builder()
            .method(method)
            .uri(uri)
            .header("traceparent", "00-guests-own")
            .body(body)
            .unwrap()
    }

    #[test]
    fn a_standard_method_names_the_span_and_any_other_is_http() {
        let s = spans();
        let mut get = request("GET", "http://a.example/x?key=s3cr3t-value");
        let span = begin(Some(&s), &mut get).unwrap();
        assert_eq!((span.method, span.original.as_deref()), (Some("GET"), None));
        assert_eq!(span.scheme, Some("http"));

        let long = "X".repeat(4096);
        let span = begin(Some(&s), &mut request(&long, "http://a.example/")).unwrap();
        assert_eq!(span.method, None);
        assert_eq!(span.original.as_deref(), Some(&long[..MAX_NAME_BYTES]));
        let span = begin(Some(&s), &mut request("s3cr3t-value", "http://a.example/")).unwrap();
        assert_eq!(span.original.as_deref(), Some("[redacted]"));
        // Lower case is another method (methods are case-sensitive).
        let span = begin(Some(&s), &mut request("get", "http://a.example/")).unwrap();
        assert_eq!(span.original.as_deref(), Some("get"));
    }

    #[test]
    fn a_guests_host_is_redacted_and_its_traceparent_replaced() {
        let s = spans();
        let mut req = request("GET", "http://s3cr3t-value.example/");
        let span = begin(Some(&s), &mut req).unwrap();
        assert_eq!(span.host.as_deref(), Some("[redacted].example"));
        assert_eq!(
            req.headers()["traceparent"].to_str().unwrap(),
            span.at.to_string()
        );
    }

    #[test]
    fn past_the_budget_a_request_carries_the_attempts_context() {
        let s = spans();
        while s.take() {}
        let mut req = request("GET", "http://a.example/");
        assert!(begin(Some(&s), &mut req).is_none());
        assert_eq!(
            req.headers()["traceparent"].to_str().unwrap(),
            s.attempt().to_string()
        );
        // Traces off: the request is left as it is.
        let mut req = request("GET", "http://a.example/");
        assert!(begin(None, &mut req).is_none());
        assert_eq!(req.headers()["traceparent"], "00-guests-own");
    }
}
