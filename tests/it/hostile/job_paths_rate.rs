//! Round two, item 6: every path that makes a job is charged to its
//! tenant's enqueue rate, not only `POST /v1/jobs`. With a rate of one a
//! second, eight quick triggers once made eight jobs and one orchestrator
//! job spawned a hundred children. Now a trigger and a redrive answer 429,
//! a spawn fails retryably inside the guest, a callback is owed (made, due
//! when its token comes), a schedule's slot is skipped with the reason,
//! and a schedule may not fire more often than the server's floor.

use crate::schedules::Rig;
use crate::server::{TestServer, ADMIN, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::sync::Arc;
use taskbox::store::{JobStore, ManualClock, TenantSettings};

const SCOPES: &[&str] = &["tasks:write", "jobs:queue", "jobs:read", "schedules:write"];

/// A tenant allowed one enqueue a second, one at once.
async fn slow_tenant(s: &TestServer, name: &str) -> String {
    let mut scopes = ALL_SCOPES.to_vec();
    scopes.extend(SCOPES);
    let t = s.tenant(name, &scopes).await;
    let (status, body) = s
        .call(
            Method::PUT,
            &format!("/v1/tenants/{name}"),
            ADMIN,
            Some(json!({"quotas": {"enqueue_per_second": 1, "enqueue_burst": 1}})),
        )
        .await;
    assert!(status.is_success(), "{body}");
    t
}

fn is_rate_limited(status: StatusCode, body: &Value) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS && body["error"]["code"] == "RATE_LIMITED"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triggers_and_redrives_take_the_enqueue_rate() {
    let s = TestServer::start(1).await;
    let t = slow_tenant(&s, "acme").await;
    s.task(&t, "echo", "limits", json!({"retry": {"max_attempts": 1}}))
        .await;
    let (status, body) = s
        .call(
            Method::PUT,
            "/v1/schedules/nightly",
            &t,
            Some(json!({"cron": "0 3 * * *", "task": "echo", "input": {"op": "echo", "value": 1}})),
        )
        .await;
    assert!(status.is_success(), "{body}");
    let mut made = 0;
    let mut refused = 0;
    for _ in 0..8 {
        let (status, body) = s.post("/v1/schedules/nightly/trigger", &t, json!({})).await;
        if status == StatusCode::OK {
            made += 1;
        } else {
            assert!(is_rate_limited(status, &body), "{status}: {body}");
            refused += 1;
        }
    }
    assert!(
        made <= 2,
        "eight quick triggers made {made} jobs at one a second"
    );
    assert!(refused >= 6, "{refused}");

    // A failed job: its redrive is a new series of attempts, charged too.
    let failing = json!({"task": "echo", "input": {"op": "fail", "code": "x", "retryable": false}});
    let job = loop {
        let (status, body) = s.post("/v1/jobs", &t, failing.clone()).await;
        if status == StatusCode::CREATED {
            break body;
        }
        assert!(is_rate_limited(status, &body), "{body}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let id = job["id"].as_str().unwrap();
    assert_eq!(s.finished(&t, id).await["status"], "failed");
    // The bucket is empty now (the enqueue just took it): both redrives
    // are refused.
    let (status, body) = s.post("/v1/jobs/stuff/retry", &t, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // Take what refilled, then redrive.
    let _ = s.post("/v1/jobs", &t, failing.clone()).await;
    let (status, body) = s.post(&format!("/v1/jobs/{id}/retry"), &t, json!({})).await;
    assert!(is_rate_limited(status, &body), "{status}: {body}");
    let (status, body) = s
        .post("/v1/jobs/retry", &t, json!({"filter": {"task": "echo"}}))
        .await;
    assert!(is_rate_limited(status, &body), "{status}: {body}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawns_fail_retryably_past_the_enqueue_rate() {
    let s = TestServer::start(1).await;
    let t = slow_tenant(&s, "acme").await;
    s.task(&t, "noop", "noop", json!({})).await;
    s.task(
        &t,
        "orch",
        "orchestrator",
        json!({"retry": {"max_attempts": 1}}),
    )
    .await;
    let calls: Vec<Value> = (0..100)
        .map(|i| json!({"spawn": "noop", "input": {"i": i}}))
        .collect();
    // The parent's own enqueue takes the one token there is.
    let job = s
        .enqueue(&t, json!({"task": "orch", "input": {"calls": calls}}))
        .await;
    let done = s.finished(&t, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    let results = done["output"]["results"].as_array().unwrap();
    let spawned = results.iter().filter(|r| r["child"].is_string()).count();
    let limited: Vec<&Value> = results
        .iter()
        .filter(|r| r["error"]["code"] == "rate_limited")
        .collect();
    assert!(
        spawned <= 2,
        "a hundred spawns at one a second made {spawned} children"
    );
    assert_eq!(spawned + limited.len(), 100, "{results:?}");
    assert!(
        limited[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("enqueue rate"),
        "{}",
        limited[0]
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_is_owed_to_the_enqueue_rate() {
    let s = TestServer::start(1).await;
    let t = slow_tenant(&s, "acme").await;
    s.task(&t, "after", "noop", json!({})).await;
    s.task(&t, "first", "noop", json!({"on_success": "after"}))
        .await;
    // This enqueue takes the token; the callback owes the next.
    let job = s.enqueue(&t, json!({"task": "first", "input": {}})).await;
    let id = job["id"].as_str().unwrap();
    let done = s.finished(&t, id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let attempts = s.attempts(&t, id).await;
    let log = attempts[0]["log"].to_string();
    assert!(log.contains("callbacks are charged to it"), "{log}");
    // The callback job exists at once, due when its token comes.
    let (status, page) = s.get("/v1/jobs?task=after", &t).await;
    assert_eq!(status, StatusCode::OK);
    let after = &page["jobs"][0];
    let due = chrono::DateTime::parse_from_rfc3339(after["run_at"].as_str().unwrap()).unwrap();
    let finished =
        chrono::DateTime::parse_from_rfc3339(done["finished_at"].as_str().unwrap()).unwrap();
    assert!(
        (due - finished).num_milliseconds() >= 500,
        "the callback was due at {due}, its job ended at {finished}"
    );
    assert_eq!(
        s.finished(&t, after["id"].as_str().unwrap()).await["status"],
        "completed"
    );
    s.stop().await;
}

/// A schedule's slot past the rate is skipped and says why (a manual
/// clock: the slots come at once, the bucket refills in real time).
#[tokio::test]
async fn a_slot_past_the_enqueue_rate_is_skipped_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = crate::store::sqlite(&dir, clock.clone()).await;
    let rig = Rig::new(store.clone(), clock).await;
    let quotas = taskbox::quota::Quotas {
        enqueue_per_second: Some(1),
        enqueue_burst: Some(1),
        ..Default::default()
    };
    store
        .tenant_put(TenantSettings {
            name: "acme".into(),
            weight: None,
            quotas,
        })
        .await
        .unwrap();
    // As the API's put does: this process knows at once.
    rig.registry.admission().quotas.put("acme", quotas);
    rig.define("often", json!({"cron": "* * * * * *", "overlap": "allow"}))
        .await;
    let first = rig.schedule("often").await.state.next_at.unwrap();
    // Thirty-one slots come at once; the bucket refills one a second of
    // real time, far fewer than the pass takes.
    rig.set(first + 30_500);
    rig.fire().await;
    let st = rig.schedule("often").await.state;
    assert_eq!(st.fired + st.skipped, 31, "{st:?}");
    assert!(st.fired < 16, "{st:?}");
    let why = st.last_error.unwrap_or_default();
    assert!(why.contains("enqueue rate"), "{why}");
    store.close().await;
}

/// A schedule may fire no more often than the server's floor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_faster_than_the_floor_is_refused() {
    let s = TestServer::start_with(0, |c| {
        c.schedule_min_interval = std::time::Duration::from_secs(5)
    })
    .await;
    let t = s.tenant("acme", SCOPES).await;
    s.task(&t, "echo", "limits", json!({})).await;
    for (cron, ok) in [
        ("*/2 * * * * *", false),
        ("0,1 * * * * *", false),
        ("*/5 * * * * *", true),
    ] {
        let (status, body) = s
            .call(
                Method::PUT,
                "/v1/schedules/fast",
                &t,
                Some(json!({"cron": cron, "task": "echo"})),
            )
            .await;
        if ok {
            assert!(status.is_success(), "{cron}: {body}");
        } else {
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{cron}: {body}");
            let m = body["error"]["message"].as_str().unwrap();
            assert!(
                m.contains("--schedule-min-interval-ms") && m.contains("5000"),
                "{m}"
            );
        }
    }
    s.stop().await;
}
