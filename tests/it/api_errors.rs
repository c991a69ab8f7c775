//! Every documented 4xx, through the router: the status, the code, the one
//! error shape, and a message a user can act on.

use crate::server::{TestServer, ADMIN};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{json, Value};

#[track_caller]
fn expect_error(got: (StatusCode, Value), status: StatusCode, code: &str, words: &str) -> Value {
    let (s, body) = got;
    assert_eq!(s, status, "{body:#}");
    let err = &body["error"];
    assert_eq!(err["code"], code, "{body:#}");
    let message = err["message"].as_str().expect("a message");
    assert!(
        message.to_lowercase().contains(&words.to_lowercase()),
        "message {message:?} should mention {words:?}"
    );
    assert!(
        err.get("details").is_some(),
        "details is always present: {body:#}"
    );
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_say_what_is_wrong() {
    let s = TestServer::start(0).await;
    let schema = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}});
    s.task(ADMIN, "t", "limits", json!({"input_schema": schema}))
        .await;
    let body = expect_error(
        s.post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "t", "input": {"n": "x", "tags": ["a", 2]}}),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "JOB_INVALID_INPUT",
        "input_schema",
    );
    let pointers: Vec<&str> = body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["pointer"].as_str().unwrap())
        .collect();
    assert!(
        pointers.contains(&"/n") && pointers.contains(&"/tags/1"),
        "{pointers:?}"
    );

    let cases = [
        (
            json!({"task": "t", "input": {"n": 1}, "retries": 3}),
            "retries",
        ),
        (json!({"input": {"n": 1}}), "task"),
        (
            json!({"task": "t", "input": {"n": 1}, "run_at": "2030-01-01T00:00:00Z", "delay_ms": 5}),
            "not both",
        ),
        (
            json!({"task": "t", "input": {"n": 1}, "run_at": "tomorrow"}),
            "RFC 3339",
        ),
        (
            json!({"task": "t", "input": {"n": 1}, "priority": 5000}),
            "priority",
        ),
        (
            json!({"task": "t", "input": {"n": 1}, "queue": "Not A Queue"}),
            "queue",
        ),
        (
            json!({"task": "t", "input": {"n": 1}, "delay_ms": -1}),
            "invalid",
        ),
        (
            json!({"task": "t", "workflow": "w", "input": {}}),
            "not both",
        ),
        (
            json!({"task": "t", "input": {"n": 1}, "deadline_ms": 0}),
            "deadline_ms",
        ),
        (
            json!({"task": "t", "input": {"n": 1}, "unique_key": ""}),
            "unique_key",
        ),
    ];
    for (body, words) in cases {
        expect_error(
            s.post("/v1/jobs", ADMIN, body).await,
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            words,
        );
    }
    let raw = |body: &'static str| {
        Request::post("/v1/jobs")
            .header("authorization", format!("Bearer {ADMIN}"))
            .body(Body::from(body))
            .unwrap()
    };
    expect_error(
        s.raw(raw("{not json")).await,
        StatusCode::BAD_REQUEST,
        "BAD_REQUEST",
        "invalid JSON",
    );
    expect_error(
        s.raw(raw("")).await,
        StatusCode::BAD_REQUEST,
        "BAD_REQUEST",
        "empty",
    );
    for (path, words) in [
        ("/v1/jobs?status=done", "not a job status"),
        ("/v1/jobs?limit=0", "limit"),
        ("/v1/jobs?colour=red", "colour"),
    ] {
        expect_error(
            s.get(path, ADMIN).await,
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            words,
        );
    }
    expect_error(
        s.post(
            "/v1/tokens",
            ADMIN,
            json!({"tenant": "default", "scopes": ["jobs:fly"]}),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "BAD_REQUEST",
        "jobs:fly",
    );
    expect_error(
        s.post(
            "/v1/tokens",
            ADMIN,
            json!({"tenant": "ghost", "scopes": ["jobs:read"]}),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "BAD_REQUEST",
        "does not exist",
    );
    expect_error(
        s.post("/v1/tenants", ADMIN, json!({"name": "Bad Name"}))
            .await,
        StatusCode::BAD_REQUEST,
        "BAD_REQUEST",
        "tenant name",
    );
    let other_tenant = Request::get("/v1/jobs")
        .header("authorization", format!("Bearer {ADMIN}"))
        .header("taskbox-tenant", "ghost")
        .body(Body::empty())
        .unwrap();
    expect_error(
        s.raw(other_tenant).await,
        StatusCode::BAD_REQUEST,
        "BAD_REQUEST",
        "ghost",
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_failures() {
    let s = TestServer::start(0).await;
    expect_error(
        s.get("/v1/jobs", "").await,
        StatusCode::UNAUTHORIZED,
        "UNAUTHENTICATED",
        "Authorization",
    );
    expect_error(
        s.get("/v1/jobs", "tbx_nope").await,
        StatusCode::UNAUTHORIZED,
        "UNAUTHENTICATED",
        "unknown token",
    );
    let basic = Request::get("/v1/jobs")
        .header("authorization", "Basic YWxhZGRpbjpvcGVu")
        .body(Body::empty())
        .unwrap();
    expect_error(
        s.raw(basic).await,
        StatusCode::UNAUTHORIZED,
        "UNAUTHENTICATED",
        "Bearer",
    );
    let reader = s.tenant("acme", &["jobs:read"]).await;
    expect_error(
        s.post("/v1/jobs", &reader, json!({"task": "t", "input": {}}))
            .await,
        StatusCode::FORBIDDEN,
        "JOB_ACCESS_DENIED",
        "jobs:queue",
    );
    expect_error(
        s.post("/v1/tenants", &reader, json!({"name": "x"})).await,
        StatusCode::FORBIDDEN,
        "JOB_ACCESS_DENIED",
        "admin",
    );
    let (status, health) = s.get("/healthz", "").await;
    assert_eq!(status, StatusCode::OK, "healthz needs no token");
    // Whether this process leads (on SQLite it soon does: it is alone).
    assert!(health["leader"].is_boolean(), "{health}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_things_are_404() {
    let s = TestServer::start(0).await;
    let id = "01JZZZZZZZZZZZZZZZZZZZZZZZ";
    for (method, path) in [
        (Method::GET, format!("/v1/jobs/{id}")),
        (Method::POST, format!("/v1/jobs/{id}/cancel")),
        (Method::POST, format!("/v1/jobs/{id}/run")),
        (Method::POST, format!("/v1/jobs/{id}/resume")),
        (Method::GET, format!("/v1/jobs/{id}/attempts")),
    ] {
        expect_error(
            s.call(method, &path, ADMIN, None).await,
            StatusCode::NOT_FOUND,
            "JOB_NOT_FOUND",
            id,
        );
    }
    expect_error(
        s.get("/v1/tasks/ghost", ADMIN).await,
        StatusCode::NOT_FOUND,
        "TASK_NOT_FOUND",
        "ghost",
    );
    expect_error(
        s.post("/v1/jobs", ADMIN, json!({"task": "ghost", "input": {}}))
            .await,
        StatusCode::NOT_FOUND,
        "TASK_NOT_FOUND",
        "ghost",
    );
    let digest = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    expect_error(
        s.call(
            Method::PUT,
            "/v1/tasks/t",
            ADMIN,
            Some(json!({"component": digest})),
        )
        .await,
        StatusCode::NOT_FOUND,
        "COMPONENT_NOT_FOUND",
        "POST /v1/components",
    );
    expect_error(
        s.get("/v1/nothing-here", ADMIN).await,
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        "/v1/nothing-here",
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_are_409() {
    let s = TestServer::start(1).await;
    s.task(ADMIN, "t", "limits", json!({})).await;
    expect_error(
        s.post("/v1/tenants", ADMIN, json!({"name": "default"}))
            .await,
        StatusCode::CONFLICT,
        "CONFLICT",
        "exists",
    );
    // Due later, so that it waits for the run-now below.
    let body = json!({"task": "t", "input": {"op": "echo", "value": 1}, "unique_key": "once", "delay_ms": 3_600_000});
    let first = s.enqueue(ADMIN, body.clone()).await;
    expect_error(
        s.post("/v1/jobs", ADMIN, body).await,
        StatusCode::CONFLICT,
        "CONFLICT",
        "unique_key",
    );
    let id = first["id"].as_str().unwrap();
    expect_error(
        s.post(&format!("/v1/jobs/{id}/resume"), ADMIN, json!({}))
            .await,
        StatusCode::CONFLICT,
        "CONFLICT",
        "waiting",
    );
    let (status, _) = s
        .call(
            Method::POST,
            &format!("/v1/jobs/{id}/run?wait=true"),
            ADMIN,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    expect_error(
        s.post(&format!("/v1/jobs/{id}/cancel"), ADMIN, json!({}))
            .await,
        StatusCode::CONFLICT,
        "CONFLICT",
        "completed",
    );
    expect_error(
        s.call(Method::POST, &format!("/v1/jobs/{id}/run"), ADMIN, None)
            .await,
        StatusCode::CONFLICT,
        "CONFLICT",
        "only a queued job",
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_are_413_before_being_read() {
    let s = TestServer::start_with(0, |c| {
        c.max_body_bytes = 4096;
        c.max_component_bytes = 64 * 1024;
    })
    .await;
    let big = format!(r#"{{"task": "t", "input": "{}"}}"#, "x".repeat(5000));
    expect_error(
        s.raw(
            Request::post("/v1/jobs")
                .header("authorization", format!("Bearer {ADMIN}"))
                .header("content-length", big.len())
                .body(Body::from(big.clone()))
                .unwrap(),
        )
        .await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "PAYLOAD_TOO_LARGE",
        "4096",
    );
    // No length declared: cut off while streaming.
    let chunks: Vec<Result<String, std::io::Error>> =
        (0..10).map(|_| Ok("x".repeat(1000))).collect();
    let stream = Body::from_stream(futures_stream(chunks));
    expect_error(
        s.raw(
            Request::post("/v1/jobs")
                .header("authorization", format!("Bearer {ADMIN}"))
                .body(stream)
                .unwrap(),
        )
        .await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "PAYLOAD_TOO_LARGE",
        "limit",
    );
    let wasm = vec![0u8; 100 * 1024];
    expect_error(
        s.raw(
            Request::post("/v1/components")
                .header("authorization", format!("Bearer {ADMIN}"))
                .header("content-length", wasm.len())
                .body(Body::from(wasm))
                .unwrap(),
        )
        .await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "PAYLOAD_TOO_LARGE",
        "65536",
    );
    s.stop().await;
}

/// A body stream of these chunks.
fn futures_stream(
    chunks: Vec<Result<String, std::io::Error>>,
) -> impl futures_core::Stream<Item = Result<String, std::io::Error>> + Send + 'static {
    struct Chunks(std::vec::IntoIter<Result<String, std::io::Error>>);
    impl futures_core::Stream for Chunks {
        type Item = Result<String, std::io::Error>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
    Chunks(chunks.into_iter())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_components_and_tasks_are_422() {
    let s = TestServer::start(0).await;
    let upload = |bytes: Vec<u8>| {
        Request::post("/v1/components")
            .header("authorization", format!("Bearer {ADMIN}"))
            .body(Body::from(bytes))
            .unwrap()
    };
    expect_error(
        s.raw(upload(b"not wasm at all".to_vec())).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_COMPONENT",
        "",
    );
    expect_error(
        s.raw(upload(crate::common::guest("hostile-import"))).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_COMPONENT",
        "evil:net/raw",
    );
    s.task(ADMIN, "a", "noop", json!({})).await;
    let digest = s.upload(ADMIN, "noop").await;
    let put = |name: &str, spec: Value| {
        let s = &s;
        let path = format!("/v1/tasks/{name}");
        async move { s.call(Method::PUT, &path, ADMIN, Some(spec)).await }
    };
    expect_error(
        put(
            "b",
            json!({"component": digest, "retry": {"max_attempts": 0}}),
        )
        .await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_TASK",
        "max_attempts",
    );
    expect_error(
        put(
            "b",
            json!({"component": digest, "input_schema": {"type": "integr"}}),
        )
        .await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_TASK",
        "input_schema",
    );
    expect_error(
        put("b", json!({"component": digest, "fallback": "ghost"})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_TASK",
        "ghost",
    );
    expect_error(
        put("Bad%20Name", json!({"component": digest})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_TASK",
        "task name",
    );
    // a → b is fine; then b → a closes a cycle.
    let (status, _) = put("b", json!({"component": digest})).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = put("a", json!({"component": digest, "fallback": "b"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    expect_error(
        put("b", json!({"component": digest, "fallback": "a"})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_TASK",
        "cycle",
    );
    expect_error(
        put("c", json!({"component": digest, "retires": 3})).await,
        StatusCode::BAD_REQUEST,
        "BAD_REQUEST",
        "retires",
    );
    s.stop().await;
}
