//! Round three (issue 65), item 5: a version staged for a rollout is one
//! that jobs can run (a callback's job pins either version by its own
//! id) and that promote makes live, so it may not close a cycle through
//! callbacks and fallbacks, even at 0 %. The check once read live
//! versions only: with a version of A leading to B staged at 0 %, a
//! version of B leading back to A was accepted (staged or live), and
//! promote closed A → B → A, which only the callback depth stopped, at
//! 17 jobs from one enqueue. A cycle is now looked for through every version that
//! can be live, so one that closes only once two staged versions are both
//! promoted is refused too.

use crate::server::{TestServer, ADMIN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

/// Defines version `spec` of task `name` (on the noop guest, `digest`).
async fn define(s: &TestServer, digest: &str, name: &str, spec: Value) -> (StatusCode, Value) {
    let mut spec = spec;
    spec["component"] = json!(digest);
    s.call(Method::PUT, &format!("/v1/tasks/{name}"), ADMIN, Some(spec))
        .await
}

/// A refusal that names `cycle`, the error shape of a live define's.
fn names_the_cycle(status: StatusCode, body: &Value, cycle: &str) {
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "INVALID_TASK", "{body}");
    let said = body.to_string();
    assert!(said.contains(cycle), "{cycle} in {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_version_may_not_close_a_cycle() {
    TestServer::each_backend(0, async |s| {
        let digest = s.upload(ADMIN, "noop").await;
        let created = |(status, body): (StatusCode, Value)| {
            assert_eq!(status, StatusCode::CREATED, "{body}");
            body
        };
        for name in ["a", "b", "c"] {
            created(define(&s, &digest, name, json!({})).await);
        }
        // A's next version, staged at 0 %, leads to b: it closes nothing.
        let body = created(
            define(
                &s,
                &digest,
                "a",
                json!({"on_success": "b", "rollout": {"percent": 0}}),
            )
            .await,
        );
        assert_eq!(body["rollout_percent"], 0, "{body}");
        // So b may not lead back to a: staged at 0 % or at a share, or
        // live, promote would close the cycle.
        for spec in [
            json!({"on_success": "a", "rollout": {"percent": 0}}),
            json!({"on_success": "a", "rollout": {"percent": 50}}),
            json!({"on_success": "a"}),
        ] {
            let (status, body) = define(&s, &digest, "b", spec).await;
            names_the_cycle(status, &body, "b -on_success-> a -on_success-> b");
        }
        let (status, body) = define(
            &s,
            &digest,
            "b",
            json!({"fallback": "a", "rollout": {"percent": 0}}),
        )
        .await;
        names_the_cycle(status, &body, "b -fallback-> a -on_success-> b");
        let (_, shown) = s.get("/v1/tasks/b", ADMIN).await;
        assert!(shown.get("rollout").is_none(), "nothing staged: {shown}");

        // One that closes nothing is staged, and both promote.
        created(
            define(
                &s,
                &digest,
                "b",
                json!({"on_success": "c", "rollout": {"percent": 0}}),
            )
            .await,
        );
        for name in ["a", "b"] {
            let (status, body) = s
                .post(&format!("/v1/tasks/{name}/promote"), ADMIN, json!({}))
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let (_, shown) = s.get("/v1/tasks/b", ADMIN).await;
        assert_eq!(shown["definition"]["on_success"], "c", "{shown}");
        // A staged version that closes a cycle through live ones is
        // refused as before.
        let (status, body) = define(
            &s,
            &digest,
            "c",
            json!({"on_fail": "a", "rollout": {"percent": 0}}),
        )
        .await;
        names_the_cycle(
            status,
            &body,
            "c -on_fail-> a -on_success-> b -on_success-> c",
        );

        // Rolled back, a staged version can be live no more: what it
        // led to may then lead back.
        for name in ["x", "y"] {
            created(define(&s, &digest, name, json!({})).await);
        }
        created(
            define(
                &s,
                &digest,
                "x",
                json!({"on_success": "y", "rollout": {"percent": 0}}),
            )
            .await,
        );
        let (status, body) = s.post("/v1/tasks/x/rollback", ADMIN, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        created(
            define(
                &s,
                &digest,
                "y",
                json!({"on_fail": "x", "rollout": {"percent": 0}}),
            )
            .await,
        );
        let (status, body) = s.post("/v1/tasks/y/promote", ADMIN, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["definition"]["on_fail"], "x", "{body}");
        s.stop().await;
    })
    .await;
}
