//! Traces over OTLP, received by a local OTLP/HTTP receiver that decodes
//! what the server exports: on both backends, every job is one trace — its
//! enqueue (continuing the client's `traceparent`, kept on the job), its
//! wait in the queue and its attempt (task, version, digest, tenant, fuel,
//! memory, outcome), the guest's outbound request (whose `traceparent`
//! the called host receives) and the guest's own span inside its attempt;
//! and nothing of a secret reaches a span. On the real binary,
//! `--otlp-endpoint` sends the same, and a bad endpoint is refused. A
//! workflow's stages are spans of their own, each over its attempts.

use crate::e2e::{Client, Served, ADMIN as E2E_ADMIN};
use crate::server::TestServer;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEY: &str = "sk_trace_93b1c7e2f04a";
/// The client's span an enqueue continues: the trace id of a job made
/// now (one of its own for each backend's run), and a fixed span.
fn client() -> (String, String) {
    let trace = own_trace(&taskbox::job::new_id());
    (format!("00-{trace}-{CLIENT_SPAN}-01"), trace)
}
const CLIENT_SPAN: &str = "b7ad6b7169203331";

pub(crate) type Spans = Arc<Mutex<Vec<(String, Span)>>>;

/// An OTLP/HTTP receiver on 127.0.0.1: every span it is sent, with the
/// `service.name` of its resource.
pub async fn receiver() -> (String, Spans) {
    let spans: Spans = Arc::default();
    let sink = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let sink = sink.clone();
            async move {
                let req = ExportTraceServiceRequest::decode(body).expect("an OTLP export");
                let mut sink = sink.lock().unwrap();
                for rs in req.resource_spans {
                    let service = rs
                        .resource
                        .iter()
                        .flat_map(|r| &r.attributes)
                        .find(|a| a.key == "service.name")
                        .and_then(|a| a.value.as_ref())
                        .and_then(|v| match &v.value {
                            Some(Any::StringValue(s)) => Some(s.clone()),
                            _ => None,
                        })
                        .unwrap_or_default();
                    for ss in rs.scope_spans {
                        for s in ss.spans {
                            sink.push((service.clone(), s));
                        }
                    }
                }
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, spans)
}

/// A host on 127.0.0.1 that keeps each request's `traceparent`.
async fn host() -> (u16, crate::common::Kept) {
    crate::common::host_keeping("traceparent", "ok").await
}

pub(crate) fn attr<'a>(s: &'a Span, key: &str) -> Option<&'a Any> {
    s.attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

pub(crate) fn text<'a>(s: &'a Span, key: &str) -> Option<&'a str> {
    match attr(s, key) {
        Some(Any::StringValue(v)) => Some(v),
        _ => None,
    }
}

pub(crate) fn int(s: &Span, key: &str) -> Option<i64> {
    match attr(s, key) {
        Some(Any::IntValue(v)) => Some(*v),
        _ => None,
    }
}

/// The spans of `trace` (hex), once there are at least `n` of them,
/// waiting up to 60 s for the exporter's batches.
pub(crate) async fn spans_of(spans: &Spans, trace: &str, n: usize) -> Vec<Span> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got: Vec<Span> = spans
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, s)| hex::encode(&s.trace_id) == trace)
            .map(|(_, s)| s.clone())
            .collect();
        if got.len() >= n {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "trace {trace} has {} spans, not {n}: {got:#?}",
            got.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) fn named<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one span {name:?} in {spans:#?}");
    found[0]
}

/// The trace id a job without a client's trace has: its id's 128 bits.
pub(crate) fn own_trace(job_id: &str) -> String {
    hex::encode(ulid::Ulid::from_string(job_id).unwrap().0.to_be_bytes())
}

