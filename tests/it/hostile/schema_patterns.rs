//! Round two, item 1: a pattern in a tenant's schema costs a bounded
//! check. Eleven bytes of pattern, `a[ab]{5000}`, and two enqueues of a
//! megabyte of a/b text once held the API's threads for 12 s (a match
//! counted as one step of the bound). Now a pattern past the limits is
//! refused when the task is defined, and one within them is charged by
//! the text it scans, before it scans it, on every check: an input, an
//! item of a batch, an output.

use crate::server::{TestServer, ADMIN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

/// A megabyte of a/b text in which `a[ab]{1000}` matches only at the
/// end: the pattern's DFA blows up, so the regex crate walks its NFA, a
/// few seconds a megabyte.
fn costly_text() -> String {
    let mut text = String::with_capacity(1_000_000);
    let mut x: u32 = 2463534242;
    while text.len() < 900_000 {
        for _ in 0..799 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            text.push(if x & 1 == 0 { 'a' } else { 'b' });
        }
        text.push('c');
    }
    text.push('a');
    text.push_str(&"b".repeat(1000));
    text
}

fn said(body: &Value) -> String {
    body["error"]["details"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pattern_costs_a_check_bounded_by_its_text() {
    let s = TestServer::start(1).await;
    let digest = s.upload(ADMIN, "limits").await;
    let define = |name: &str, spec: Value| {
        let mut spec = spec;
        spec["component"] = json!(digest);
        let path = format!("/v1/tasks/{name}");
        let s = &s;
        async move { s.call(Method::PUT, &path, ADMIN, Some(spec)).await }
    };

    // Past the limits: refused at definition, the pattern named.
    let (status, body) = define(
        "huge",
        json!({"input_schema": {"type": "object", "properties": {"text": {"type": "string", "pattern": "a[ab]{5000}"}}}}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "INVALID_TASK");
    assert!(body.to_string().contains("a[ab]{5000}"), "{body}");

    // Within them, and costly on a megabyte: the check stops at its bound
    // and says so, on the input of an enqueue and of a batch's item.
    let schema = json!({"type": "object", "properties": {"op": {"type": "string"},
        "value": {"type": "string", "pattern": "a[ab]{1000}"}}});
    let (status, body) = define("costly", json!({"input_schema": schema})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let input = json!({"op": "echo", "value": costly_text()});
    let job = json!({"task": "costly", "input": input});
    let (a, b) = tokio::join!(
        s.post("/v1/jobs", ADMIN, job.clone()),
        s.post("/v1/jobs", ADMIN, job.clone())
    );
    for (status, body) in [a, b] {
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(said(&body).contains("steps"), "the bound is named: {body}");
    }
    let (status, body) = s
        .post("/v1/jobs/batch", ADMIN, json!({"jobs": [job]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["jobs"][0]["error"].to_string().contains("steps"),
        "{body}"
    );
    // Short text is checked as ever.
    let short = json!({"op": "echo", "value": format!("a{}", "b".repeat(1000))});
    let (status, body) = s
        .post("/v1/jobs", ADMIN, json!({"task": "costly", "input": short}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // An output is held to the same bound.
    let (status, body) = define(
        "costly-out",
        json!({"output_schema": {"type": "string", "pattern": "a[ab]{1000}"},
               "retry": {"max_attempts": 1}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "costly-out", "input": {"op": "echo", "value": costly_text()}}),
        )
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["error"]["kind"], "invalid_output", "{}", done["error"]);
    assert!(
        done["error"]["message"].as_str().unwrap().contains("steps"),
        "{}",
        done["error"]
    );

    // A linear pattern reads a megabyte within the bound.
    let (status, body) = define(
        "plain",
        json!({"input_schema": {"type": "object", "properties": {"value": {"type": "string", "pattern": "^[abc]+$"}}}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "plain", "input": {"op": "echo", "value": costly_text()}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    s.stop().await;
}
