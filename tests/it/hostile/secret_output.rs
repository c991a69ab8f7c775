//! Round two, item 2: a secret is at least 8 bytes, and the output cap
//! holds the output as redacted, with a short marker. A one-byte secret
//! once turned a 1 MB echo into a 75 MB stored output.

use crate::server::{TestServer, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_secret_cannot_make_a_stored_output_pass_its_cap() {
    let s = TestServer::start(1).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    let name = "S".repeat(64);
    let path = format!("/v1/secrets/{name}");
    let put = |value: &'static str| s.call(Method::PUT, &path, &t, Some(json!({ "value": value })));
    let (status, body) = put("a").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("at least 8"), "{message}");
    let (status, body) = put("aaaaaaaa").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    s.task(
        &t,
        "echo",
        "limits",
        json!({"secrets": [name], "retry": {"max_attempts": 1}}),
    )
    .await;
    let cap = taskbox::sandbox::Ceilings::DEFAULT.max_output_bytes;

    // 900 KB of the secret's letter: under the cap as the guest wrote it,
    // over it once each 8 bytes are a 10-byte marker.
    let big = s
        .enqueue(
            &t,
            json!({"task": "echo", "input": {"op": "echo", "value": "a".repeat(900_000)}}),
        )
        .await;
    let done = s.finished(&t, big["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed", "{}", done["error"]);
    assert_eq!(
        done["error"]["kind"], "output_too_large",
        "{}",
        done["error"]
    );
    assert!(done["output"].is_null());

    // Under the cap once redacted: kept, with the marker and no value.
    let small = s
        .enqueue(
            &t,
            json!({"task": "echo", "input": {"op": "echo", "value": "a".repeat(400_000)}}),
        )
        .await;
    let done = s.finished(&t, small["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{}", done["error"]);
    let output = done["output"].as_str().unwrap();
    assert!(output.len() <= cap, "{} bytes stored", output.len());
    assert_eq!(output, "[redacted]".repeat(50_000));
    s.stop().await;
}