/// The enqueue, wait and attempt of one job, each where it belongs.
fn check_job(spans: &[Span], job: &Value, task: &str, tenant: &str) -> (Span, Span) {
    let id = job["id"].as_str().unwrap();
    let enqueue = named(spans, "enqueue");
    let waited = named(spans, "queued");
    let attempt = named(spans, &format!("attempt {task}"));
    assert_eq!(text(enqueue, "taskbox.job.id"), Some(id));
    assert_eq!(text(enqueue, "taskbox.tenant"), Some(tenant));
    for s in [waited, attempt] {
        assert_eq!(
            s.parent_span_id, enqueue.span_id,
            "{} under the enqueue",
            s.name
        );
        assert_eq!(text(s, "taskbox.job.id"), Some(id));
    }
    assert!(waited.end_time_unix_nano <= attempt.start_time_unix_nano + 1_000_000);
    assert_eq!(text(attempt, "taskbox.task"), Some(task));
    assert_eq!(text(attempt, "taskbox.tenant"), Some(tenant));
    assert_eq!(
        text(attempt, "taskbox.digest"),
        job["task"]["digest"].as_str(),
        "{job}"
    );
    assert_eq!(int(attempt, "taskbox.task.version"), Some(1));
    assert_eq!(text(attempt, "taskbox.outcome"), Some("completed"));
    assert!(int(attempt, "taskbox.fuel").unwrap() > 0);
    assert!(int(attempt, "taskbox.memory.peak_bytes").unwrap() > 0);
    (enqueue.clone(), attempt.clone())
}

