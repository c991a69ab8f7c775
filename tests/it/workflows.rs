//! Workflows run by the real runner, on SQLite and on PostgreSQL: steps on a
//! shared context, each with its own retries; a step's result committed as
//! it ends, so a restart resumes at the next step; `on_error` on a failure
//! for good and `on_cancel` on a cancel; the stages in `GET /v1/jobs/{id}`
//! and in the events; the order pipeline of Rust, JavaScript and Go steps.

use crate::api_events::page;
use crate::e2e::{Client, Served};
use crate::server::{TestServer, ADMIN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

async fn each_backend(run: impl AsyncFn(TestServer)) {
    TestServer::each_backend(2, run).await;
}

async fn define(s: &TestServer, name: &str, def: Value) -> Value {
    let (status, body) = s
        .call(
            Method::PUT,
            &format!("/v1/workflows/{name}"),
            ADMIN,
            Some(def),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

/// The task each of a job's attempts ran, in order.
async fn attempt_tasks(s: &TestServer, id: &str) -> Vec<String> {
    s.attempts(ADMIN, id)
        .await
        .iter()
        .map(|a| a["task"]["name"].as_str().unwrap().to_owned())
        .collect()
}

fn steps(job: &Value) -> Vec<(String, String, String, u64)> {
    job["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no steps in {job:#}"))
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["kind"].as_str().unwrap().to_owned(),
                s["status"].as_str().unwrap().to_owned(),
                s["attempts"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn step(name: &str, kind: &str, status: &str, attempts: u64) -> (String, String, String, u64) {
    (name.into(), kind.into(), status.into(), attempts)
}

const QUICK: &str = r#"{"kind": "fixed", "delay_ms": 1}"#;

fn quick_retry(max: u32) -> Value {
    json!({"max_attempts": max, "backoff": serde_json::from_str::<Value>(QUICK).unwrap()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_step_workflow_retries_its_middle_step_and_merges_each_output() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "echo", "limits", json!({})).await;
        s.task(ADMIN, "flaky", "flaky", json!({})).await;
        s.task(ADMIN, "finish", "noop", json!({})).await;
        define(
            &s,
            "three",
            json!({
                "steps": [
                    {"name": "first", "task": "echo"},
                    {"name": "middle", "task": "flaky", "retry": quick_retry(3)},
                    {"name": "last", "task": "finish"},
                ],
                "input_schema": {"type": "object", "required": ["op"]},
            }),
        )
        .await;
        // The input schema is the workflow's.
        let (status, err) = s
            .post("/v1/jobs", ADMIN, json!({"workflow": "three", "input": {}}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        let input = json!({
            "op": "echo",
            "value": {"first": "done", "drop_me": null},
            "succeed_on_attempt": 3,
            "drop_me": 1,
        });
        let job = s
            .enqueue(ADMIN, json!({"workflow": "three", "input": input}))
            .await;
        let id = job["id"].as_str().unwrap();
        assert_eq!(job["task"]["name"], "three", "{job}");
        let done = s.finished(ADMIN, id).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        // Each output merged in order; a key set to null is removed.
        assert_eq!(
            done["output"],
            json!({
                "op": "echo",
                "value": {"first": "done", "drop_me": null},
                "succeed_on_attempt": 3,
                "first": "done",
                "attempt": 3,
            }),
            "{done:#}"
        );
        assert_eq!(done["workflow"], json!({"name": "three", "version": 1}));
        assert_eq!(
            steps(&done),
            [
                step("first", "step", "completed", 1),
                step("middle", "step", "completed", 3),
                step("last", "step", "completed", 1),
            ]
        );
        assert_eq!(
            done["steps"][0]["output"],
            json!({"first": "done", "drop_me": null})
        );
        // Five attempts in all: the first step ran once.
        let tasks = attempt_tasks(&s, id).await;
        assert_eq!(tasks, ["echo", "flaky", "flaky", "flaky", "finish"]);
        // The events report each stage's start and end.
        // PostgreSQL's sequencer numbers events a moment after their
        // write: read until the job's three are there, or the deadline.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let (p, ended) = loop {
            let (_, p) = page(&s, ADMIN, "?type=job.step_ended").await;
            let ended: Vec<(Value, Value)> = p["events"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["job"]["id"] == id)
                .map(|e| (e["step"].clone(), e["attempts"].clone()))
                .collect();
            if ended.len() >= 3 || std::time::Instant::now() > deadline {
                break (p, ended);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        assert_eq!(
            ended,
            [
                (json!("first"), json!(1)),
                (json!("middle"), json!(3)),
                (json!("last"), json!(1)),
            ],
            "{p:#}"
        );
        let (_, p) = page(&s, ADMIN, "?type=job.step_started").await;
        let started = p["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["job"]["id"] == id)
            .count();
        assert_eq!(started, 3, "{p:#}");
        // A stage's end comes before the job's: the job's last event is its
        // completion (what the fault harness's audit reads).
        let (_, p) = page(&s, ADMIN, "").await;
        let last = p["events"]
            .as_array()
            .unwrap()
            .iter()
            .rfind(|e| e["job"]["id"] == id)
            .unwrap()["type"]
            .clone();
        assert_eq!(last, "job.completed", "{p:#}");
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_error_runs_with_the_context_and_the_error_and_the_job_fails_with_both() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "echo", "limits", json!({})).await;
        s.task(ADMIN, "flaky", "flaky", json!({})).await;
        s.task(ADMIN, "alert", "noop", json!({})).await;
        define(
            &s,
            "doomed",
            json!({
                "steps": [
                    {"name": "first", "task": "echo"},
                    {"name": "never", "task": "flaky", "retry": quick_retry(2)},
                    {"name": "unreached", "task": "echo"},
                ],
                "on_error": [{"name": "tell", "task": "alert"}],
                "on_cancel": [{"name": "undo", "task": "alert"}],
            }),
        )
        .await;
        let input = json!({"op": "echo", "value": {"seen": 1}, "succeed_on_attempt": 9});
        let job = s
            .enqueue(ADMIN, json!({"workflow": "doomed", "input": input}))
            .await;
        let id = job["id"].as_str().unwrap();
        let done = s.finished(ADMIN, id).await;
        assert_eq!(done["status"], "failed", "{done:#}");
        assert_eq!(done["error"]["code"], "not_yet", "{done:#}");
        assert_eq!(done["output"]["seen"], 1, "the context is kept: {done:#}");
        assert_eq!(
            steps(&done),
            [
                step("first", "step", "completed", 1),
                step("never", "step", "failed", 2),
                step("unreached", "step", "skipped", 0),
                step("tell", "on_error", "completed", 1),
                step("undo", "on_cancel", "skipped", 0),
            ]
        );
        // The on_error step got the context and the error.
        let attempts = s.attempts(ADMIN, id).await;
        assert_eq!(attempts.last().unwrap()["task"]["name"], "alert");
        // Each attempt names its stage, and says what it did: the step's
        // last one failed, though its end handed the job to on_error.
        let placed: Vec<(&str, u64, &str, &str)> = attempts
            .iter()
            .map(|a| {
                (
                    a["step"]["name"].as_str().unwrap(),
                    a["step"]["seq"].as_u64().unwrap(),
                    a["outcome"].as_str().unwrap(),
                    a["error"]["code"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            placed,
            [
                ("first", 0, "completed", ""),
                ("never", 1, "retried", "not_yet"),
                ("never", 1, "failed", "not_yet"),
                ("tell", 3, "completed", ""),
            ],
            "{attempts:#?}"
        );
        // A workflow's stages are not fallbacks.
        assert!(done["fallback"].is_null(), "{done:#}");
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_interrupts_the_running_step_and_runs_on_cancel() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "sleepy", "limits", json!({})).await;
        s.task(ADMIN, "undo", "noop", json!({})).await;
        define(
            &s,
            "long",
            json!({
                "steps": [
                    {"name": "wait", "task": "sleepy"},
                    {"name": "after", "task": "undo"},
                ],
                "on_cancel": [{"name": "undo", "task": "undo"}],
            }),
        )
        .await;
        let job = s
            .enqueue(
                ADMIN,
                json!({"workflow": "long", "input": {"op": "sleep", "ms": 60000}}),
            )
            .await;
        let id = job["id"].as_str().unwrap();
        s.until(ADMIN, id, |j| j["status"] == "running").await;
        let (status, body) = s
            .post(&format!("/v1/jobs/{id}/cancel"), ADMIN, json!({}))
            .await;
        assert!(status.is_success(), "{body}");
        let done = s.finished(ADMIN, id).await;
        assert_eq!(done["status"], "cancelled", "{done:#}");
        assert_eq!(
            steps(&done),
            [
                step("wait", "step", "cancelled", 1),
                step("after", "step", "skipped", 0),
                step("undo", "on_cancel", "completed", 1),
            ]
        );
        assert_eq!(done["output"]["op"], "sleep", "{done:#}");
        // A job not yet running runs its on_cancel chain too.
        let job = s
            .enqueue(
                ADMIN,
                json!({"workflow": "long", "input": {"op": "sleep", "ms": 1}, "delay_ms": 600000}),
            )
            .await;
        let id = job["id"].as_str().unwrap();
        let (status, handed) = s
            .post(&format!("/v1/jobs/{id}/cancel"), ADMIN, json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{handed}");
        let done = s.finished(ADMIN, id).await;
        assert_eq!(done["status"], "cancelled", "{done:#}");
        assert_eq!(
            steps(&done),
            [
                step("wait", "step", "cancelled", 0),
                step("after", "step", "skipped", 0),
                step("undo", "on_cancel", "completed", 1),
            ]
        );
        let tasks = attempt_tasks(&s, id).await;
        assert_eq!(tasks, ["undo"]);
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_workflow_job_retried_resumes_at_its_failed_step() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "prep", "noop", json!({})).await;
        s.task(ADMIN, "echo", "limits", json!({})).await;
        define(
            &s,
            "resumable",
            json!({
                "steps": [
                    {"name": "prep", "task": "prep"},
                    {"name": "echo", "task": "echo", "retry": quick_retry(1)},
                ],
            }),
        )
        .await;
        // The echo of a non-object fails its step for good (a step's
        // output is merged into the context, so it must be an object).
        let job = s
            .enqueue(
                ADMIN,
                json!({"workflow": "resumable", "input": {"op": "echo", "value": [1]}}),
            )
            .await;
        let id = job["id"].as_str().unwrap();
        let failed = s.finished(ADMIN, id).await;
        assert_eq!(failed["status"], "failed", "{failed:#}");
        assert_eq!(failed["error"]["kind"], "invalid_output", "{failed:#}");
        assert_eq!(
            steps(&failed),
            [
                step("prep", "step", "completed", 1),
                step("echo", "step", "failed", 1),
            ]
        );
        // A workflow job keeps the versions it pinned.
        let (status, err) = s
            .post(
                &format!("/v1/jobs/{id}/retry"),
                ADMIN,
                json!({"digest": "latest"}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        // Retried, it starts again at the step that failed.
        let (status, again) = s
            .post(&format!("/v1/jobs/{id}/retry"), ADMIN, json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{again}");
        let done = s
            .until(ADMIN, id, |j| {
                j["status"] == "failed" && j["steps"][1]["status"] == "failed"
            })
            .await;
        let tasks = attempt_tasks(&s, id).await;
        assert_eq!(tasks, ["prep", "echo", "echo"], "{done:#}");
        assert_eq!(steps(&done)[0], step("prep", "step", "completed", 1));
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_order_pipeline_runs_javascript_go_and_rust_steps() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "validate-order", "js-validate", json!({}))
            .await;
        s.task(ADMIN, "price-order", "go-price", json!({})).await;
        s.task(ADMIN, "invoice", "invoice", json!({})).await;
        let def: Value = serde_json::from_str(&crate::common::repo_file(
            "guest-examples/workflows/order-pipeline.json",
        ))
        .unwrap();
        define(&s, "order-pipeline", def).await;
        let mut order: Value = serde_json::from_str(&crate::common::repo_file(
            "guest-examples/rust/invoice/example.json",
        ))
        .unwrap();
        let o = order.as_object_mut().unwrap();
        o.remove("tax_rate_percent");
        o.remove("discount_percent");
        o.insert("country".into(), json!("DE"));
        let job = s
            .enqueue(ADMIN, json!({"workflow": "order-pipeline", "input": order}))
            .await;
        let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        let out = &done["output"];
        assert_eq!(out["validated"], json!({"items": 3, "units": 6}), "{out:#}");
        assert_eq!(
            (
                out["subtotal_cents"].clone(),
                out["discount_percent"].clone(),
                out["tax_rate_percent"].clone()
            ),
            (json!(10547), json!(5), json!(19)),
            "{out:#}"
        );
        assert_eq!(out["invoice_number"], "INV-A-1001");
        assert_eq!(out["total_cents"], 11924, "{out:#}");
        // A broken order stops at validation, and the rest is skipped.
        let job = s
            .enqueue(
                ADMIN,
                json!({"workflow": "order-pipeline", "input": {"order_id": "", "items": []}}),
            )
            .await;
        let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "failed", "{done:#}");
        assert_eq!(done["error"]["code"], "invalid_order", "{done:#}");
        assert_eq!(
            steps(&done)
                .iter()
                .map(|s| s.2.as_str())
                .collect::<Vec<_>>(),
            ["failed", "skipped", "skipped"]
        );
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_between_steps_resumes_at_the_next_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Served::spawn(dir.path(), &["--grace-ms", "2000"], Some(ADMIN));
    let c = Client::new(&server.url, ADMIN);
    c.task("prepare", "noop").await;
    c.task("slow", "limits").await;
    c.task("finish", "noop").await;
    let (status, body) = c
        .send(
            reqwest::Method::PUT,
            "/v1/workflows/resume",
            Some(json!({"steps": [
                {"name": "prepare", "task": "prepare"},
                {"name": "slow", "task": "slow"},
                {"name": "finish", "task": "finish"},
            ]})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, job) = c
        .post(
            "/v1/jobs",
            // Long enough that a poll slowed by a loaded machine still
            // sees the step running before it ends.
            json!({"workflow": "resume", "input": {"op": "sleep", "ms": 4000}}),
        )
        .await;
    assert_eq!(status, 201, "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    // Killed once the first step's result is committed and the second runs.
    c.until(&id, |j| {
        j["status"] == "running" && j["steps"][1]["status"] == "running"
    })
    .await;
    server.kill();

    let server = Served::spawn(dir.path(), &["--grace-ms", "2000"], Some(ADMIN));
    let c = Client::new(&server.url, ADMIN);
    let done = c.until(&id, |j| j["status"] == "completed").await;
    assert_eq!(done["output"]["slept_ms"], 4000, "{done:#}");
    let (_, attempts) = c.get(&format!("/v1/jobs/{id}/attempts")).await;
    let ran: Vec<(&str, &str)> = attempts["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["task"]["name"].as_str().unwrap(),
                a["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    // The first step ran once; the one the kill cut short ran again.
    assert_eq!(
        ran,
        [
            ("prepare", "completed"),
            ("slow", "retried"),
            ("slow", "completed"),
            ("finish", "completed"),
        ]
    );
    assert_eq!(
        steps(&done),
        [
            step("prepare", "step", "completed", 1),
            step("slow", "step", "completed", 2),
            step("finish", "step", "completed", 1),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_runs_a_workflow() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "prep", "noop", json!({})).await;
        s.task(ADMIN, "echo", "limits", json!({})).await;
        define(
            &s,
            "nightly",
            json!({"steps": [
                {"name": "prep", "task": "prep"},
                {"name": "echo", "task": "echo"},
            ]}),
        )
        .await;
        let (status, body) = s
            .call(
                Method::PUT,
                "/v1/schedules/yearly",
                ADMIN,
                Some(json!({"cron": "0 0 1 1 *", "workflow": "nope"})),
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let (status, body) = s
            .call(
                Method::PUT,
                "/v1/schedules/yearly",
                ADMIN,
                Some(json!({"cron": "0 0 1 1 *", "workflow": "nightly",
                            "input": {"op": "echo", "value": {"ran": true}}})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["workflow"], "nightly");
        let (status, fired) = s
            .post("/v1/schedules/yearly/trigger", ADMIN, json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{fired}");
        let id = fired["last_job"]["id"].as_str().unwrap().to_owned();
        let done = s.finished(ADMIN, &id).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        assert_eq!(done["output"]["ran"], true, "{done:#}");
        assert_eq!(done["workflow"]["name"], "nightly");
        assert_eq!(steps(&done).len(), 2);
        s.stop().await;
    })
    .await;
}
