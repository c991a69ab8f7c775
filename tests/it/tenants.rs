//! Tenants' weights and quotas through the API: what the admin sets and
//! reads, what a tenant sees when it hits each quota (429 with the quota
//! named), fuel budgets that make jobs wait rather than fail, and usage.

use crate::server::{TestServer, ADMIN, ALL_SCOPES};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{json, Value};

async fn put_tenant(s: &TestServer, name: &str, body: Value) -> (StatusCode, Value) {
    s.call(
        Method::PUT,
        &format!("/v1/tenants/{name}"),
        ADMIN,
        Some(body),
    )
    .await
}

#[track_caller]
fn expect_quota(answer: (StatusCode, Value), quota: &str, limit: u64) {
    let (status, body) = answer;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "QUOTA_EXCEEDED", "{body}");
    assert_eq!(body["error"]["details"]["quota"], quota, "{body}");
    assert_eq!(body["error"]["details"]["limit"], limit, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(quota) && message.contains(&limit.to_string()),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_sets_and_reads_weights_and_quotas() {
    let s = TestServer::start(0).await;
    let (status, t) = put_tenant(
        &s,
        "acme",
        json!({"weight": 3, "quotas": {"max_queued": 10, "fuel_per_minute": 5000}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "a new tenant: {t}");
    assert_eq!(t["weight"], 3);
    assert_eq!(
        t["quotas"]["max_queued"],
        json!({"limit": 10, "source": "tenant"})
    );
    assert_eq!(
        t["quotas"]["max_components"],
        json!({"limit": 1000, "source": "server"})
    );
    assert_eq!(
        t["quotas"]["max_running"],
        json!({"limit": null, "source": "server"}),
        "no limit"
    );
    let (status, shown) = s.get("/v1/tenants/acme", ADMIN).await;
    assert_eq!((status, &shown), (StatusCode::OK, &t));
    // A second PUT replaces what was set: what is left out is the default.
    let (status, t) = put_tenant(&s, "acme", json!({"quotas": {"max_running": 2}})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(t["weight"], 1);
    assert_eq!(t["quotas"]["max_queued"]["source"], "server");
    assert_eq!(t["quotas"]["max_running"]["limit"], 2);
    let (_, all) = s.get("/v1/tenants", ADMIN).await;
    let names: Vec<&str> = all["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["acme", "default"]);

    for (body, says) in [
        (json!({"weight": 0}), "weight"),
        (json!({"quotas": {"max_quued": 1}}), "max_quued"),
        (
            json!({"quotas": {"enqueue_burst": 5}}),
            "enqueue_per_second",
        ),
        (json!({"quotas": {"max_queued": -1}}), "max_queued"),
    ] {
        let (status, err) = put_tenant(&s, "acme", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {err}");
        assert!(err.to_string().contains(says), "{body}: {err}");
    }
    let token = s.token("acme", ALL_SCOPES).await;
    let (status, _) = s
        .call(Method::PUT, "/v1/tenants/acme", &token, Some(json!({})))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "only the admin");
    let (status, err) = s.get("/v1/tenants/nobody", ADMIN).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(err["error"]["code"], "TENANT_NOT_FOUND");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_enqueue_rate_is_429_with_retry_after() {
    let s = TestServer::start(0).await;
    let token = s.tenant("busy", ALL_SCOPES).await;
    put_tenant(
        &s,
        "busy",
        json!({"quotas": {"enqueue_per_second": 1, "enqueue_burst": 3}}),
    )
    .await;
    s.task(&token, "t", "noop", json!({})).await;
    for _ in 0..3 {
        s.enqueue(&token, json!({"task": "t", "input": {}})).await;
    }
    let req = Request::post("/v1/jobs")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from(r#"{"task": "t", "input": {}}"#))
        .unwrap();
    let resp = tower::ServiceExt::oneshot(
        taskbox::api::router(s.app.as_ref().unwrap().state.clone()),
        req,
    )
    .await
    .unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=1).contains(&retry_after), "{retry_after}");
    let bytes = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .unwrap()
        .to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
    assert_eq!(body["error"]["details"]["quota"], "enqueue_per_second");
    assert_eq!(body["error"]["details"]["limit"], 1);
    // Another tenant's bucket is its own.
    s.task(ADMIN, "t", "noop", json!({})).await;
    s.enqueue(ADMIN, json!({"task": "t", "input": {}})).await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotas_refuse_new_work_and_keep_what_was_accepted() {
    let s = TestServer::start(0).await;
    let token = s.tenant("small", ALL_SCOPES).await;
    put_tenant(
        &s,
        "small",
        json!({"quotas": {"max_queued": 2, "max_components": 1, "max_task_versions": 2}}),
    )
    .await;
    s.task(&token, "t", "noop", json!({})).await;
    let first = s.enqueue(&token, json!({"task": "t", "input": {}})).await;
    s.enqueue(&token, json!({"task": "t", "input": {}})).await;
    expect_quota(
        s.post("/v1/jobs", &token, json!({"task": "t", "input": {}}))
            .await,
        "max_queued",
        2,
    );
    // Nothing accepted was dropped.
    let (_, j) = s
        .get(
            &format!("/v1/jobs/{}", first["id"].as_str().unwrap()),
            &token,
        )
        .await;
    assert_eq!(j["status"], "queued");
    // Cancelling one makes room.
    s.post(
        &format!("/v1/jobs/{}/cancel", first["id"].as_str().unwrap()),
        &token,
        json!({}),
    )
    .await;
    s.enqueue(&token, json!({"task": "t", "input": {}})).await;

    let req = Request::post("/v1/components")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from(crate::common::guest("invoice")))
        .unwrap();
    expect_quota(s.raw(req).await, "max_components", 1);
    let digest = s.upload(&token, "noop").await;
    let define = || {
        s.call(
            Method::PUT,
            "/v1/tasks/t",
            &token,
            Some(json!({"component": digest})),
        )
    };
    assert_eq!(define().await.0, StatusCode::CREATED);
    expect_quota(define().await, "max_task_versions", 2);
    s.stop().await;
}

/// A tenant whose fuel for the minute is spent has its jobs wait, not
/// fail, while another tenant's run; its usage shows the budget spent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_fuel_budget_makes_jobs_wait() {
    let s = TestServer::start(1).await;
    let thrifty = s.tenant("thrifty", ALL_SCOPES).await;
    put_tenant(
        &s,
        "thrifty",
        json!({"quotas": {"fuel_per_minute": 1_000_000}}),
    )
    .await;
    s.task(&thrifty, "spin", "limits", json!({})).await;
    s.task(ADMIN, "spin", "limits", json!({})).await;
    let burn = json!({"task": "spin", "input": {"op": "spin", "iterations": 2_000_000}});
    let first = s.enqueue(&thrifty, burn.clone()).await;
    let first = first["id"].as_str().unwrap();
    assert_eq!(s.finished(&thrifty, first).await["status"], "completed");
    // The first attempt overdrew the budget; the next waits for the minute.
    let second = s.enqueue(&thrifty, burn.clone()).await;
    let other = s.enqueue(ADMIN, burn).await;
    assert_eq!(
        s.finished(ADMIN, other["id"].as_str().unwrap()).await["status"],
        "completed"
    );
    let (_, usage) = s.get("/v1/usage", &thrifty).await;
    let window = &usage["current"];
    let (_, j) = s
        .get(
            &format!("/v1/jobs/{}", second["id"].as_str().unwrap()),
            &thrifty,
        )
        .await;
    assert_ne!(j["status"], "failed", "a budget never fails a job: {j:#}");
    if window["fuel_used"].as_u64().unwrap() >= 1_000_000 {
        // (Unless the minute turned meanwhile, the second job waits.)
        let (_, j) = s
            .get(
                &format!("/v1/jobs/{}", second["id"].as_str().unwrap()),
                &thrifty,
            )
            .await;
        assert_eq!(j["status"], "queued", "waiting, not failed: {j:#}");
        assert_eq!(j["error"], Value::Null);
        assert_eq!(window["fuel_budget"], 1_000_000);
        assert_eq!(window["fuel_left"], 0);
        assert_eq!(window["attempts"], 1);
        assert_eq!(window["jobs_ended"]["completed"], 1);
        assert_eq!(usage["jobs"]["queued"], 1);
    }
    // The admin sees any tenant's usage; a tenant only its own.
    let (status, admin_view) = s.get("/v1/tenants/thrifty/usage", ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(admin_view["tenant"], "thrifty");
    let (status, _) = s.get("/v1/tenants/default/usage", &thrifty).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    s.stop().await;
}