#[tokio::test]
async fn every_job_is_a_trace_with_its_attempt_its_requests_and_its_guests_spans() {
    let (otlp, exported) = receiver().await;
    TestServer::each_backend_with(
        2,
        |c| {
            c.network.allow_private = true;
            c.otlp = Some(
                taskbox::otel::OtlpEndpoint::parse(&otlp, taskbox::otel::OtlpProtocol::Http)
                    .unwrap(),
            );
        },
        async |s: TestServer| {
            let (port, got) = host().await;
            let scopes = ["tasks:write", "jobs:queue", "jobs:read", "secrets:write"];
            let acme = s.tenant(&format!("acme{port}"), &scopes).await;
            let tenant = format!("acme{port}");
            let (status, body) = s
                .call(
                    Method::PUT,
                    "/v1/secrets/API_KEY",
                    &acme,
                    Some(json!({"value": KEY})),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            s.task(&acme, "echo", "limits", json!({})).await;
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

            // A job of its own trace, and one continuing the client's.
            let (client, client_trace) = client();
            let own = s
                .enqueue(
                    &acme,
                    json!({"task": "echo", "input": {"op": "echo", "value": 1}}),
                )
                .await;
            let req = Request::post("/v1/jobs")
                .header("authorization", format!("Bearer {acme}"))
                .header("content-type", "application/json")
                .header("traceparent", &client)
                .body(Body::from(
                    json!({"task": "echo", "input": {"op": "echo", "value": 2}}).to_string(),
                ))
                .unwrap();
            let (status, continued) = s.raw(req).await;
            assert_eq!(status, StatusCode::CREATED, "{continued}");
            let kept = continued["traceparent"].as_str().unwrap();
            assert!(kept.starts_with(&format!("00-{client_trace}-")), "{kept}");
            assert!(!kept.contains(CLIENT_SPAN), "{kept}");
            // A traceparent that does not read starts a trace of its own.
            let req = Request::post("/v1/jobs")
                .header("authorization", format!("Bearer {acme}"))
                .header("content-type", "application/json")
                .header("traceparent", "00-zz-broken")
                .body(Body::from(
                    json!({"task": "echo", "input": {"op": "echo", "value": 3}}).to_string(),
                ))
                .unwrap();
            let (status, broken) = s.raw(req).await;
            assert_eq!(status, StatusCode::CREATED, "{broken}");
            assert!(broken.get("traceparent").is_none(), "{broken}");
            // A job that calls out and makes a span of its own, with the
            // secret among its attributes.
            let probe = s
                .enqueue(
                    &acme,
                    json!({"task": "probe", "input": {
                        "requests": [{"url": format!("http://127.0.0.1:{port}/x?key={KEY}")}],
                        "span": {"name": "charge", "attributes": {"order": "o-1"},
                                 "secret_attributes": {"key": "API_KEY"}, "event": "sent"},
                    }}),
                )
                .await;
            for job in [&own, &continued, &broken, &probe] {
                let done = s.finished(&acme, job["id"].as_str().unwrap()).await;
                assert_eq!(done["status"], "completed", "{done:#}");
            }

            let own_spans = spans_of(&exported, &own_trace(own["id"].as_str().unwrap()), 3).await;
            let (enqueue, _) = check_job(&own_spans, &own, "echo", &tenant);
            assert!(
                enqueue.parent_span_id.is_empty(),
                "the root of its own trace"
            );

            let cont_spans = spans_of(&exported, &client_trace, 3).await;
            let (enqueue, _) = check_job(&cont_spans, &continued, "echo", &tenant);
            assert_eq!(hex::encode(&enqueue.parent_span_id), CLIENT_SPAN);
            assert!(kept.contains(&hex::encode(&enqueue.span_id)), "{kept}");

            spans_of(&exported, &own_trace(broken["id"].as_str().unwrap()), 3).await;

            let probe_spans =
                spans_of(&exported, &own_trace(probe["id"].as_str().unwrap()), 5).await;
            let (_, attempt) = check_job(&probe_spans, &probe, "probe", &tenant);
            let get = named(&probe_spans, "GET");
            assert_eq!(
                get.parent_span_id, attempt.span_id,
                "the request is the attempt's"
            );
            assert_eq!(text(get, "server.address"), Some("127.0.0.1"));
            assert_eq!(int(get, "http.response.status_code"), Some(200));
            // The host got the request span's context.
            let sent = got.lock().unwrap().clone();
            let expected = format!(
                "00-{}-{}-01",
                hex::encode(&get.trace_id),
                hex::encode(&get.span_id)
            );
            assert_eq!(sent, [Some(expected)]);
            let charge = named(&probe_spans, "charge");
            assert_eq!(
                charge.parent_span_id, attempt.span_id,
                "the guest's span is the attempt's"
            );
            assert_eq!(text(charge, "order"), Some("o-1"));
            assert_eq!(text(charge, "key"), Some("[redacted]"));
            assert_eq!(charge.events.len(), 1);
            assert_eq!(charge.events[0].name, "sent");
            assert!(
                charge.start_time_unix_nano + 1_000_000 >= attempt.start_time_unix_nano,
                "{} {}",
                charge.start_time_unix_nano,
                attempt.start_time_unix_nano
            );

            // One trace per job, and nothing of the secret anywhere.
            let all = exported.lock().unwrap().clone();
            let mut traces: HashMap<String, HashSet<Vec<u8>>> = HashMap::new();
            for (service, span) in &all {
                assert_eq!(service, "taskbox");
                assert!(
                    !format!("{span:?}").contains(KEY),
                    "a span leaks the secret: {span:#?}"
                );
                if let Some(id) = text(span, "taskbox.job.id") {
                    traces
                        .entry(id.to_owned())
                        .or_default()
                        .insert(span.trace_id.clone());
                }
            }
            for job in [&own, &continued, &broken, &probe] {
                let id = job["id"].as_str().unwrap();
                assert_eq!(traces[id].len(), 1, "job {id} is one trace");
            }
            s.stop().await;
        },
    )
    .await;
}

#[tokio::test]
async fn traces_are_off_without_an_endpoint() {
    let (_, exported) = receiver().await;
    let s = TestServer::start(1).await;
    let t = s
        .tenant("quiet", &["tasks:write", "jobs:queue", "jobs:read"])
        .await;
    s.task(&t, "echo", "limits", json!({})).await;
    let job = s
        .enqueue(
            &t,
            json!({"task": "echo", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    let done = s.finished(&t, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed");
    assert!(done.get("traceparent").is_none());
    s.stop().await;
    assert!(exported.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_sends_traces_to_its_otlp_endpoint_and_refuses_a_bad_one() {
    let (otlp, exported) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &["--otlp-endpoint", &otlp], Some(E2E_ADMIN));
    let admin = Client::new(&served.url, E2E_ADMIN);
    admin.task("echo", "limits").await;
    let (status, job) = admin
        .post(
            "/v1/jobs",
            json!({"task": "echo", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    assert_eq!(status, 201, "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    let done = admin.until(&id, |j| j["status"] == "completed").await;
    assert_eq!(done["status"], "completed");
    let spans = spans_of(&exported, &own_trace(&id), 3).await;
    named(&spans, "attempt echo");
    drop(served);

    for (args, says) in [
        (vec!["--otlp-endpoint", "127.0.0.1:4318"], "--otlp-endpoint"),
        (
            vec!["--otlp-endpoint", "ftp://x/"],
            "not http:// or https://",
        ),
        (
            vec![
                "--otlp-endpoint",
                "https://c.example",
                "--otlp-protocol",
                "grpc",
            ],
            "--otlp-protocol http",
        ),
        (vec!["--otlp-protocol", "thrift"], "thrift"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_taskbox"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(&args)
            .env("TASKBOX_ADMIN_TOKEN", E2E_ADMIN)
            .arg("--data-dir")
            .arg(dir.path().join("bad"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[tokio::test]
async fn invokes_spawned_children_and_webhook_deliveries_are_in_the_jobs_trace() {
    let (otlp, exported) = receiver().await;
    TestServer::each_backend_with(
        2,
        |c| {
            c.webhooks.allow_private = true;
            c.otlp = Some(
                taskbox::otel::OtlpEndpoint::parse(&otlp, taskbox::otel::OtlpProtocol::Http)
                    .unwrap(),
            );
        },
        async |s: TestServer| {
            let (port, hooked) = host().await;
            let scopes = ["tasks:write", "jobs:queue", "jobs:read", "webhooks:write"];
            let t = s.tenant(&format!("orch{port}"), &scopes).await;
            let (status, body) = s
                .post(
                    "/v1/webhooks",
                    &t,
                    json!({"url": format!("http://127.0.0.1:{port}/hook"), "events": ["job.completed"]}),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            s.task(&t, "echo", "limits", json!({})).await;
            s.task(&t, "after", "noop", json!({})).await;
            s.task(&t, "orch", "orchestrator", json!({"on_success": "after"})).await;
            let job = s
                .enqueue(
                    &t,
                    json!({"task": "orch", "input": {"calls": [
                        {"invoke": "echo", "input": {"op": "echo", "value": 1}},
                        {"spawn": "echo", "input": {"op": "echo", "value": 2}},
                    ]}}),
                )
                .await;
            let id = job["id"].as_str().unwrap();
            let done = s.finished(&t, id).await;
            assert_eq!(done["status"], "completed", "{done:#}");
            let child_id = done["output"]["results"][1]["child"].as_str().unwrap().to_owned();
            let child = s.finished(&t, &child_id).await;
            assert_eq!(child["status"], "completed", "{child:#}");

            // The parent's three and its invoke, the child's three, its
            // callback's three, and a delivery of each one's completion:
            // one trace.
            let trace = own_trace(id);
            let spans = spans_of(&exported, &trace, 13).await;
            let attempt = named(&spans, "attempt orch");
            let invoke = named(&spans, "invoke echo");
            assert_eq!(invoke.parent_span_id, attempt.span_id);
            assert_eq!(text(invoke, "taskbox.outcome"), Some("completed"));
            let child_enqueue = spans
                .iter()
                .find(|s| s.name == "enqueue" && text(s, "taskbox.job.id") == Some(&child_id))
                .expect("the child's enqueue is in its parent's trace");
            assert_eq!(child_enqueue.parent_span_id, attempt.span_id);
            assert!(child["traceparent"].as_str().unwrap().contains(&trace), "{child}");
            assert_eq!(text(child_enqueue, "taskbox.enqueued_by"), Some("spawn"));
            let callback = spans
                .iter()
                .find(|s| s.name == "enqueue" && text(s, "taskbox.enqueued_by") == Some("callback"))
                .expect("the callback's enqueue is in the trace of the job that made it");
            assert_eq!(callback.parent_span_id, attempt.span_id);
            assert_eq!(text(callback, "taskbox.task"), Some("after"));
            named(&spans, "attempt after");
            let deliveries: Vec<&Span> =
                spans.iter().filter(|s| s.name == "webhook delivery").collect();
            assert_eq!(deliveries.len(), 3, "{deliveries:#?}");
            let enqueue = spans
                .iter()
                .find(|s| s.name == "enqueue" && text(s, "taskbox.job.id") == Some(id))
                .unwrap();
            let mine = deliveries
                .iter()
                .find(|d| text(d, "taskbox.job.id") == Some(id))
                .unwrap();
            assert_eq!(mine.parent_span_id, enqueue.span_id);
            assert_eq!(text(mine, "taskbox.event"), Some("job.completed"));
            assert_eq!(int(mine, "http.response.status_code"), Some(200));
            // Each POST carried its delivery span's context.
            let sent: HashSet<String> = hooked.lock().unwrap().iter().flatten().cloned().collect();
            for d in &deliveries {
                let tp = format!("00-{trace}-{}-01", hex::encode(&d.span_id));
                assert!(sent.contains(&tp), "{tp} not in {sent:?}");
            }
            s.stop().await;
        },
    )
    .await;
}

/// The spans of `name` (several: a stage's attempts).
fn all_named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

#[tokio::test]
async fn a_workflows_stages_are_spans_with_their_attempts_under_them() {
    let (otlp, exported) = receiver().await;
    TestServer::each_backend_with(
        2,
        |c| {
            c.otlp = Some(
                taskbox::otel::OtlpEndpoint::parse(&otlp, taskbox::otel::OtlpProtocol::Http)
                    .unwrap(),
            );
        },
        async |s: TestServer| {
            use crate::server::ADMIN;
            s.task(ADMIN, "echo", "limits", json!({})).await;
            s.task(ADMIN, "flaky", "flaky", json!({})).await;
            s.task(ADMIN, "alert", "noop", json!({})).await;
            let retry = |max: u32| json!({"max_attempts": max, "backoff": {"kind": "fixed", "delay_ms": 1}});
            let (status, body) = s
                .call(
                    Method::PUT,
                    "/v1/workflows/traced",
                    ADMIN,
                    Some(json!({
                        "steps": [
                            {"name": "first", "task": "echo"},
                            {"name": "middle", "task": "flaky", "retry": retry(3)},
                            {"name": "last", "task": "flaky", "retry": retry(1)},
                        ],
                        "on_error": [{"name": "tell", "task": "alert"}],
                    })),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            // `middle` succeeds on its second attempt; `last`, allowed one,
            // fails, and `on_error` runs.
            let input = json!({"op": "echo", "value": {"seen": 1}, "succeed_on_attempt": 2});
            let job = s
                .enqueue(ADMIN, json!({"workflow": "traced", "input": input}))
                .await;
            let id = job["id"].as_str().unwrap();
            let done = s.finished(ADMIN, id).await;
            assert_eq!(done["status"], "failed", "{done:#}");

            // The enqueue, five waits and five attempts, and four stages.
            let spans = spans_of(&exported, &own_trace(id), 15).await;
            assert_eq!(spans.len(), 15, "{spans:#?}");
            let enqueue = named(&spans, "enqueue");
            assert_eq!(all_named(&spans, "queued").len(), 5);
            let stages = [
                ("first", "step", "completed", 1, "echo"),
                ("middle", "step", "completed", 2, "flaky"),
                ("last", "step", "failed", 1, "flaky"),
                ("tell", "on_error", "completed", 1, "alert"),
            ];
            for (name, kind, status, attempts, task) in stages {
                let stage = named(&spans, &format!("step {name}"));
                assert_eq!(stage.parent_span_id, enqueue.span_id, "{name} under the enqueue");
                assert_eq!(text(stage, "taskbox.job.id"), Some(id));
                assert_eq!(text(stage, "taskbox.step.kind"), Some(kind));
                assert_eq!(text(stage, "taskbox.step.status"), Some(status), "{stage:#?}");
                assert_eq!(int(stage, "taskbox.step.attempts"), Some(attempts));
                assert_eq!(text(stage, "taskbox.task"), Some(task));
                // Its attempts, and only its, are under it, inside its time.
                let under: Vec<&Span> = spans
                    .iter()
                    .filter(|a| a.parent_span_id == stage.span_id)
                    .collect();
                assert_eq!(under.len() as i64, attempts, "{name}: {under:#?}");
                for a in under {
                    assert_eq!(a.name, format!("attempt {task}"));
                    assert_eq!(text(a, "taskbox.step"), Some(name));
                    assert!(stage.start_time_unix_nano <= a.start_time_unix_nano + 5_000_000);
                    assert!(stage.end_time_unix_nano >= a.end_time_unix_nano);
                }
            }
            let last = named(&spans, "step last");
            assert_eq!(text(last, "taskbox.error.code"), Some("not_yet"));
            assert_eq!(
                last.status.as_ref().map(|s| s.code),
                Some(opentelemetry_proto::tonic::trace::v1::status::StatusCode::Error as i32)
            );
            // What each attempt did to the job: the stage before the end
            // handed on, the last ended the job.
            let outcome = |a: &Span| text(a, "taskbox.outcome").map(str::to_owned);
            assert_eq!(
                outcome(named(&spans, "attempt echo")).as_deref(),
                Some("advanced")
            );
            let flaky: Vec<Option<String>> =
                all_named(&spans, "attempt flaky").into_iter().map(outcome).collect();
            assert_eq!(flaky.iter().filter(|o| o.as_deref() == Some("retry")).count(), 1);
            assert_eq!(flaky.iter().filter(|o| o.as_deref() == Some("advanced")).count(), 2);
            assert_eq!(
                outcome(named(&spans, "attempt alert")).as_deref(),
                Some("concluded")
            );
            s.stop().await;
        },
    )
    .await;
}
