//! Guests' outbound HTTP (`wasi:http`) against a real server on 127.0.0.1,
//! through the `http-probe` guest: what a task's grant lets out, what the
//! host refuses (hosts off the list, the server's own addresses, requests
//! past the budget), redirects left unfollowed, a stalled server cut off at
//! the attempt's deadline, response bodies capped, the tenant's connection
//! cap, and secrets read through `wasi:config/store` and redacted from
//! everything the attempt leaves; and the same through the Rust guest SDK
//! (`sdk-tour`), as a task author writes it.

use crate::common::{expect_done, guest, job, roomy, small_sandbox};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use taskbox::job::ErrorKind;
use taskbox::sandbox::{
    AttemptReport, AttemptRequest, Ending, Limits, NetworkConfig, NetworkGrant, Sandbox,
    SandboxConfig,
};

/// What the origin server got: path and headers of each request.
#[derive(Clone, Default)]
pub(crate) struct Seen(pub(crate) Arc<Mutex<Vec<(String, HeaderMap)>>>);

impl Seen {
    pub(crate) fn paths(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }

    pub(crate) fn header(&self, path: &str, name: &str) -> Option<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, h)| h.get(name)?.to_str().ok().map(str::to_owned))
    }
}

/// An origin on 127.0.0.1: `/ok` answers, `/redirect?to=` redirects,
/// `/big?n=` answers n bytes with a length, `/stream?n=` n bytes without
/// one, `/stall` never answers. Answers its port and what it saw.
pub(crate) async fn origin() -> (u16, Seen) {
    async fn record(
        State(seen): State<Seen>,
        uri: axum::http::Uri,
        headers: HeaderMap,
    ) -> Response {
        seen.0
            .lock()
            .unwrap()
            .push((uri.path().to_owned(), headers));
        let q: HashMap<String, String> = uri
            .query()
            .map(|q| {
                url::form_urlencoded::parse(q.as_bytes())
                    .into_owned()
                    .collect()
            })
            .unwrap_or_default();
        let n = q
            .get("n")
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        match uri.path() {
            "/ok" => (StatusCode::OK, "hello from the origin").into_response(),
            "/redirect" => (
                StatusCode::FOUND,
                [("location", q.get("to").cloned().unwrap_or_default())],
                "",
            )
                .into_response(),
            "/big" => (StatusCode::OK, "b".repeat(n)).into_response(),
            "/stream" => {
                let chunks = futures_util::stream::iter(
                    (0..n.div_ceil(1000))
                        .map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b's'; 1000]))),
                );
                axum::body::Body::from_stream(chunks).into_response()
            }
            "/stall" => std::future::pending().await,
            _ => StatusCode::NOT_FOUND.into_response(),
        }
    }
    let seen = Seen::default();
    let app = axum::Router::new()
        .fallback(record)
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, seen)
}

/// A sandbox whose guests may reach private addresses when listed, with
/// one connection per tenant so the cap can be met.
fn open_sandbox() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| {
        small_sandbox(SandboxConfig {
            network: NetworkConfig {
                allow_private: true,
                max_connections_per_tenant: 1,
                ..NetworkConfig::default()
            },
            ..SandboxConfig::default()
        })
    })
}

/// A sandbox as a server runs by default: its own networks closed.
fn closed_sandbox() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| small_sandbox(SandboxConfig::default()))
}

fn grant(
    allow: &[&str],
    max_requests: Option<u32>,
    max_response_bytes: Option<u64>,
) -> Arc<NetworkGrant> {
    let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
    Arc::new(
        NetworkGrant::resolve(
            &allow,
            max_requests,
            max_response_bytes,
            &NetworkConfig::default(),
        )
        .unwrap(),
    )
}

struct Probe {
    input: Value,
    network: Option<Arc<NetworkGrant>>,
    secrets: Vec<(String, String)>,
    tenant: &'static str,
    limits: Limits,
}

impl Probe {
    fn new(input: Value) -> Probe {
        Probe {
            input,
            network: None,
            secrets: Vec::new(),
            tenant: "acme",
            limits: roomy(),
        }
    }

    async fn run(self, sandbox: &Sandbox) -> AttemptReport {
        self.run_guest(sandbox, "http-probe").await
    }

