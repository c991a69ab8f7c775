//! What happens to jobs, through the API with real runners: completion,
//! retries and their limits, fallbacks, snooze, wait and resume, cancel,
//! run now, pinned versions, concurrency keys.

use crate::server::{TestServer, ADMIN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;

fn quick_retry(max_attempts: u32) -> Value {
    json!({"max_attempts": max_attempts, "backoff": {"kind": "fixed", "delay_ms": 1, "jitter": 0.0}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_completes_and_its_attempt_is_recorded() {
    let s = TestServer::start(2).await;
    let schema: Value = serde_json::from_str(&crate::common::repo_file(
        "guest-examples/rust/invoice/schema.json",
    ))
    .unwrap();
    s.task(ADMIN, "invoice", "invoice", json!({"input_schema": schema}))
        .await;
    let input: Value = serde_json::from_str(&crate::common::repo_file(
        "guest-examples/rust/invoice/example.json",
    ))
    .unwrap();
    let job = s
        .enqueue(ADMIN, json!({"task": "invoice", "input": input}))
        .await;
    assert_eq!(job["status"], "queued");
    assert_eq!(job["task"]["version"], 1);
    assert!(job["task"]["digest"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["output"]["invoice_number"], "INV-A-1001");
    assert_eq!(done["attempts"], 1);
    let attempts = s.attempts(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(attempts.len(), 1);
    let a = &attempts[0];
    assert_eq!(a["outcome"], "completed");
    assert!(a["fuel_used"].as_u64().unwrap() > 0);
    assert!(a["peak_memory_bytes"].as_u64().unwrap() > 0);
    assert!(a["log"]["lines"][0]["message"]
        .as_str()
        .unwrap()
        .contains("invoicing order A-1001"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_retried_as_the_policy_says() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "flaky", "flaky", json!({"retry": quick_retry(3)}))
        .await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "flaky", "input": {"succeed_on_attempt": 3}}),
        )
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["output"], json!({"attempt": 3}));
    let outcomes: Vec<Value> = s
        .attempts(ADMIN, job["id"].as_str().unwrap())
        .await
        .iter()
        .map(|a| a["outcome"].clone())
        .collect();
    assert_eq!(
        outcomes,
        [json!("retried"), json!("retried"), json!("completed")]
    );

    // Out of attempts: failed, with the last error.
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "flaky", "input": {"succeed_on_attempt": 9}}),
        )
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["attempts"], 3);
    assert_eq!(done["error"]["kind"], "task_failed");
    assert_eq!(done["error"]["code"], "not_yet");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn some_failures_are_never_retried() {
    let s = TestServer::start(2).await;
    s.task(
        ADMIN,
        "limits",
        "limits",
        json!({"retry": {"max_attempts": 5, "backoff": {"kind": "fixed", "delay_ms": 1}, "non_retryable": ["card_declined"]},
               "limits": {"fuel": 5_000_000}}),
    )
    .await;
    let cases = [
        // The guest says so.
        (
            json!({"op": "fail", "code": "nope", "retryable": false}),
            "task_failed",
            1,
        ),
        // The code is in non_retryable.
        (
            json!({"op": "fail", "code": "card_declined", "retryable": true}),
            "task_failed",
            1,
        ),
        // Deterministic: the same input burns the same fuel.
        (
            json!({"op": "spin", "iterations": 10_000_000_000u64}),
            "fuel_exhausted",
            1,
        ),
        // Retryable: every attempt is used.
        (
            json!({"op": "fail", "code": "flaky_upstream", "retryable": true}),
            "task_failed",
            5,
        ),
    ];
    for (input, kind, attempts) in cases {
        let job = s
            .enqueue(ADMIN, json!({"task": "limits", "input": input}))
            .await;
        let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "failed", "{input}: {done:#}");
        assert_eq!(done["error"]["kind"], kind, "{input}");
        assert_eq!(done["attempts"], attempts, "{input}: {done:#}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_are_retried_and_deadlines_end_the_job() {
    let s = TestServer::start(2).await;
    s.task(
        ADMIN,
        "slow",
        "limits",
        json!({"limits": {"timeout_ms": 30}, "retry": quick_retry(2)}),
    )
    .await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "slow", "input": {"op": "sleep", "ms": 2000}}),
        )
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["error"]["kind"], "timeout");
    assert_eq!(done["attempts"], 2, "a timeout is retried");

    s.task(
        ADMIN,
        "bounded",
        "limits",
        json!({"limits": {"timeout_ms": 60_000}, "retry": {"max_attempts": 5, "backoff": {"kind": "fixed", "delay_ms": 60_000}}}),
    )
    .await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "bounded", "input": {"op": "sleep", "ms": 5000}, "deadline_ms": 100}),
        )
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["kind"], "deadline_exceeded", "{done:#}");
    assert_eq!(done["attempts"], 1);
    assert!(done["deadline_at"].is_string());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_schemas_are_enforced() {
    let s = TestServer::start(2).await;
    s.task(
        ADMIN,
        "typed",
        "limits",
        json!({"output_schema": {"type": "integer"}}),
    )
    .await;
    let ok = s
        .enqueue(
            ADMIN,
            json!({"task": "typed", "input": {"op": "echo", "value": 7}}),
        )
        .await;
    let bad = s
        .enqueue(
            ADMIN,
            json!({"task": "typed", "input": {"op": "echo", "value": "seven"}}),
        )
        .await;
    assert_eq!(
        s.finished(ADMIN, ok["id"].as_str().unwrap()).await["output"],
        7
    );
    let done = s.finished(ADMIN, bad["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["kind"], "invalid_output");
    assert_eq!(done["attempts"], 1, "invalid output is deterministic");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fallback_chains_serve_a_failed_job() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "last-resort", "noop", json!({})).await;
    // The middle fallback fails too: its input is {input, error}, which the
    // limits guest refuses (bad_input, not retryable).
    s.task(
        ADMIN,
        "middle",
        "limits",
        json!({"fallback": "last-resort"}),
    )
    .await;
    s.task(
        ADMIN,
        "primary",
        "limits",
        json!({"fallback": "middle", "retry": quick_retry(2)}),
    )
    .await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "primary", "input": {"op": "fail", "code": "down", "retryable": true}}),
        )
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["output"], json!({}));
    assert_eq!(
        done["task"]["name"], "primary",
        "the job still names its task"
    );
    assert_eq!(
        done["fallback"]["name"], "last-resort",
        "and which fallback served it"
    );
    let attempts = s.attempts(ADMIN, job["id"].as_str().unwrap()).await;
    let trail: Vec<(String, String)> = attempts
        .iter()
        .map(|a| {
            (
                a["task"]["name"].as_str().unwrap().into(),
                a["outcome"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        trail,
        [
            ("primary".into(), "retried".into()),
            ("primary".into(), "fallback".into()),
            ("middle".into(), "fallback".into()),
            ("last-resort".into(), "completed".into()),
        ]
    );
    // The stages as rows, as a workflow's are: each with its own attempts.
    let stages: Vec<(Value, Value, Value, Value)> = done["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no stages: {done:#}"))
        .iter()
        .map(|s| {
            (
                s["name"].clone(),
                s["kind"].clone(),
                s["status"].clone(),
                s["attempts"].clone(),
            )
        })
        .collect();
    assert_eq!(
        stages,
        [
            (json!("primary"), json!("task"), json!("failed"), json!(2)),
            (
                json!("middle"),
                json!("fallback"),
                json!("failed"),
                json!(1)
            ),
            (
                json!("last-resort"),
                json!("fallback"),
                json!("completed"),
                json!(1)
            ),
        ],
        "{done:#}"
    );
    assert!(done.get("workflow").is_none(), "{done:#}");
    assert_eq!(done["steps"][0]["error"]["code"], "down");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fallback_gets_the_input_and_the_error() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "echo-all", "limits", json!({})).await;
    s.task(
        ADMIN,
        "fails",
        "limits",
        json!({"fallback": "echo-all", "retry": quick_retry(1)}),
    )
    .await;
    // The fallback's input is {"input": …, "error": …}; the limits guest
    // needs an op, so give the original input one it can also serve: the
    // fallback then fails, and the job fails with its error.
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "fails", "input": {"op": "fail", "code": "first", "retryable": true}}),
        )
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["fallback"]["name"], "echo-all");
    assert_eq!(
        done["error"]["code"], "bad_input",
        "the last error is the fallback's"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_runner_died_goes_on_to_its_fallback() {
    use taskbox::maintenance::rescuer::Rescuer;
    use taskbox::store::ClaimParams;
    // No runners at first: the only claim is the one of the runner that dies.
    let s = TestServer::start(0).await;
    s.task(ADMIN, "last-resort", "noop", json!({})).await;
    s.task(
        ADMIN,
        "primary",
        "noop",
        json!({"fallback": "last-resort", "retry": quick_retry(1)}),
    )
    .await;
    let job = s
        .enqueue(ADMIN, json!({"task": "primary", "input": {}}))
        .await;
    let id = job["id"].as_str().unwrap().to_owned();
    let id = id.as_str();
    let state = &s.app.as_ref().unwrap().state;
    // A runner that dies holding it: a claim whose lease nobody renews.
    let claimed = state
        .store
        .job_claim(ClaimParams {
            owner: "a-runner-that-died".into(),
            queues: None,
            limit: 1,
            lease_ms: 1,
            only_tenants: None,
            begin_each: u32::MAX,
            caps: Default::default(),
        })
        .await
        .unwrap()
        .jobs;
    assert_eq!(claimed.len(), 1);
    let rescuer = Rescuer::new(
        state.registry.clone(),
        state.wake.clone(),
        taskbox::runner::LEASE_MS,
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    // Polls until the 1 ms lease has expired and the rescuer takes it.
    while rescuer.rescue(false).await.unwrap() == 0 {
        assert!(std::time::Instant::now() < deadline, "never rescued");
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    // Now a server that runs attempts, on the same data dir.
    let s = s.restart(1).await;
    let done = s.finished(ADMIN, id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["fallback"]["name"], "last-resort");
    let attempts = s.attempts(ADMIN, id).await;
    let trail: Vec<(&str, &str, &str)> = attempts
        .iter()
        .map(|a| {
            (
                a["task"]["name"].as_str().unwrap(),
                a["outcome"].as_str().unwrap(),
                a["error"]["kind"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        trail,
        [
            ("primary", "fallback", "runner_lost"),
            ("last-resort", "completed", "-"),
        ]
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snooze_wait_and_resume() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "limits", "limits", json!({})).await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "limits", "input": {"op": "wait", "for": {"approval": "manager"}}}),
        )
        .await;
    let id = job["id"].as_str().unwrap();
    let waiting = s.until(ADMIN, id, |j| j["status"] == "waiting").await;
    assert_eq!(waiting["waiting_for"], json!({"approval": "manager"}));
    let (status, resumed) = s
        .post(
            &format!("/v1/jobs/{id}/resume"),
            ADMIN,
            json!({"input": {"op": "echo", "value": "approved"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resumed}");
    let done = s.finished(ADMIN, id).await;
    assert_eq!(done["output"], "approved");
    let outcomes: Vec<Value> = s
        .attempts(ADMIN, id)
        .await
        .iter()
        .map(|a| a["outcome"].clone())
        .collect();
    assert_eq!(outcomes, [json!("waiting"), json!("completed")]);
    assert_eq!(done["max_attempts"], 4, "waiting did not use up an attempt");

    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "limits", "input": {"op": "snooze", "ms": 5}}),
        )
        .await;
    let id = job["id"].as_str().unwrap();
    let snoozed = s
        .until(ADMIN, id, |j| j["attempts"].as_u64() >= Some(3))
        .await;
    assert!(
        snoozed["max_attempts"].as_u64().unwrap() >= 5,
        "snoozes use up no attempts: {snoozed:#}"
    );
    let (status, cancelled) = s
        .post(&format!("/v1/jobs/{id}/cancel"), ADMIN, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let done = s.finished(ADMIN, id).await;
    assert_eq!(done["status"], "cancelled", "{cancelled:#}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_a_running_attempt() {
    let s = TestServer::start(2).await;
    s.task(
        ADMIN,
        "limits",
        "limits",
        json!({"limits": {"timeout_ms": 60_000}}),
    )
    .await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "limits", "input": {"op": "spin", "iterations": 1_000_000_000_000u64}}),
        )
        .await;
    let id = job["id"].as_str().unwrap();
    s.until(ADMIN, id, |j| j["status"] == "running").await;
    let started = std::time::Instant::now();
    let (status, body) = s
        .post(&format!("/v1/jobs/{id}/cancel"), ADMIN, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let done = s.finished(ADMIN, id).await;
    assert_eq!(done["status"], "cancelled");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the spin was interrupted"
    );
    let attempts = s.attempts(ADMIN, id).await;
    assert_eq!(attempts[0]["outcome"], "cancelled");

    // A queued job is cancelled at once and never runs.
    let (_, queued) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "limits", "input": {"op": "echo", "value": 1}, "delay_ms": 60_000}),
        )
        .await;
    let qid = queued["id"].as_str().unwrap();
    let (status, body) = s
        .post(&format!("/v1/jobs/{qid}/cancel"), ADMIN, json!({}))
        .await;
    assert_eq!(
        (status, body["status"].clone()),
        (StatusCode::OK, json!("cancelled"))
    );
    assert!(s.attempts(ADMIN, qid).await.is_empty());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_now_runs_ahead_of_time_and_answers_the_result() {
    let s = TestServer::start(1).await;
    s.task(ADMIN, "limits", "limits", json!({"retry": quick_retry(1)}))
        .await;
    let (_, job) = s
        .post("/v1/jobs", ADMIN, json!({"task": "limits", "input": {"op": "echo", "value": "now"}, "delay_ms": 3_600_000}))
        .await;
    let id = job["id"].as_str().unwrap();
    let (status, done) = s
        .call(
            Method::POST,
            &format!("/v1/jobs/{id}/run?wait=true"),
            ADMIN,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(
        (done["status"].clone(), done["output"].clone()),
        (json!("completed"), json!("now"))
    );

    let (_, job) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "limits", "input": {"op": "fail", "code": "x", "retryable": false}, "delay_ms": 3_600_000}),
        )
        .await;
    let id = job["id"].as_str().unwrap();
    let (status, err) = s
        .call(
            Method::POST,
            &format!("/v1/jobs/{id}/run?wait=true"),
            ADMIN,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(err["error"]["code"], "JOB_EXECUTION_ERROR");
    assert_eq!(err["error"]["details"]["job"]["status"], "failed");
    assert_eq!(err["error"]["details"]["job"]["id"], id);

    // Without wait: 202 and the job runs in the background.
    let (_, job) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "limits", "input": {"op": "echo", "value": 2}, "delay_ms": 3_600_000}),
        )
        .await;
    let id = job["id"].as_str().unwrap();
    let (status, _) = s
        .call(Method::POST, &format!("/v1/jobs/{id}/run"), ADMIN, None)
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(s.finished(ADMIN, id).await["output"], 2);
    s.stop().await;

    // A server that runs no attempts cannot run one now.
    let s = TestServer::start(0).await;
    s.task(ADMIN, "limits", "limits", json!({})).await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "limits", "input": {"op": "echo", "value": 3}}),
        )
        .await;
    let (status, err) = s
        .call(
            Method::POST,
            &format!("/v1/jobs/{}/run", job["id"].as_str().unwrap()),
            ADMIN,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{err}");
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--runners 0"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_jobs_keep_the_version_they_pinned() {
    let s = TestServer::start(1).await;
    s.task(ADMIN, "t", "limits", json!({})).await;
    let (_, job) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "t", "input": {"op": "echo", "value": "v1"}, "delay_ms": 3_600_000}),
        )
        .await;
    let v2 = s.task(ADMIN, "t", "noop", json!({})).await;
    assert_eq!(v2["version"], 2);
    let id = job["id"].as_str().unwrap();
    let (status, done) = s
        .call(
            Method::POST,
            &format!("/v1/jobs/{id}/run?wait=true"),
            ADMIN,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(
        done["output"], "v1",
        "it ran the digest it pinned, not version 2's"
    );
    assert_eq!(done["task"]["version"], 1);
    let (_, newer) = s
        .post("/v1/jobs", ADMIN, json!({"task": "t", "input": {}}))
        .await;
    assert_eq!(newer["task"]["version"], 2);
    assert_eq!(newer["task"]["digest"], v2["digest"]);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_enqueues_return_the_same_job() {
    let s = TestServer::start(0).await;
    s.task(ADMIN, "t", "noop", json!({})).await;
    let send = |body: &'static str| {
        axum::http::Request::post("/v1/jobs")
            .header("authorization", format!("Bearer {ADMIN}"))
            .header("idempotency-key", "order-42")
            .body(axum::body::Body::from(body))
            .unwrap()
    };
    let (s1, j1) = s.raw(send(r#"{"task": "t", "input": {"a": 1}}"#)).await;
    let (s2, j2) = s.raw(send(r#"{"task": "t", "input": {"a": 1}}"#)).await;
    let (s3, e3) = s.raw(send(r#"{"task": "t", "input": {"a": 2}}"#)).await;
    assert_eq!(s1, StatusCode::CREATED);
    assert_eq!(s2, StatusCode::OK);
    assert_eq!(j1["id"], j2["id"]);
    assert_eq!(s3, StatusCode::CONFLICT, "{e3}");
    assert_eq!(e3["error"]["code"], "CONFLICT");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_with_one_concurrency_key_never_overlap() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "limits", "limits", json!({})).await;
    let mut ids = Vec::new();
    for _ in 0..4 {
        let job = s
            .enqueue(ADMIN, json!({"task": "limits", "input": {"op": "sleep", "ms": 30}, "concurrency_key": "acct-1"}))
            .await;
        ids.push(job["id"].as_str().unwrap().to_owned());
    }
    let mut spans = Vec::new();
    for id in &ids {
        assert_eq!(s.finished(ADMIN, id).await["status"], "completed");
        let a = &s.attempts(ADMIN, id).await[0];
        spans.push((
            a["started_at"].as_str().unwrap().to_owned(),
            a["finished_at"].as_str().unwrap().to_owned(),
        ));
    }
    spans.sort();
    for pair in spans.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "attempts overlapped: {pair:?}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_page_newest_first_with_filters() {
    let s = TestServer::start(0).await;
    s.task(ADMIN, "a", "noop", json!({})).await;
    s.task(ADMIN, "b", "noop", json!({"queue": "other"})).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let task = if i % 2 == 0 { "a" } else { "b" };
        ids.push(
            s.enqueue(ADMIN, json!({"task": task, "input": {}})).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let (_, p1) = s.get("/v1/jobs?limit=2", ADMIN).await;
    let got: Vec<&str> = p1["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[4].as_str(), ids[3].as_str()]);
    let cursor = p1["next_cursor"].as_str().unwrap();
    let (_, p2) = s
        .get(&format!("/v1/jobs?limit=2&cursor={cursor}"), ADMIN)
        .await;
    let got: Vec<&str> = p2["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[2].as_str(), ids[1].as_str()]);
    let (_, b) = s.get("/v1/jobs?task=b&status=queued", ADMIN).await;
    assert_eq!(b["jobs"].as_array().unwrap().len(), 2);
    assert!(b["next_cursor"].is_null());
    let (_, other) = s.get("/v1/jobs?queue=other", ADMIN).await;
    assert_eq!(other["jobs"].as_array().unwrap().len(), 2);
    let (_, tasks) = s.get("/v1/tasks", ADMIN).await;
    assert_eq!(tasks["tasks"].as_array().unwrap().len(), 2);
    let (status, shown) = s.get("/v1/tasks/b", ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown["definition"]["queue"], "other");
    assert_eq!(shown["versions"].as_array().unwrap().len(), 1);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_jobs_are_retried_on_their_version_or_the_newest() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "t", "limits", json!({"retry": quick_retry(1)}))
        .await;
    let fail =
        |code: &str| json!({"task": "t", "input": {"op": "fail", "code": code, "retryable": true}});
    let mut ids = Vec::new();
    for code in ["nope", "nope", "nope", "other"] {
        let job = s.enqueue(ADMIN, fail(code)).await;
        ids.push(job["id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        assert_eq!(s.finished(ADMIN, id).await["status"], "failed");
    }
    // Only a failed job, only the tenant's own, only a known digest choice.
    let ok = s
        .enqueue(
            ADMIN,
            json!({"task": "t", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    let ok = ok["id"].as_str().unwrap();
    s.finished(ADMIN, ok).await;
    let (status, e) = s
        .post(&format!("/v1/jobs/{ok}/retry"), ADMIN, json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("completed"),
        "{e}"
    );
    let (status, _) = s.post("/v1/jobs/01NOSUCHJOB/retry", ADMIN, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let other = s.tenant("other", crate::server::ALL_SCOPES).await;
    let (status, _) = s
        .post(&format!("/v1/jobs/{}/retry", ids[0]), &other, json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let retry = |id: &str, body: Value| {
        let path = format!("/v1/jobs/{id}/retry");
        let s = &s;
        async move { s.post(&path, ADMIN, body).await }
    };
    let (status, e) = retry(&ids[0], json!({"digest": "newest"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");

    // The task's next version does not fail; the newest is asked for.
    s.task(ADMIN, "t", "noop", json!({})).await;
    let (status, j) = retry(&ids[0], json!({"digest": "latest"})).await;
    assert_eq!(status, StatusCode::OK, "{j}");
    assert_eq!(j["status"], "queued");
    assert_eq!(j["task"]["version"], 2);
    assert_eq!(j["error"], Value::Null);
    let done = s.finished(ADMIN, &ids[0]).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["attempts"], 2);
    let versions: Vec<Value> = s
        .attempts(ADMIN, &ids[0])
        .await
        .iter()
        .map(|a| a["task"]["version"].clone())
        .collect();
    assert_eq!(versions, [json!(1), json!(2)]);

    // Without a body: on the version it pinned, where it fails again.
    let (status, j) = s
        .call(
            Method::POST,
            &format!("/v1/jobs/{}/retry", ids[1]),
            ADMIN,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{j}");
    let again = s.finished(ADMIN, &ids[1]).await;
    assert_eq!(
        (again["status"].as_str(), again["attempts"].as_u64()),
        (Some("failed"), Some(2))
    );
    assert_eq!(again["task"]["version"], 1);

    // Many at once, by the error's code, a limited number at a time.
    let (status, r) = s
        .post(
            "/v1/jobs/retry",
            ADMIN,
            json!({"filter": {"code": "nope"}, "digest": "latest", "limit": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!(r, json!({"retried": 1, "refused": 0, "more": true}));
    let (_, r) = s
        .post(
            "/v1/jobs/retry",
            ADMIN,
            json!({"filter": {"code": "nope", "kind": "task_failed"}, "digest": "latest"}),
        )
        .await;
    assert_eq!(r, json!({"retried": 1, "refused": 0, "more": false}));
    for id in &ids[..3] {
        assert_eq!(s.finished(ADMIN, id).await["status"], "completed");
    }
    // The other code was left failed.
    let (_, j) = s.get(&format!("/v1/jobs/{}", ids[3]), ADMIN).await;
    assert_eq!(j["status"], "failed");
    let (status, e) = s
        .post("/v1/jobs/retry", ADMIN, json!({"filter": {"kind": "slow"}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unique_keys_answer_the_existing_job_or_refuse_reuse() {
    let s = std::sync::Arc::new(TestServer::start(0).await);
    s.task(ADMIN, "t", "noop", json!({})).await;
    // Fifty at once with use_existing: one job, every answer that job.
    let mut calls = Vec::new();
    for _ in 0..50 {
        let s = s.clone();
        calls.push(tokio::spawn(async move {
            s.post(
                "/v1/jobs",
                ADMIN,
                json!({"task": "t", "unique_key": "nightly", "on_conflict": "use_existing"}),
            )
            .await
        }));
    }
    let mut ids = std::collections::HashSet::new();
    let mut statuses = Vec::new();
    for c in calls {
        let (status, job) = c.await.unwrap();
        statuses.push(status.as_u16());
        ids.insert(job["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    statuses.sort_unstable();
    assert_eq!(statuses[0], 200);
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    let (_, list) = s.get("/v1/jobs", ADMIN).await;
    assert_eq!(list["jobs"].as_array().unwrap().len(), 1);
    // Without it, a conflict that says how to get the job instead.
    let (status, e) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "t", "unique_key": "nightly"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("use_existing"),
        "{e}"
    );
    // The rules need a key, and are spelled as the contract spells them.
    let (status, e) = s
        .post("/v1/jobs", ADMIN, json!({"task": "t", "reuse": "reject"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    let (status, e) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "t", "unique_key": "k", "reuse": "never"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("allow_failed_only"),
        "{e}"
    );
    let s = std::sync::Arc::try_unwrap(s).ok().expect("no other holder");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_show_their_depths() {
    let s = TestServer::start(0).await;
    s.task(ADMIN, "t", "noop", json!({})).await;
    for queue in ["default", "default", "mail"] {
        s.enqueue(ADMIN, json!({"task": "t", "queue": queue})).await;
    }
    let (status, body) = s.get("/v1/queues", ADMIN).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let queues = body["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 2, "{body:#}");
    assert_eq!(queues[0]["name"], "default");
    assert_eq!(queues[0]["depth"]["queued"], 2);
    assert_eq!(queues[0]["depth"]["failed"], 0);
    assert!(queues[0]["oldest_queued_age_ms"].as_i64().unwrap() >= 0);
    assert_eq!(queues[1]["name"], "mail");
    // Another tenant's queues are its own.
    let other = s.tenant("other", crate::server::ALL_SCOPES).await;
    let (_, body) = s.get("/v1/queues", &other).await;
    assert_eq!(body, json!({"queues": []}));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_keys_can_be_templates_of_the_input() {
    let s = TestServer::start(0).await;
    s.task(
        ADMIN,
        "t",
        "noop",
        json!({"concurrency": {"key": "acct-{account.id}/{kind}", "mode": "exclusive"}}),
    )
    .await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "t", "input": {"account": {"id": 7}, "kind": "sync"}}),
        )
        .await;
    assert_eq!(job["concurrency_key"], "acct-7/sync");
    let (status, e) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "t", "input": {"kind": "sync"}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(e["error"]["code"], "JOB_INVALID_INPUT");
    assert_eq!(e["error"]["details"][0]["pointer"], "/account/id");
    // A template that does not close is refused when the task is defined.
    let digest = s.upload(ADMIN, "noop").await;
    let (status, e) = s
        .call(
            Method::PUT,
            "/v1/tasks/bad",
            ADMIN,
            Some(json!({"component": digest, "concurrency": {"key": "acct-{account", "mode": "exclusive"}})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("concurrency.key"),
        "{e}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_queue_waits_for_its_resume() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "t", "noop", json!({})).await;
    let (status, body) = s.post("/v1/queues/mail/pause", ADMIN, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"queue": "mail", "paused": true, "changed": true})
    );
    // Enqueue still works.
    let mut mail = Vec::new();
    for _ in 0..3 {
        let job = s
            .enqueue(ADMIN, json!({"task": "t", "queue": "mail"}))
            .await;
        mail.push(job["id"].as_str().unwrap().to_owned());
    }
    // A job of another queue, enqueued after them, runs; theirs do not.
    let other = s.enqueue(ADMIN, json!({"task": "t"})).await;
    let other = s.finished(ADMIN, other["id"].as_str().unwrap()).await;
    assert_eq!(other["status"], "completed", "{other}");
    for id in &mail {
        let (_, job) = s.get(&format!("/v1/jobs/{id}"), ADMIN).await;
        assert_eq!(job["status"], "queued", "{job}");
    }
    let (_, body) = s.get("/v1/queues", ADMIN).await;
    let listed = body["queues"].as_array().unwrap();
    let q = listed.iter().find(|q| q["name"] == "mail").unwrap();
    assert_eq!(
        (q["paused"].clone(), q["depth"]["queued"].clone()),
        (json!(true), json!(3))
    );
    // Pausing needs jobs:run, and a queue's name is checked.
    let reader = s.tenant("reader", &["jobs:read"]).await;
    let (status, _) = s.post("/v1/queues/mail/pause", &reader, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, e) = s
        .post("/v1/queues/Bad%20Name/pause", ADMIN, json!({}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    let (status, body) = s.post("/v1/queues/mail/resume", ADMIN, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["changed"], true);
    for id in &mail {
        assert_eq!(s.finished(ADMIN, id).await["status"], "completed");
    }
    let (_, body) = s.post("/v1/queues/mail/resume", ADMIN, json!({})).await;
    assert_eq!(body["changed"], false, "it was not paused");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_still_queued_past_expire_after_ms_fails_expired() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "t", "noop", json!({})).await;
    // Its queue is paused, so it stays queued till the keeper fails it.
    s.post("/v1/queues/slow/pause", ADMIN, json!({})).await;
    let job = s
        .enqueue(
            ADMIN,
            json!({"task": "t", "queue": "slow", "expire_after_ms": 50}),
        )
        .await;
    assert_eq!(job["expire_after_ms"], 50);
    let id = job["id"].as_str().unwrap();
    let job = s.finished(ADMIN, id).await;
    assert_eq!(job["status"], "failed", "{job}");
    assert_eq!(job["error"]["kind"], "expired", "{job}");
    assert_eq!(job["attempts"], 0, "it never ran");
    assert!(s.attempts(ADMIN, id).await.is_empty());
    // One that starts in time runs as any other.
    let job = s
        .enqueue(ADMIN, json!({"task": "t", "expire_after_ms": 60_000}))
        .await;
    let job = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(job["status"], "completed", "{job}");
    // Bounds are checked.
    for bad in [json!(0), json!(-1), json!("soon")] {
        let (status, e) = s
            .post(
                "/v1/jobs",
                ADMIN,
                json!({"task": "t", "expire_after_ms": bad}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {e}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pruner_deletes_ended_jobs_after_their_age() {
    use taskbox::maintenance::pruner::Retention;
    let s = TestServer::start_with(2, |c| {
        c.retention = Retention {
            completed: Some(Duration::from_millis(1)),
            failed: None,
        }
    })
    .await;
    s.task(ADMIN, "t", "noop", json!({})).await;
    s.task(ADMIN, "f", "limits", json!({"retry": {"max_attempts": 1}}))
        .await;
    let done = s.enqueue(ADMIN, json!({"task": "t"})).await;
    let done = done["id"].as_str().unwrap().to_owned();
    let failed = s
        .enqueue(
            ADMIN,
            json!({"task": "f", "input": {"op": "fail", "code": "x"}}),
        )
        .await;
    let failed = failed["id"].as_str().unwrap().to_owned();
    assert_eq!(s.finished(ADMIN, &failed).await["status"], "failed");
    // The pruner's next round deletes the completed job, not the failed.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _) = s.get(&format!("/v1/jobs/{done}"), ADMIN).await;
        if status == StatusCode::NOT_FOUND {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never pruned");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (status, job) = s.get(&format!("/v1/jobs/{failed}"), ADMIN).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "failed jobs are kept for ever here: {job}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrency_limit_of_three_holds_on_eight_slots() {
    let s = TestServer::start(8).await;
    let concurrency = json!({"key": "acct", "mode": "exclusive", "limit": 3});
    s.task(ADMIN, "t", "limits", json!({"concurrency": concurrency}))
        .await;
    let mut ids = Vec::new();
    for _ in 0..100 {
        let job = s
            .enqueue(
                ADMIN,
                json!({"task": "t", "input": {"op": "sleep", "ms": 20}}),
            )
            .await;
        ids.push(job["id"].as_str().unwrap().to_owned());
    }
    // Each job's attempt, as (start, end) in ms.
    let mut spans = Vec::new();
    for id in &ids {
        assert_eq!(s.finished(ADMIN, id).await["status"], "completed");
        let a = &s.attempts(ADMIN, id).await[0];
        let ms = |v: &Value| {
            chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap())
                .unwrap()
                .timestamp_millis()
        };
        spans.push((ms(&a["started_at"]), ms(&a["finished_at"])));
    }
    // The most running at once: at each start, those begun and not ended.
    let most = spans
        .iter()
        .map(|(start, _)| {
            spans
                .iter()
                .filter(|(s2, e2)| s2 <= start && start < e2)
                .count()
        })
        .max()
        .unwrap();
    assert!(most <= 3, "{most} ran at once: {spans:?}");
    assert!(most >= 2, "the limit is 3, not 1: {spans:?}");
    // A limit out of bounds is refused when the task is put.
    let digest = s.upload(ADMIN, "noop").await;
    for bad in [0, 1001] {
        let concurrency = json!({"key": "k", "mode": "exclusive", "limit": bad});
        let (status, e) = s
            .call(
                Method::PUT,
                "/v1/tasks/u",
                ADMIN,
                Some(json!({"component": digest, "concurrency": concurrency})),
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {e}");
    }
    s.stop().await;
}
