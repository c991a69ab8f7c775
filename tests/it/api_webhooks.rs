//! Webhooks through the API against a real endpoint on this machine: a
//! delivery the endpoint refuses three times arrives, signed, on the
//! fourth; one that never arrives is dead and listed so; private targets
//! refused unless the server allows them; scopes, tenants and the bound
//! on webhooks. Callbacks too: a task's on_success and on_fail.

use crate::server::{TestServer, ALL_SCOPES};
use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use taskbox::webhooks::sign;

/// A request the endpoint got: its headers and body.
#[derive(Debug, Clone)]
struct Got {
    headers: HeaderMap,
    body: String,
}

/// An HTTP endpoint on 127.0.0.1 that answers 500 to its first `fail`
/// requests, then 200, and keeps what it got.
struct Endpoint {
    url: String,
    got: Arc<Mutex<Vec<Got>>>,
}

impl Endpoint {
    async fn start(fail: usize) -> Endpoint {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: String| {
                let sink = sink.clone();
                async move {
                    let mut g = sink.lock().unwrap();
                    g.push(Got { headers, body });
                    if g.len() <= fail {
                        StatusCode::INTERNAL_SERVER_ERROR
                    } else {
                        StatusCode::OK
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Endpoint {
            url: format!("http://{addr}/hook"),
            got,
        }
    }

    /// Waits until it got `n` requests; what it got.
    async fn wait_for(&self, n: usize) -> Vec<Got> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.got.lock().unwrap().clone();
            if got.len() >= n {
                return got;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the endpoint got {} of {n} requests",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// A server whose webhooks may reach this machine, retrying after 20 ms.
async fn server() -> TestServer {
    TestServer::start_with(2, |c| {
        c.webhooks.allow_private = true;
        c.webhooks.backoff_ms = 20;
    })
    .await
}

async fn deliveries(s: &TestServer, token: &str, hook: &str) -> Vec<Value> {
    let (status, body) = s
        .get(&format!("/v1/webhooks/{hook}/deliveries"), token)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["deliveries"].as_array().unwrap().clone()
}

/// Polls the webhook's deliveries until `done` holds of them.
async fn deliveries_until(
    s: &TestServer,
    token: &str,
    hook: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let d = deliveries(s, token, hook).await;
        if done(&d) {
            return d;
        }
        assert!(tokio::time::Instant::now() < deadline, "{d:#?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn an_endpoint_that_fails_three_times_gets_the_event_on_the_fourth_try() {
    let s = server().await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    s.task(&t, "echo", "noop", json!({})).await;
    let endpoint = Endpoint::start(3).await;
    let (status, hook) = s
        .post(
            "/v1/webhooks",
            &t,
            json!({"url": endpoint.url, "events": ["job.completed"]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hook}");
    let secret = hook["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"));
    let id = hook["id"].as_str().unwrap();
    let job = s.enqueue(&t, json!({"task": "echo"})).await;
    let job = job["id"].as_str().unwrap();
    let got = endpoint.wait_for(4).await;
    // The fourth try is the last: the endpoint answered it 200.
    let d = deliveries_until(&s, &t, id, |d| {
        d.len() == 1 && d[0]["status"] == "delivered"
    })
    .await;
    assert_eq!(d[0]["attempts"], 4, "{d:#?}");
    assert_eq!(d[0]["last_status"], 200);
    assert_eq!(d[0]["type"], "job.completed");
    assert_eq!(
        endpoint.got.lock().unwrap().len(),
        4,
        "no try after the 2xx"
    );
    // Four tries of one delivery: the same body, each signed.
    let now = chrono::Utc::now().timestamp();
    for g in &got {
        assert_eq!(g.body, got[0].body);
        assert_eq!(g.headers["taskbox-event"], "job.completed");
        assert_eq!(
            g.headers["taskbox-delivery"],
            got[0].headers["taskbox-delivery"]
        );
        assert_eq!(g.headers["content-type"], "application/json");
        let sig = g.headers[sign::HEADER].to_str().unwrap();
        assert!(
            sign::verify(&secret, sig, g.body.as_bytes(), now, 300),
            "{sig}"
        );
        assert!(!sign::verify(
            "not-the-secret-at-all",
            sig,
            g.body.as_bytes(),
            now,
            300
        ));
    }
    let event: Value = serde_json::from_str(&got[0].body).unwrap();
    assert_eq!(event["type"], "job.completed");
    assert_eq!(event["job"]["id"], job);
    assert_eq!(event["job"]["task"], "echo");
    s.stop().await;
}

#[tokio::test]
async fn a_delivery_that_never_arrives_is_dead_and_listed() {
    let s = TestServer::start_with(2, |c| {
        c.webhooks.allow_private = true;
        c.webhooks.backoff_ms = 5;
        c.webhooks.give_up_ms = 200;
    })
    .await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    s.task(&t, "echo", "noop", json!({})).await;
    // Nothing listens on the port a listener just gave back.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (status, hook) = s
        .post(
            "/v1/webhooks",
            &t,
            json!({"url": format!("http://127.0.0.1:{port}/"), "events": ["*"], "secret": "a-secret-of-my-own"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hook}");
    assert_eq!(hook["secret"], "a-secret-of-my-own");
    assert_eq!(
        hook["events"].as_array().unwrap().len(),
        taskbox::events::EventType::ALL.len()
    );
    let id = hook["id"].as_str().unwrap();
    s.enqueue(&t, json!({"task": "echo"})).await;
    let d = deliveries_until(&s, &t, id, |d| {
        d.len() == 3 && d.iter().all(|d| d["status"] == "dead")
    })
    .await;
    for d in &d {
        assert!(d["attempts"].as_u64().unwrap() >= 1, "{d}");
        assert!(d["last_error"].as_str().unwrap().contains("connect"), "{d}");
        assert_eq!(d["next_at"], Value::Null);
    }
    let types: Vec<&str> = d
        .iter()
        .rev()
        .map(|d| d["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["job.queued", "job.started", "job.completed"]);
    // Paged, newest first.
    let (_, page) = s
        .get(&format!("/v1/webhooks/{id}/deliveries?limit=2"), &t)
        .await;
    let next = page["next_cursor"].as_i64().unwrap();
    let (_, rest) = s
        .get(
            &format!("/v1/webhooks/{id}/deliveries?limit=2&cursor={next}"),
            &t,
        )
        .await;
    assert_eq!(rest["deliveries"][0]["type"], "job.queued");
    assert_eq!(rest["next_cursor"], Value::Null);
    s.stop().await;
}

#[tokio::test]
async fn webhooks_are_checked_scoped_and_bounded() {
    let s = TestServer::start(1).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    let other = s.tenant("other", ALL_SCOPES).await;
    let post = |body: Value| {
        let (s, t) = (&s, t.clone());
        async move { s.post("/v1/webhooks", &t, body).await }
    };
    for (url, says) in [
        ("http://127.0.0.1:8080/hook", "--webhook-allow-private"),
        ("http://10.0.0.1/hook", "private"),
        ("http://169.254.169.254/latest", "link-local"),
        ("http://localhost/hook", "loopback"),
        ("ftp://example.com/hook", "http://"),
        ("https://u:p@example.com/hook", "password"),
    ] {
        let (status, body) = post(json!({"url": url, "events": ["*"]})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{url}: {message}");
    }
    let (status, body) = post(json!({"url": "https://example.com/", "events": ["job.done"]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("job.completed"));
    let (status, _) = post(json!({"url": "https://example.com/", "events": []})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) =
        post(json!({"url": "https://example.com/", "events": ["*"], "secret": "short"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) =
        post(json!({"url": "https://example.com/", "events": ["*"], "colour": "red"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // A token without webhooks:write manages none.
    let reader = s.token("acme", &["jobs:read", "jobs:queue"]).await;
    let (status, _) = s.get("/v1/webhooks", &reader).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Made with an IP literal (no name to resolve): up to the bound.
    let mut ids = Vec::new();
    for i in 0..taskbox::store::MAX_WEBHOOKS {
        let (status, body) =
            post(json!({"url": format!("https://93.184.216.34/{i}"), "events": ["job.failed"]}))
                .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(body["secret"].is_string());
        ids.push(body["id"].as_str().unwrap().to_owned());
    }
    let (status, body) = post(json!({"url": "https://93.184.216.34/x", "events": ["*"]})).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["details"]["quota"], "webhooks");
    let (_, listed) = s.get("/v1/webhooks", &t).await;
    let listed = listed["webhooks"].as_array().unwrap();
    assert_eq!(listed.len(), ids.len());
    assert!(
        listed.iter().all(|w| w.get("secret").is_none()),
        "secrets are shown once"
    );
    // Another tenant neither sees nor deletes them.
    let (_, theirs) = s.get("/v1/webhooks", &other).await;
    assert!(theirs["webhooks"].as_array().unwrap().is_empty());
    let (status, body) = s
        .call(
            Method::DELETE,
            &format!("/v1/webhooks/{}", ids[0]),
            &other,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], "WEBHOOK_NOT_FOUND");
    let (status, _) = s
        .get(&format!("/v1/webhooks/{}/deliveries", ids[0]), &other)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = s
        .call(
            Method::DELETE,
            &format!("/v1/webhooks/{}", ids[0]),
            &t,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = s
        .call(
            Method::DELETE,
            &format!("/v1/webhooks/{}", ids[0]),
            &t,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    s.stop().await;
}

#[tokio::test]
async fn a_webhook_gets_its_tenants_events_of_its_types_from_when_it_was_made() {
    let s = server().await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    let other = s.tenant("other", ALL_SCOPES).await;
    s.task(&t, "echo", "noop", json!({})).await;
    s.task(&t, "flaky", "flaky", json!({"retry": {"max_attempts": 1}}))
        .await;
    s.task(&other, "echo", "noop", json!({})).await;
    let before = s
        .enqueue(
            &t,
            json!({"task": "flaky", "input": {"succeed_on_attempt": 2}}),
        )
        .await;
    let failed = s.finished(&t, before["id"].as_str().unwrap()).await;
    // A webhook gets the events from the millisecond it was made in on:
    // made in the one the failure ended in, it would get that failure.
    let ended = chrono::DateTime::parse_from_rfc3339(failed["finished_at"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    while chrono::Utc::now().timestamp_millis() <= ended {
        tokio::task::yield_now().await;
    }
    let endpoint = Endpoint::start(0).await;
    let (_, hook) = s
        .post(
            "/v1/webhooks",
            &t,
            json!({"url": endpoint.url, "events": ["job.failed"]}),
        )
        .await;
    let id = hook["id"].as_str().unwrap();
    s.enqueue(&other, json!({"task": "echo"})).await;
    s.enqueue(&t, json!({"task": "echo"})).await;
    let bad = s
        .enqueue(
            &t,
            json!({"task": "flaky", "input": {"succeed_on_attempt": 2}}),
        )
        .await;
    let bad = bad["id"].as_str().unwrap();
    let got = endpoint.wait_for(1).await;
    let event: Value = serde_json::from_str(&got[0].body).unwrap();
    assert_eq!(event["job"]["id"], bad);
    assert_eq!(event["will_retry"], false);
    // Only that one: the other tenant's, the completions, and the failure
    // before the webhook was made are not its.
    let d = deliveries_until(&s, &t, id, |d| d.iter().all(|d| d["status"] == "delivered")).await;
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(endpoint.got.lock().unwrap().len(), 1);
    s.stop().await;
}

#[tokio::test]
async fn callbacks_run_with_the_job_and_its_output_or_error() {
    let s = TestServer::start(2).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    s.task(&t, "after", "noop", json!({})).await;
    s.task(
        &t,
        "work",
        "flaky",
        json!({"retry": {"max_attempts": 1}, "on_success": "after", "on_fail": "after"}),
    )
    .await;
    let ok = s
        .enqueue(
            &t,
            json!({"task": "work", "input": {"succeed_on_attempt": 1}}),
        )
        .await;
    let bad = s
        .enqueue(
            &t,
            json!({"task": "work", "input": {"succeed_on_attempt": 2}}),
        )
        .await;
    for (job, status, key) in [(&ok, "completed", "output"), (&bad, "failed", "error")] {
        let id = job["id"].as_str().unwrap();
        let ended = s.finished(&t, id).await;
        assert_eq!(ended["status"], status);
        // The callback is a job of its own, queued in the end's write.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let cb = loop {
            let (_, list) = s.get("/v1/jobs?task=after", &t).await;
            let found = list["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|j| j["input"]["job"]["id"] == id)
                .cloned();
            if let Some(cb) = found {
                break cb;
            }
            assert!(tokio::time::Instant::now() < deadline);
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let input = &cb["input"];
        assert_eq!(input["job"]["task"], "work");
        assert_eq!(input["job"]["attempts"], 1);
        match key {
            "output" => assert_eq!(input["output"], json!({"attempt": 1})),
            _ => assert_eq!(input["error"]["code"], "not_yet"),
        }
        assert!(input
            .get(if key == "output" { "error" } else { "output" })
            .is_none());
        let done = s.finished(&t, cb["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "completed");
        // Each names the other: the job its callback, the callback its job.
        let which = if key == "output" {
            "on_success"
        } else {
            "on_fail"
        };
        let (_, shown) = s.get(&format!("/v1/jobs/{id}"), &t).await;
        assert_eq!(
            shown["callbacks"],
            json!([{"kind": which, "job": cb["id"], "task": "after"}])
        );
        assert_eq!(
            done["callback_of"],
            json!({"kind": which, "job": id, "task": "after"})
        );
        assert!(shown.get("callback_of").is_none(), "{shown}");
    }
    let (_, list) = s.get("/v1/jobs?task=after", &t).await;
    assert_eq!(
        list["jobs"].as_array().unwrap().len(),
        2,
        "one callback each"
    );
    // A job that expires in its queue fails for good: its on_fail runs.
    let (status, body) = s.post("/v1/queues/held/pause", &t, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let stale = s
        .enqueue(
            &t,
            json!({"task": "work", "queue": "held", "expire_after_ms": 1}),
        )
        .await;
    let stale = stale["id"].as_str().unwrap();
    let expired = s.finished(&t, stale).await;
    assert_eq!(expired["error"]["kind"], "expired", "{expired}");
    let (_, list) = s.get("/v1/jobs?task=after", &t).await;
    let cbs: Vec<&Value> = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["input"]["job"]["id"] == stale)
        .collect();
    assert_eq!(
        cbs.len(),
        1,
        "one callback, written with the expiry: {list}"
    );
    assert_eq!(cbs[0]["input"]["error"]["kind"], "expired");
    let (_, shown) = s.get(&format!("/v1/jobs/{stale}"), &t).await;
    assert_eq!(
        shown["callbacks"],
        json!([{"kind": "on_fail", "job": cbs[0]["id"], "task": "after"}])
    );
    assert_eq!(cbs[0]["input"]["job"]["queue"], "held");
    assert_eq!(cbs[0]["input"]["job"]["attempts"], 0);
    // Definitions that name a task that does not exist, or themselves.
    let digest = s.upload(&t, "noop").await;
    for (spec, says) in [
        (
            json!({"component": digest, "on_success": "nope"}),
            "does not exist",
        ),
        (
            json!({"component": digest, "on_fail": "loop"}),
            "its own on_fail",
        ),
        (
            json!({"component": digest, "on_success": "Bad Name"}),
            "not allowed",
        ),
    ] {
        let (status, body) = s.call(Method::PUT, "/v1/tasks/loop", &t, Some(spec)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(says), "{body}");
    }
    s.stop().await;
}

/// A delivered event sent again on demand: the endpoint gets it twice,
/// with the same delivery id; another tenant, another webhook, an unknown
/// delivery and a token without `webhooks:write` are refused.
#[tokio::test]
async fn a_delivery_is_sent_again_when_asked() {
    let s = server().await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    let other = s.tenant("other", ALL_SCOPES).await;
    let reader = s.token("acme", &["jobs:read"]).await;
    s.task(&t, "echo", "noop", json!({})).await;
    let endpoint = Endpoint::start(0).await;
    let (status, hook) = s
        .post(
            "/v1/webhooks",
            &t,
            json!({"url": endpoint.url, "events": ["job.completed"]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hook}");
    let id = hook["id"].as_str().unwrap().to_owned();
    s.enqueue(&t, json!({"task": "echo"})).await;
    endpoint.wait_for(1).await;
    let d = deliveries_until(&s, &t, &id, |d| {
        d.len() == 1 && d[0]["status"] == "delivered"
    })
    .await;
    let delivery = d[0]["id"].as_i64().unwrap();
    let path = format!("/v1/webhooks/{id}/deliveries/{delivery}/redeliver");

    for (token, path, want, code) in [
        (
            &other,
            path.clone(),
            StatusCode::NOT_FOUND,
            "WEBHOOK_NOT_FOUND",
        ),
        (
            &reader,
            path.clone(),
            StatusCode::FORBIDDEN,
            "JOB_ACCESS_DENIED",
        ),
        (
            &t,
            format!("/v1/webhooks/{id}/deliveries/{}/redeliver", delivery + 1000),
            StatusCode::NOT_FOUND,
            "WEBHOOK_NOT_FOUND",
        ),
        (
            &t,
            format!("/v1/webhooks/wh_nope/deliveries/{delivery}/redeliver"),
            StatusCode::NOT_FOUND,
            "WEBHOOK_NOT_FOUND",
        ),
    ] {
        let (status, body) = s.post(&path, token, json!({})).await;
        assert_eq!(status, want, "{path}: {body}");
        assert_eq!(body["error"]["code"], code, "{body}");
    }
    assert_eq!(
        endpoint.got.lock().unwrap().len(),
        1,
        "nothing refused was sent"
    );

    let (status, again) = s.post(&path, &t, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["status"], "pending", "{again}");
    assert_eq!(again["attempts"], 1, "{again}");
    let got = endpoint.wait_for(2).await;
    let delivery_header = |g: &Got| g.headers["taskbox-delivery"].to_str().unwrap().to_owned();
    assert_eq!(delivery_header(&got[0]), delivery_header(&got[1]));
    assert_eq!(got[0].body, got[1].body);
    let d = deliveries_until(&s, &t, &id, |d| {
        d[0]["status"] == "delivered" && d[0]["attempts"] == 2
    })
    .await;
    assert_eq!(d.len(), 1, "{d:#?}");
}
