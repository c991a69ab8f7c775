//! `POST /v1/jobs/batch`: each item under its own rules, one result per
//! item in order, the tenant's rate per item, idempotent retries.

use crate::server::{TestServer, ADMIN, ALL_SCOPES};
use axum::http::StatusCode;
use serde_json::{json, Value};

fn batch_request(
    token: &str,
    key: Option<&str>,
    body: &Value,
) -> axum::http::Request<axum::body::Body> {
    let mut req = axum::http::Request::post("/v1/jobs/batch")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json");
    if let Some(k) = key {
        req = req.header("idempotency-key", k);
    }
    req.body(axum::body::Body::from(body.to_string())).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_item_is_answered_in_order_and_the_good_ones_run() {
    let s = TestServer::start(2).await;
    let schema = json!({"type": "object", "required": ["n"],
                        "properties": {"n": {"type": "integer"}}});
    s.task(ADMIN, "echo", "noop", json!({"input_schema": schema}))
        .await;
    let body = json!({"jobs": [
        {"task": "echo", "input": {"n": 1}},
        {"task": "echo", "input": {"n": "one"}},
        {"task": "echo", "input": {"n": 3}, "colour": "blue"},
        {"task": "nope", "input": {}},
        {"task": "echo", "input": {"n": 5}, "priority": 5000},
        {"task": "echo", "input": {"n": 6}, "queue": "default", "delay_ms": 1},
    ]});
    let (status, answer) = s.raw(batch_request(ADMIN, None, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let items = answer["jobs"].as_array().unwrap();
    assert_eq!(items.len(), 6, "{answer:#}");
    assert_eq!(items[0]["status"], "queued", "{answer:#}");
    assert_eq!(items[0]["input"], json!({"n": 1}));
    assert_eq!(items[1]["error"]["code"], "JOB_INVALID_INPUT", "{answer:#}");
    assert_eq!(items[1]["error"]["status"], 400);
    assert_eq!(items[1]["error"]["details"][0]["pointer"], "/n");
    assert_eq!(items[2]["error"]["code"], "BAD_REQUEST");
    let unknown = items[2]["error"]["message"].as_str().unwrap();
    assert!(
        unknown.contains("jobs[2]") && unknown.contains("colour"),
        "{unknown}"
    );
    assert_eq!(items[3]["error"]["code"], "TASK_NOT_FOUND");
    assert_eq!(items[3]["error"]["status"], 404);
    assert_eq!(items[4]["error"]["code"], "BAD_REQUEST");
    assert!(items[4]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("priority"));
    assert_eq!(items[5]["status"], "queued");
    for i in [0, 5] {
        let id = items[i]["id"].as_str().unwrap();
        let done = s.finished(ADMIN, id).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        assert_eq!(done["output"], json!({}));
    }
    // Only the two good items were written.
    let (_, list) = s.get("/v1/jobs?limit=50", ADMIN).await;
    assert_eq!(list["jobs"].as_array().unwrap().len(), 2, "{list:#}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_must_hold_one_to_a_thousand_jobs() {
    let s = TestServer::start(0).await;
    s.task(ADMIN, "t", "noop", json!({})).await;
    let (status, e) = s
        .raw(batch_request(ADMIN, None, &json!({"jobs": []})))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    let many: Vec<Value> = (0..1001).map(|_| json!({"task": "t"})).collect();
    let (status, e) = s
        .raw(batch_request(ADMIN, None, &json!({"jobs": many})))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("1000"),
        "{e}"
    );
    let (status, e) = s.raw(batch_request(ADMIN, None, &json!([]))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    // A thousand is a batch, and all of them are written.
    let full: Vec<Value> = (0..1000)
        .map(|i| json!({"task": "t", "input": {"i": i}}))
        .collect();
    let (status, answer) = s
        .raw(batch_request(ADMIN, None, &json!({"jobs": full})))
        .await;
    assert_eq!(status, StatusCode::OK);
    let items = answer["jobs"].as_array().unwrap();
    assert_eq!(items.len(), 1000);
    assert!(items.iter().all(|j| j["status"] == "queued"));
    assert_eq!(items[999]["input"], json!({"i": 999}));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_batch_answers_the_same_jobs() {
    let s = TestServer::start(0).await;
    s.task(ADMIN, "t", "noop", json!({})).await;
    let body =
        json!({"jobs": [{"task": "t", "input": {"a": 1}}, {"task": "t", "input": {"a": 2}}]});
    let (_, first) = s.raw(batch_request(ADMIN, Some("load-7"), &body)).await;
    let (_, again) = s.raw(batch_request(ADMIN, Some("load-7"), &body)).await;
    assert_eq!(first["jobs"][0]["id"], again["jobs"][0]["id"]);
    assert_eq!(first["jobs"][1]["id"], again["jobs"][1]["id"]);
    assert_ne!(first["jobs"][0]["id"], first["jobs"][1]["id"]);
    // The same key with an item changed: that item conflicts, the other
    // is the job it was.
    let changed =
        json!({"jobs": [{"task": "t", "input": {"a": 1}}, {"task": "t", "input": {"a": 9}}]});
    let (_, third) = s.raw(batch_request(ADMIN, Some("load-7"), &changed)).await;
    assert_eq!(third["jobs"][0]["id"], first["jobs"][0]["id"]);
    assert_eq!(third["jobs"][1]["error"]["code"], "CONFLICT", "{third:#}");
    assert_eq!(third["jobs"][1]["error"]["status"], 409);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_takes_what_the_enqueue_rate_allows() {
    let s = TestServer::start(0).await;
    let token = s.tenant("busy", ALL_SCOPES).await;
    let (status, body) = s
        .call(
            axum::http::Method::PUT,
            "/v1/tenants/busy",
            ADMIN,
            Some(json!({"quotas": {"enqueue_per_second": 1, "enqueue_burst": 3}})),
        )
        .await;
    assert!(status.is_success(), "{body}");
    s.task(&token, "t", "noop", json!({})).await;
    let jobs: Vec<Value> = (0..5)
        .map(|i| json!({"task": "t", "input": {"i": i}}))
        .collect();
    let (status, answer) = s
        .raw(batch_request(&token, None, &json!({"jobs": jobs})))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let items = answer["jobs"].as_array().unwrap();
    for item in &items[..3] {
        assert_eq!(item["status"], "queued", "{answer:#}");
    }
    for item in &items[3..] {
        assert_eq!(item["error"]["code"], "RATE_LIMITED", "{answer:#}");
        assert_eq!(item["error"]["status"], 429);
        assert!(item["error"]["details"]["retry_after_ms"].as_u64().unwrap() > 0);
    }
    s.stop().await;
}