    async fn run_guest(self, sandbox: &Sandbox, name: &str) -> AttemptReport {
        let program = sandbox
            .load("test", &guest(name))
            .await
            .unwrap_or_else(|e| panic!("{name} loads: {e}"));
        let mut req = AttemptRequest::new(job(1), self.input.to_string(), self.limits);
        req.network = self.network;
        req.secrets = self.secrets;
        req.tenant = Arc::from(self.tenant);
        sandbox.run(&program, req).await
    }
}

fn get(url: String) -> Value {
    json!({"requests": [{"method": "GET", "url": url}]})
}

/// The guest's result of its `i`th request.
#[track_caller]
fn result(report: &AttemptReport, i: usize) -> Value {
    expect_done(report)["results"][i].clone()
}

fn log_text(report: &AttemptReport) -> String {
    report
        .log
        .lines
        .iter()
        .map(|l| l.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn an_allowed_host_answers_the_guest_and_the_attempt_counts_it() {
    let (port, seen) = origin().await;
    let mut p = Probe::new(get(format!("http://127.0.0.1:{port}/ok")));
    p.network = Some(grant(&[&format!("127.0.0.1:{port}")], None, None));
    let report = p.run(open_sandbox()).await;
    let r = result(&report, 0);
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["body"], "hello from the origin");
    assert_eq!(seen.paths(), ["/ok"]);
    assert_eq!(report.network.requests, 1);
    assert_eq!(report.network.refused, 0);
    assert_eq!(report.network.bytes_received, 21);
}

#[tokio::test]
async fn a_host_off_the_list_is_refused_and_never_reached() {
    let (port, seen) = origin().await;
    let mut p = Probe::new(get(format!("http://127.0.0.1:{port}/ok")));
    p.network = Some(grant(
        &[
            "api.example.com",
            &format!("127.0.0.1:{}", port.wrapping_add(1)),
        ],
        None,
        None,
    ));
    let report = p.run(open_sandbox()).await;
    let r = result(&report, 0);
    assert_eq!(r["error"], "HTTP-request-denied", "{r}");
    assert!(seen.paths().is_empty(), "the origin saw {:?}", seen.paths());
    assert!(
        log_text(&report).contains(&format!(
            "127.0.0.1:{port} is not in the task's network.allow"
        )),
        "{}",
        log_text(&report)
    );
    assert_eq!((report.network.requests, report.network.refused), (0, 1));

    // Without a grant, every request is refused the same way.
    let report = Probe::new(get(format!("http://127.0.0.1:{port}/ok")))
        .run(open_sandbox())
        .await;
    assert_eq!(result(&report, 0)["error"], "HTTP-request-denied");
    assert!(log_text(&report).contains("grants no network access"));
    assert!(seen.paths().is_empty());
}

#[tokio::test]
async fn the_servers_own_addresses_are_refused_even_when_listed() {
    let (port, seen) = origin().await;
    let urls = [
        format!("http://127.0.0.1:{port}/ok"),
        format!("http://localhost:{port}/ok"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        format!("http://[::1]:{port}/ok"),
    ];
    let mut p = Probe::new(json!({
        "requests": urls.iter().map(|u| json!({"method": "GET", "url": u})).collect::<Vec<_>>()
    }));
    p.network = Some(grant(
        &[
            &format!("127.0.0.1:{port}"),
            &format!("localhost:{port}"),
            "169.254.169.254",
            &format!("[::1]:{port}"),
        ],
        None,
        None,
    ));
    let report = p.run(closed_sandbox()).await;
    for (i, url) in urls.iter().enumerate() {
        let r = result(&report, i);
        assert_eq!(r["error"], "destination-IP-prohibited", "{url}: {r}");
    }
    assert!(seen.paths().is_empty(), "the origin saw {:?}", seen.paths());
    let log = log_text(&report);
    assert!(log.contains("a loopback address"), "{log}");
    assert!(log.contains("a link-local address"), "{log}");
    assert!(log.contains("--outbound-allow-private"), "{log}");
}

#[tokio::test]
async fn a_redirect_is_an_answer_and_is_not_followed() {
    let (port, seen) = origin().await;
    let (other, other_seen) = origin().await;
    let to = format!("http://127.0.0.1:{other}/ok");
    let mut p = Probe::new(get(format!(
        "http://127.0.0.1:{port}/redirect?to={}",
        url::form_urlencoded::byte_serialize(to.as_bytes()).collect::<String>()
    )));
    p.network = Some(grant(&[&format!("127.0.0.1:{port}")], None, None));
    let report = p.run(open_sandbox()).await;
    let r = result(&report, 0);
    assert_eq!(r["status"], 302, "{r}");
    assert_eq!(r["headers"]["location"], to.as_str());
    assert_eq!(seen.paths(), ["/redirect"]);
    assert!(other_seen.paths().is_empty(), "the host did not follow it");
}

#[tokio::test]
async fn a_stalled_server_ends_the_attempt_at_its_deadline() {
    let (port, seen) = origin().await;
    let mut p = Probe::new(get(format!("http://127.0.0.1:{port}/stall")));
    p.network = Some(grant(&[&format!("127.0.0.1:{port}")], None, None));
    p.tenant = "stall";
    p.limits = Limits {
        timeout_ms: 1_500,
        ..roomy()
    };
    let report = p.run(open_sandbox()).await;
    match &report.ending {
        Ending::Failed(e) => assert_eq!(e.kind, ErrorKind::Timeout, "{e:?}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    // Not a timing claim: without the deadline the host's first-byte
    // timeout (30 s) would have ended the wait, much later.
    assert!(
        report.duration < NetworkConfig::default().first_byte_timeout / 2,
        "{:?}",
        report.duration
    );
    assert_eq!(seen.paths(), ["/stall"]);
}

#[tokio::test]
async fn a_response_over_the_cap_is_an_error_to_the_guest() {
    let (port, _seen) = origin().await;
    let base = format!("http://127.0.0.1:{port}");
    let mut p = Probe::new(json!({"requests": [
        {"method": "GET", "url": format!("{base}/big?n=5000")},
        {"method": "GET", "url": format!("{base}/stream?n=5000")},
        {"method": "GET", "url": format!("{base}/big?n=1000")},
    ]}));
    p.network = Some(grant(&[&format!("127.0.0.1:{port}")], None, Some(1000)));
    let report = p.run(open_sandbox()).await;
    let declared = result(&report, 0);
    assert_eq!(declared["error"], "HTTP-response-body-size", "{declared}");
    let streamed = result(&report, 1);
    assert_eq!(streamed["stage"], "body", "{streamed}");
    assert!(
        streamed["detail"]
            .as_str()
            .unwrap_or("")
            .contains("size exceeds limit"),
        "{streamed}"
    );
    assert_eq!(result(&report, 2)["body_len"], 1000, "at the cap is fine");
}

#[tokio::test]
async fn a_task_makes_at_most_its_max_requests() {
    let (port, seen) = origin().await;
    let mut p = Probe::new(json!({
        "requests": [{"method": "GET", "url": format!("http://127.0.0.1:{port}/ok")}],
        "repeat": 3
    }));
    p.network = Some(grant(&[&format!("127.0.0.1:{port}")], Some(2), None));
    let report = p.run(open_sandbox()).await;
    assert_eq!(result(&report, 0)["status"], 200);
    assert_eq!(result(&report, 1)["status"], 200);
    assert_eq!(result(&report, 2)["error"], "HTTP-request-denied");
    assert_eq!(seen.paths().len(), 2);
    assert!(log_text(&report).contains("network.max_requests"));
}

#[tokio::test]
async fn a_tenant_holds_at_most_its_connections_and_others_do_not_wait() {
    let (port, origin_seen) = origin().await;
    let allow = format!("127.0.0.1:{port}");
    // Holds the tenant's one connection until its deadline.
    let mut holder = Probe::new(get(format!("http://127.0.0.1:{port}/stall")));
    holder.network = Some(grant(&[&allow], None, None));
    holder.tenant = "capped";
    holder.limits = Limits {
        timeout_ms: 4_000,
        ..roomy()
    };
    let (port2, seen) = (port, origin_seen.clone());
    let second = async move {
        // Wait until the holder's request reached the origin.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !seen.paths().iter().any(|p| p == "/stall") {
            assert!(
                std::time::Instant::now() < deadline,
                "the holder never connected"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut same = Probe::new(json!({"requests": [{
            "method": "GET", "url": format!("http://127.0.0.1:{port2}/ok"), "connect_timeout_ms": 300
        }]}));
        same.network = Some(grant(&[&format!("127.0.0.1:{port2}")], None, None));
        same.tenant = "capped";
        let same = same.run(open_sandbox()).await;
        let mut other = Probe::new(get(format!("http://127.0.0.1:{port2}/ok")));
        other.network = Some(grant(&[&format!("127.0.0.1:{port2}")], None, None));
        other.tenant = "someone-else";
        let other = other.run(open_sandbox()).await;
        (same, other)
    };
    let (held, (same, other)) = tokio::join!(holder.run(open_sandbox()), second);
    assert!(matches!(&held.ending, Ending::Failed(e) if e.kind == ErrorKind::Timeout));
    let r = result(&same, 0);
    assert_eq!(r["error"], "connection-limit-reached", "{r}");
    assert!(log_text(&same).contains("--outbound-max-connections-per-tenant"));
    assert_eq!(
        result(&other, 0)["status"],
        200,
        "another tenant is not held up"
    );
    // The request's task is aborted when the attempt's store goes; the
    // slot comes back as that task is dropped, a moment later.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while open_sandbox().open_connections("capped") != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the slot was never given back"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

const SECRET: &str = "sk_live_5f2a9c81d7e04b3a";

#[tokio::test]
async fn a_secret_reaches_the_server_and_is_redacted_from_the_log() {
    let (port, seen) = origin().await;
    let mut p = Probe::new(json!({
        "requests": [{"method": "GET", "url": format!("http://127.0.0.1:{port}/ok"),
                      "secret_headers": {"x-api-key": "API_KEY"}}],
        "read_secrets": ["API_KEY", "NOT_DECLARED"],
        "print_secrets": ["API_KEY"],
    }));
    p.network = Some(grant(&[&format!("127.0.0.1:{port}")], None, None));
    p.secrets = vec![("API_KEY".into(), SECRET.into())];
    let report = p.run(open_sandbox()).await;
    let out = expect_done(&report);
    assert_eq!(out["results"][0]["status"], 200, "{out}");
    assert_eq!(seen.header("/ok", "x-api-key").as_deref(), Some(SECRET));
    assert_eq!(out["secrets"]["API_KEY"]["present"], true);
    assert_eq!(out["secrets"]["NOT_DECLARED"]["present"], false);
    let log = log_text(&report);
    assert!(!log.contains(SECRET), "the log leaks the secret:\n{log}");
    let marked = report
        .log
        .lines
        .iter()
        .filter(|l| l.message.contains("secret API_KEY = [redacted]"))
        .count();
    assert_eq!(
        marked, 3,
        "stdout, stderr and the host log each redacted:\n{log}"
    );
}

#[tokio::test]
async fn a_secret_in_a_failure_message_is_redacted() {
    let mut p = Probe::new(json!({"fail_with_secret": "API_KEY"}));
    p.secrets = vec![("API_KEY".into(), SECRET.into())];
    let report = p.run(open_sandbox()).await;
    match &report.ending {
        Ending::Failed(e) => {
            assert_eq!(e.code, "leak");
            assert!(!e.message.contains(SECRET), "{e:?}");
            assert!(e.message.contains("[redacted]"), "{e:?}");
        }
        other => panic!("expected the guest's failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_javascript_task_fetches_through_the_same_checks() {
    let (port, seen) = origin().await;
    let program = open_sandbox()
        .load("test", &guest("js-fetch"))
        .await
        .expect("js-fetch loads");
    let run = |url: String, allow: Option<Arc<NetworkGrant>>| {
        let program = program.clone();
        async move {
            let mut req = AttemptRequest::new(job(1), json!({ "url": url }).to_string(), roomy());
            req.network = allow;
            open_sandbox().run(&program, req).await
        }
    };
    let report = run(
        format!("http://127.0.0.1:{port}/ok"),
        Some(grant(&[&format!("127.0.0.1:{port}")], None, None)),
    )
    .await;
    let out = expect_done(&report);
    assert_eq!(
        (out["status"].as_u64(), out["body"].as_str()),
        (Some(200), Some("hello from the origin"))
    );
    assert_eq!(report.network.requests, 1);
    let refused = run(format!("http://127.0.0.1:{port}/ok"), None).await;
    let e = crate::common::expect_guest_failure(&refused, "fetch_failed", true);
    assert!(!e.message.is_empty());
    assert!(log_text(&refused).contains("grants no network access"));
    assert_eq!(
        seen.paths(),
        ["/ok"],
        "the refused fetch never reached the origin"
    );
}

#[tokio::test]
async fn the_signed_webhook_example_signs_with_its_secret() {
    use hmac::Mac;
    let received = Arc::new(Mutex::new(None::<(HeaderMap, bytes::Bytes)>));
    let sink = received.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: bytes::Bytes| {
            let sink = sink.clone();
            async move {
                *sink.lock().unwrap() = Some((headers, body));
                StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let program = open_sandbox()
        .load("test", &guest("signed-webhook"))
        .await
        .unwrap();
    let input = json!({"url": format!("http://127.0.0.1:{port}/hook"), "event": {"order": 42}});
    let mut req = AttemptRequest::new(job(1), input.to_string(), roomy());
    req.network = Some(grant(&[&format!("127.0.0.1:{port}")], None, None));
    req.secrets = vec![("WEBHOOK_SECRET".into(), SECRET.into())];
    let report = open_sandbox().run(&program, req).await;
    assert_eq!(expect_done(&report)["status"], 204);
    let (headers, body) = received
        .lock()
        .unwrap()
        .clone()
        .expect("the hook got the event");
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(&body);
    let want = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    assert_eq!(headers["x-signature"].to_str().unwrap(), want);
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap(),
        json!({"order": 42})
    );

    // Without the secret it says what to do.
    let mut req = AttemptRequest::new(job(1), input.to_string(), roomy());
    req.network = Some(grant(&[&format!("127.0.0.1:{port}")], None, None));
    let report = open_sandbox().run(&program, req).await;
    let e = crate::common::expect_guest_failure(&report, "missing_secret", false);
    assert!(
        e.message.contains("PUT /v1/secrets/WEBHOOK_SECRET"),
        "{e:?}"
    );
}

/// The Rust SDK's secret and HTTP client, through the same checks: a GET with the secret as
/// a header and a POST whose body outgrows one write, then the SDK's failures.
#[tokio::test]
async fn the_rust_sdk_reads_a_secret_and_calls_out_through_the_same_checks() {
    let (port, seen) = origin().await;
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let tour = |input: Value| {
        let mut p = Probe::new(input);
        p.network = Some(grant(&[&format!("127.0.0.1:{port}")], None, None));
        p.secrets = vec![("API_KEY".into(), SECRET.into())];
        p
    };

    let report = tour(json!({"url": url("/ok"), "secret": "API_KEY", "post_bytes": 300_000}))
        .run_guest(open_sandbox(), "sdk-tour")
        .await;
    let out = expect_done(&report);
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(out["body"], "hello from the origin");
    assert_eq!(out["secret_len"], SECRET.len());
    assert_eq!(out["posted"], 300_000);
    assert_eq!(out["attempt"], 1);
    assert_eq!(seen.header("/ok", "x-api-key").as_deref(), Some(SECRET));
    assert_eq!(seen.paths(), ["/ok", "/ok"], "a GET, then a POST");
    assert_eq!(report.network.requests, 2, "{:?}", report.network);

    let failure = |report: &AttemptReport| match &report.ending {
        Ending::Failed(e) => (e.code.clone(), e.retryable),
        other => panic!("expected the guest's failure, got {other:?}"),
    };
    let cases = [
        (json!({"url": url("/nope")}), "http_404", false),
        (
            json!({"url": url("/ok"), "secret": "NOT_SET"}),
            "missing_secret",
            false,
        ),
        (
            json!({"url": "http://example.invalid/"}),
            "http_denied",
            false,
        ),
        (json!({"url": 7}), "bad_input", false),
    ];
    for (input, code, retryable) in cases {
        let report = tour(input.clone())
            .run_guest(open_sandbox(), "sdk-tour")
            .await;
        assert_eq!(
            failure(&report),
            (code.to_owned(), Some(retryable)),
            "{input}"
        );
    }
}
