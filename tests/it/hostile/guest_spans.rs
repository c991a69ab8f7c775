//! Round three (issue 65), item 6: what a guest puts in its attempt's
//! trace is bounded and redacted, and a request the host refuses is
//! counted as refused. An outbound request's span was named by the
//! guest's HTTP method, any string of any length: a 4,096-byte method and
//! a secret's value used as one were exported whole, and so was a
//! secret's value in a refused request's host. An attempt made as many
//! request spans as it made requests. A request refused for its address
//! was recorded as sent (`requests: 1, refused: 0`) and outside
//! `max_requests`. Seen through a real OTLP receiver and the attempt's
//! record, with the `http-probe` guest.

use crate::otlp_traces::{int, own_trace, receiver, spans_of, text, Spans};
use crate::server::TestServer;
use axum::http::{Method, StatusCode};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::{json, Value};

/// A secret of the tenant's; lower case, so a URL's host keeps it as is.
const KEY: &str = "sk_span_5f0c2d9e81a7";
/// What a request's span may be named: the standard methods, and `HTTP`
/// for any other (OpenTelemetry's HTTP conventions).
const NAMES: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "HTTP",
];
/// Longest span name a guest's text makes (the trace import's cap).
const MAX_NAME_BYTES: usize = 128;
/// Most spans one attempt makes, its requests' and its own together.
const MAX_SPANS_PER_ATTEMPT: usize = taskbox::sandbox::MAX_SPANS_PER_ATTEMPT as usize;

const SCOPES: &[&str] = &["tasks:write", "jobs:queue", "jobs:read", "secrets:write"];

