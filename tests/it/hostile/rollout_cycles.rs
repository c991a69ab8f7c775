//! Round three (issue 65), item 5: a version staged for a rollout is one
//! that jobs can run (a callback's job pins either version by its own
//! id) and that promote makes live, so it may not close a cycle through
//! callbacks and fallbacks, even at 0 %. Staged beside A's live version,
//! A → B → A once went live on promote and ran 17 jobs from one enqueue
//! before the callback depth stopped it. A cycle is looked for through
//! every version that can be live, so one that closes only when two
//! staged versions are both promoted is refused too.

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
        created(define(&s, &digest, "a", json!({})).await);
        created(define(&s, &digest, "b", json!({"on_success": "a"})).await);
        created(define(&s, &digest, "c", json!({})).await);

        // A's next version at 0 %, leading back to b: refused, as it
        // would be live.
        let (status, body) = define(
            &s,
            &digest,
            "a",
            json!({"on_success": "b", "rollout": {"percent": 0}}),
        )
        .await;
        names_the_cycle(status, &body, "a -on_success-> b -on_success-> a");
        let (_, shown) = s.get("/v1/tasks/a", ADMIN).await;
        assert!(shown.get("rollout").is_none(), "nothing staged: {shown}");
        // Through a fallback too.
        let (status, body) = define(
            &s,
            &digest,
            "a",
            json!({"fallback": "b", "rollout": {"percent": 0}}),
        )
        .await;
        names_the_cycle(status, &body, "a -fallback-> b -on_success-> a");

        // One that closes nothing is staged, and promotes.
        let body = created(
            define(
                &s,
                &digest,
                "a",
                json!({"on_success": "c", "rollout": {"percent": 0}}),
            )
            .await,
        );
        assert_eq!(body["rollout_percent"], 0, "{body}");
        let (status, body) = s.post("/v1/tasks/a/promote", ADMIN, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["definition"]["on_success"], "c", "{body}");

        // x and y, each staged beside its live version: x's staged
        // version leads to y, so y's may not lead back to x (both
        // promoted, they would be a cycle), at any share, nor may a live
        // version of y.
        created(define(&s, &digest, "x", json!({})).await);
        created(define(&s, &digest, "y", json!({})).await);
        created(
            define(
                &s,
                &digest,
                "x",
                json!({"on_success": "y", "rollout": {"percent": 0}}),
            )
            .await,
        );
        for spec in [
            json!({"on_fail": "x", "rollout": {"percent": 0}}),
            json!({"on_fail": "x", "rollout": {"percent": 50}}),
            json!({"on_fail": "x"}),
        ] {
            let (status, body) = define(&s, &digest, "y", spec).await;
            names_the_cycle(status, &body, "y -on_fail-> x -on_success-> y");
        }
        // Rolled back, x's staged version can become live no more: y may
        // then lead to x.
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
