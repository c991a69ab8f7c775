//! Workflow definitions through the API: versioned like tasks, every
//! problem a 422 that names its step, scopes, reads by version; how an
//! enqueue of one is refused. (Running them: `workflows.rs`.)

use crate::server::{TestServer, ADMIN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

/// A list shows each workflow at its newest version, without the list of
/// versions (a workflow's own page has it).
async fn list_has_no_versions(s: &TestServer) -> bool {
    let (_, list) = s.get("/v1/workflows", ADMIN).await;
    list["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w.get("versions").is_none())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workflows_are_defined_versioned_and_refused_by_step() {
    let s = TestServer::start(1).await;
    s.task(ADMIN, "validate", "noop", json!({})).await;
    s.task(ADMIN, "invoice", "invoice", json!({})).await;
    let put = |body: serde_json::Value| {
        let s = &s;
        async move {
            s.call(Method::PUT, "/v1/workflows/orders", ADMIN, Some(body))
                .await
        }
    };
    // A task that does not exist, named with its step.
    let (status, err) = put(json!({"steps": [
        {"name": "validate", "task": "validate"},
        {"name": "price", "task": "pricing"},
    ]}))
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert_eq!(err["error"]["code"], "INVALID_WORKFLOW");
    let details = err["error"]["details"].to_string();
    assert!(
        details.contains("steps step \\\"price\\\": task \\\"pricing\\\" does not exist"),
        "{details}"
    );
    // Problems of the definition itself, each with its step.
    let (status, err) = put(json!({
        "steps": [
            {"name": "validate", "task": "validate", "retry": {"max_attempts": 0}},
            {"name": "validate", "task": "invoice"},
        ],
        "on_error": [{"name": "x", "task": "invoice", "timeout_ms": 0}],
        "input_schema": {"type": "nope"},
    }))
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    let details = err["error"]["details"].as_array().unwrap();
    let has = |what: &str| details.iter().any(|d| d.as_str().unwrap().contains(what));
    assert!(
        has("steps step \"validate\": retry.max_attempts"),
        "{details:?}"
    );
    assert!(has("another step has that name"), "{details:?}");
    assert!(has("on_error step \"x\": timeout_ms"), "{details:?}");
    assert!(has("input_schema"), "{details:?}");
    let (status, err) =
        put(json!({"steps": [{"name": "a", "task": "validate", "tmeout_ms": 5}]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tmeout_ms"),
        "{err}"
    );

    // Defined: version 1, then 2.
    let def = json!({
        "steps": [
            {"name": "validate", "task": "validate"},
            {"name": "invoice", "task": "invoice", "retry": {"max_attempts": 2}, "timeout_ms": 30000},
        ],
        "on_error": [{"name": "tell", "task": "validate"}],
        "deadline_ms": 60000,
    });
    let (status, v1) = put(def.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{v1}");
    assert_eq!(
        (v1["name"].clone(), v1["version"].clone()),
        (json!("orders"), json!(1))
    );
    assert_eq!(v1["steps"][1]["retry"]["max_attempts"], 2);
    let (status, v2) = put(json!({"steps": [{"name": "validate", "task": "validate"}]})).await;
    assert_eq!(status, StatusCode::CREATED, "{v2}");
    assert_eq!(v2["version"], 2);
    let (_, newest) = s.get("/v1/workflows/orders", ADMIN).await;
    assert_eq!(newest["version"], 2);
    let (_, first) = s.get("/v1/workflows/orders?version=1", ADMIN).await;
    assert_eq!(first["on_error"][0]["name"], "tell");
    // Either version lists every version, oldest first.
    for shown in [&newest, &first] {
        let versions = shown["versions"].as_array().unwrap();
        let numbers: Vec<&Value> = versions.iter().map(|v| &v["version"]).collect();
        assert_eq!(numbers, [&json!(1), &json!(2)], "{shown}");
        assert_eq!(versions[0]["created_at"], v1["created_at"]);
        assert_eq!(versions[1]["created_at"], v2["created_at"]);
    }
    assert!(list_has_no_versions(&s).await);
    let (status, err) = s.get("/v1/workflows/orders?version=9", ADMIN).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert_eq!(err["error"]["code"], "WORKFLOW_NOT_FOUND");
    let (_, list) = s.get("/v1/workflows", ADMIN).await;
    assert_eq!(list["workflows"].as_array().unwrap().len(), 1);

    // Scopes: defining needs tasks:write; reading, that or jobs:read; and
    // another tenant sees none of them.
    let reader = s.tenant("other", &["jobs:read"]).await;
    let (status, _) = s
        .call(Method::PUT, "/v1/workflows/orders", &reader, Some(def))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = s.get("/v1/workflows/orders", &reader).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A workflow job runs its newest version; one in a batch is refused,
    // as is one that names no workflow the tenant has.
    let job = s
        .enqueue(ADMIN, json!({"workflow": "orders", "input": {"n": 1}}))
        .await;
    assert_eq!(
        job["task"],
        json!({"name": "orders", "version": 2, "digest": job["task"]["digest"]})
    );
    let (status, err) = s
        .post(
            "/v1/jobs/batch",
            ADMIN,
            json!({"jobs": [{"workflow": "orders"}]}),
        )
        .await;
    assert!(status.is_success(), "{err}");
    assert!(err.to_string().contains("not in a batch"), "{err}");
    let (status, err) = s.post("/v1/jobs", ADMIN, json!({"workflow": "nope"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert_eq!(err["error"]["code"], "WORKFLOW_NOT_FOUND");
    let (status, err) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"workflow": "orders", "input": [1]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    s.stop().await;
}
