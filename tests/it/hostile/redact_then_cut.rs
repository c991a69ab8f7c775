//! Round two, item 3: text is redacted before it is cut. A guest that put
//! 70 bytes before a secret in an output that is not JSON once had the
//! secret's first bytes kept in the job's error (the 80-byte preview was
//! cut first, and the cut secret no longer matched); the same held for a
//! failure's code and message at their caps.

use crate::server::{TestServer, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::json;

const SECRET: &str = "SUPERSECRETVALUE-93f1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_cut_keeps_the_start_of_a_secret() {
    let s = TestServer::start(1).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    let (status, body) = s
        .call(
            Method::PUT,
            "/v1/secrets/TOKEN",
            &t,
            Some(json!({ "value": SECRET })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    s.task(
        &t,
        "leaky",
        "limits",
        json!({"secrets": ["TOKEN"], "retry": {"max_attempts": 1}}),
    )
    .await;
    let leaked = |text: &str| (5..=SECRET.len()).any(|n| text.contains(&SECRET[..n]));
    let inputs = [
        // Not JSON: the error previews its first 80 bytes.
        json!({"op": "raw", "text": format!("{}{SECRET} and more", "x".repeat(70))}),
        // A failure code is kept to 128 bytes, a message to 4096.
        json!({"op": "fail", "code": format!("{}{SECRET}", "c".repeat(120)), "retryable": false}),
    ];
    for input in inputs {
        let job = s
            .enqueue(&t, json!({"task": "leaky", "input": input}))
            .await;
        let done = s.finished(&t, job["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "failed", "{done}");
        let error = done["error"].to_string();
        assert!(!leaked(&error), "a piece of the secret was kept: {error}");
        let attempts = s.attempts(&t, job["id"].as_str().unwrap()).await;
        let record = serde_json::to_string(&attempts).unwrap();
        assert!(!leaked(&record), "a piece of the secret was kept: {record}");
    }
    s.stop().await;
}
