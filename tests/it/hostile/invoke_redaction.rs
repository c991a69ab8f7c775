//! Round two, item 12: an invoked task's result is kept without its
//! callers' secrets too. A parent that passed its own secret in a call's
//! input to a task that echoes it once had the value stored in the call's
//! row (redacted with the child's secrets only).

use crate::server::{TestServer, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::json;

const PARENT_SECRET: &str = "parent-only-secret-5b2e";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invoke_result_is_redacted_with_the_callers_secrets() {
    let s = TestServer::start(1).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    let (status, body) = s
        .call(
            Method::PUT,
            "/v1/secrets/PARENT_KEY",
            &t,
            Some(json!({ "value": PARENT_SECRET })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    s.task(&t, "echo", "limits", json!({})).await;
    s.task(
        &t,
        "parent",
        "orchestrator",
        json!({"secrets": ["PARENT_KEY"], "retry": {"max_attempts": 2, "backoff": {"kind": "fixed", "delay_ms": 1}}}),
    )
    .await;
    // The first attempt makes the call and fails; the second replays it
    // from its row.
    let job = s
        .enqueue(
            &t,
            json!({"task": "parent", "input": {
                "calls": [{"invoke": "echo", "input": {"op": "echo", "value": {"key": PARENT_SECRET}}}],
                "fail_on_attempt": 1
            }}),
        )
        .await;
    let id = job["id"].as_str().unwrap();
    let done = s.finished(&t, id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let store = &s.app.as_ref().unwrap().state.store;
    let calls = store.job_calls(id).await.unwrap();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        !calls[0].result.contains(PARENT_SECRET),
        "the row keeps the parent's secret: {}",
        calls[0].result
    );
    assert_eq!(calls[0].result, r#"{"key":"[redacted]"}"#);
    // What the parent got back, first from the call and then from its
    // row, is the same.
    assert_eq!(
        done["output"]["results"][0]["output"],
        json!({"key": "[redacted]"}),
        "{done}"
    );
    s.stop().await;
}