async fn put_secret(s: &TestServer, token: &str) {
    let (status, body) = s
        .call(
            Method::PUT,
            "/v1/secrets/API_KEY",
            token,
            Some(json!({ "value": KEY })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// A server with traces sent to a receiver of the test's, whose guests may
/// reach 127.0.0.1.
async fn traced_server() -> (TestServer, Spans) {
    let (otlp, exported) = receiver().await;
    let s = TestServer::start_with(2, |c| {
        c.network.allow_private = true;
        c.otlp = Some(
            taskbox::otel::OtlpEndpoint::parse(&otlp, taskbox::otel::OtlpProtocol::Http).unwrap(),
        );
    })
    .await;
    (s, exported)
}

/// The spans of the job's trace, once its attempt's span (sent after
/// every span its guest made) and `more` others have come.
async fn trace_of(exported: &Spans, job: &Value, task: &str, more: usize) -> (Vec<Span>, Span) {
    let trace = own_trace(job["id"].as_str().unwrap());
    let attempt_name = format!("attempt {task}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let spans = spans_of(exported, &trace, 3).await;
        if let Some(attempt) = spans.iter().find(|s| s.name == attempt_name) {
            if spans.len() >= 3 + more {
                let attempt = attempt.clone();
                return (spans, attempt);
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no attempt span and {more} more: {spans:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Every string a span carries: its name, its attributes', its events'
/// and its status message.
fn strings(span: &Span) -> Vec<String> {
    let mut out = vec![span.name.clone()];
    let attributes = span
        .attributes
        .iter()
        .chain(span.events.iter().flat_map(|e| &e.attributes));
    for a in attributes {
        out.push(a.key.clone());
        if let Some(Any::StringValue(v)) = a.value.as_ref().and_then(|v| v.value.as_ref()) {
            out.push(v.clone());
        }
    }
    out.extend(span.events.iter().map(|e| e.name.clone()));
    out.extend(span.status.iter().map(|s| s.message.clone()));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guests_methods_hosts_and_spans_reach_the_trace_bounded_and_redacted() {
    let (s, exported) = traced_server().await;
    let (port, _) = crate::common::host_keeping("traceparent", "ok").await;
    let acme = s.tenant("acme", SCOPES).await;
    put_secret(&s, &acme).await;
    s.task(
        &acme,
        "probe",
        "http-probe",
        json!({
            "network": {"allow": [format!("127.0.0.1:{port}")]},
            "secrets": ["API_KEY"],
        }),
    )
    .await;
    let long_method = "X".repeat(4096);
    let job = s
        .enqueue(
            &acme,
            json!({"task": "probe", "input": {
                "requests": [
                    {"method": long_method, "url": format!("http://127.0.0.1:{port}/long")},
                    {"method": KEY, "url": format!("http://127.0.0.1:{port}/secret-method")},
                    // Off the list, so refused: its span still names its host.
                    {"method": "GET", "url": format!("http://{KEY}.example/?key={KEY}")},
                    {"method": "PATCH", "url": format!("http://127.0.0.1:{port}/known")},
                ],
                "span": {"name": format!("charge {KEY}"),
                         "attributes": {"note": "n".repeat(5000), KEY: "as a name"},
                         "secret_attributes": {"key": "API_KEY"}, "event": KEY},
            }}),
        )
        .await;
    let done = s.finished(&acme, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    let results = &done["output"]["results"];
    assert_eq!(
        results[2]["error"], "HTTP-request-denied",
        "the secret's host is refused: {results}"
    );

    // enqueue, queued, attempt, four requests and the guest's span.
    let (spans, attempt) = trace_of(&exported, &job, "probe", 5).await;
    let requests: Vec<&Span> = spans
        .iter()
        .filter(|s| s.kind == SpanKind::Client as i32 && s.parent_span_id == attempt.span_id)
        .collect();
    assert_eq!(requests.len(), 4, "{spans:#?}");
    for r in &requests {
        assert!(
            NAMES.contains(&r.name.as_str()),
            "a request's span is named {:?} ({} bytes)",
            &r.name[..r.name.len().min(80)],
            r.name.len()
        );
    }
    let other: Vec<&&Span> = requests
        .iter()
        .filter(|r| text(r, "http.request.method") == Some("_OTHER"))
        .collect();
    assert_eq!(
        other.len(),
        2,
        "the long method and the secret: {requests:#?}"
    );
    for r in &other {
        assert_eq!(r.name, "HTTP");
        let original = text(r, "http.request.method_original").unwrap_or_default();
        assert!(
            original.len() <= MAX_NAME_BYTES,
            "the original method is kept whole: {} bytes",
            original.len()
        );
        assert!(
            original == "[redacted]" || original.chars().all(|c| c == 'X'),
            "{original}"
        );
    }
    let patch = requests.iter().find(|r| r.name == "PATCH").expect("PATCH");
    assert_eq!(text(patch, "http.request.method"), Some("PATCH"));
    assert_eq!(int(patch, "http.response.status_code"), Some(200));
    let refused = requests
        .iter()
        .find(|r| r.name == "GET")
        .expect("the refused request's span");
    assert_eq!(
        text(refused, "server.address"),
        Some("[redacted].example"),
        "{refused:#?}"
    );

    let charge = spans
        .iter()
        .find(|s| s.name.starts_with("charge"))
        .expect("the guest's span");
    assert_eq!(charge.name, "charge [redacted]");
    assert_eq!(text(charge, "key"), Some("[redacted]"));
    assert_eq!(text(charge, "[redacted]"), Some("as a name"));

    // Nothing of the secret, and nothing long, anywhere in the trace.
    for span in &spans {
        for s in strings(span) {
            assert!(!s.contains(KEY), "a span leaks the secret: {span:#?}");
            assert!(
                s.len() <= taskbox::otel::MAX_VALUE_BYTES,
                "a span carries {} bytes: {:?}…",
                s.len(),
                s.chars().take(80).collect::<String>()
            );
        }
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_makes_at_most_its_spans() {
    let (s, exported) = traced_server().await;
    let (port, got) = crate::common::host_keeping("traceparent", "ok").await;
    let acme = s.tenant("acme", SCOPES).await;
    s.task(
        &acme,
        "probe",
        "http-probe",
        json!({"network": {"allow": [format!("127.0.0.1:{port}")], "max_requests": 400}}),
    )
    .await;
    let made = MAX_SPANS_PER_ATTEMPT + 44;
    let job = s
        .enqueue(
            &acme,
            json!({"task": "probe", "input": {
                "span": {"name": "many"},
                "requests": [{"method": "GET", "url": format!("http://127.0.0.1:{port}/ok")}],
                "repeat": made,
            }}),
        )
        .await;
    let done = s.finished(&acme, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    let results = done["output"]["results"].as_array().unwrap();
    assert_eq!(results.len(), made);
    assert!(
        results.iter().all(|r| r["status"] == 200),
        "every request went out"
    );

    // The attempt's span comes after every span its guest made.
    let (spans, attempt) = trace_of(&exported, &job, "probe", 1).await;
    let under: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == attempt.span_id)
        .collect();
    assert!(
        under.len() <= MAX_SPANS_PER_ATTEMPT,
        "the attempt made {} spans, past the cap of {MAX_SPANS_PER_ATTEMPT}",
        under.len()
    );
    assert!(
        under.iter().any(|s| s.name == "many"),
        "the guest's own span came first, within the cap"
    );
    // Every request still carried a context of the job's trace: its own
    // span's while there was one, the attempt's past the cap.
    let trace = own_trace(job["id"].as_str().unwrap());
    let sent = got.lock().unwrap().clone();
    assert_eq!(sent.len(), made);
    assert!(
        sent.iter()
            .all(|t| t.as_deref().is_some_and(|t| t.contains(&trace))),
        "{sent:?}"
    );
    s.stop().await;
}

/// A request the host refuses for its address is `refused`, and takes one
/// of the attempt's `max_requests` like any other: at the limit (two), two
/// are refused for their address (obeyed); past it, the next is refused as
/// over the limit (violated).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_refused_for_its_address_is_counted_refused_and_toward_max_requests() {
    TestServer::each_backend(2, async |s: TestServer| {
        let (port, got) = crate::common::host_keeping("traceparent", "ok").await;
        let acme = s.tenant("acme", SCOPES).await;
        s.task(
            &acme,
            "probe",
            "http-probe",
            json!({"network": {"allow": [format!("127.0.0.1:{port}")], "max_requests": 2}}),
        )
        .await;
        let probe = |repeat: u32| {
            json!({"task": "probe", "input": {
                "requests": [{"method": "GET", "url": format!("http://127.0.0.1:{port}/ok")}],
                "repeat": repeat,
            }})
        };
        for (repeat, errors, over) in [
            (2, &["destination-IP-prohibited"; 2][..], false),
            (
                3,
                &[
                    "destination-IP-prohibited",
                    "destination-IP-prohibited",
                    "HTTP-request-denied",
                ][..],
                true,
            ),
        ] {
            let job = s.enqueue(&acme, probe(repeat)).await;
            let id = job["id"].as_str().unwrap();
            let done = s.finished(&acme, id).await;
            assert_eq!(done["status"], "completed", "{done:#}");
            let results = &done["output"]["results"];
            for (i, error) in errors.iter().enumerate() {
                assert_eq!(results[i]["error"], *error, "request {i}: {results}");
            }
            let attempts = s.attempts(&acme, id).await;
            let net = &attempts[0]["network"];
            assert_eq!(
                (net["requests"].as_u64(), net["refused"].as_u64()),
                (Some(0), Some(u64::from(repeat))),
                "nothing went out, each was refused: {net}"
            );
            let log = attempts[0]["log"].to_string();
            assert_eq!(log.contains("network.max_requests"), over, "{log}");
        }
        assert!(got.lock().unwrap().is_empty(), "the host heard nothing");
        s.stop().await;
    })
    .await;
}
