//! Cron schedules through the API with real runners and the real clock:
//! definitions checked (a bad expression or zone is a 400 that names it),
//! scopes, read, pause, resume, trigger, delete; `overlap: skip` while the
//! last job runs; a `before` task that lets slots through or skips them.

use crate::server::{TestServer, ADMIN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use taskbox::store::clock::parse_rfc3339;

async fn put(s: &TestServer, token: &str, name: &str, body: Value) -> (StatusCode, Value) {
    s.call(
        Method::PUT,
        &format!("/v1/schedules/{name}"),
        token,
        Some(body),
    )
    .await
}

/// Polls the schedule until `done` holds (or panics after 30 s).
async fn until(s: &TestServer, name: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = s.get(&format!("/v1/schedules/{name}"), ADMIN).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if done(&body) {
            return body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the schedule never got there: {body:#}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every job of `task`, oldest first.
async fn jobs_of(s: &TestServer, task: &str) -> Vec<Value> {
    let (status, page) = s
        .get(&format!("/v1/jobs?task={task}&limit=500"), ADMIN)
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mut jobs = page["jobs"].as_array().unwrap().clone();
    jobs.reverse();
    jobs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_are_defined_read_and_refused_through_the_api() {
    let s = TestServer::start(1).await;
    let schema = json!({"type": "object", "required": ["op"]});
    s.task(ADMIN, "echo", "limits", json!({"input_schema": schema}))
        .await;
    let good = json!({"cron": "0 3 * * *", "task": "echo",
                      "input": {"op": "echo", "value": 1}, "timezone": "Europe/Berlin"});

    // A bad expression, a bad zone: 400s that name the problem.
    for (body, says) in [
        (json!({"cron": "0 3 * *", "task": "echo"}), "4 fields"),
        (json!({"cron": "0 3 * * 8", "task": "echo"}), "8"),
        (
            json!({"cron": "0 3 * * *", "task": "echo", "timezone": "Mars/Olympus"}),
            "Mars/Olympus",
        ),
        (
            json!({"cron": "0 3 * * *", "task": "echo", "overlapp": "skip"}),
            "overlapp",
        ),
        (
            json!({"cron": "0 3 * * *", "task": "echo", "overlap": "never"}),
            "never",
        ),
    ] {
        let (status, err) = put(&s, ADMIN, "nightly", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
    // What it names must exist, and its input must be one the task takes.
    let (status, err) = put(
        &s,
        ADMIN,
        "nightly",
        json!({"cron": "0 3 * * *", "task": "nope"}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert_eq!(err["error"]["code"], "INVALID_SCHEDULE");
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("\"nope\""));
    let (status, err) = put(
        &s,
        ADMIN,
        "nightly",
        json!({"cron": "0 3 * * *", "task": "echo", "before": "nope",
               "input": {"op": "echo", "value": 1}}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    let (status, err) = put(
        &s,
        ADMIN,
        "nightly",
        json!({"cron": "0 3 * * *", "task": "echo", "input": {}}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert_eq!(err["error"]["code"], "JOB_INVALID_INPUT");
    let (status, err) = put(&s, ADMIN, "Bad_Name", good.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");

    // Scopes: writing needs schedules:write; reading, that or jobs:read.
    let reader = s.tenant("other", &["jobs:read"]).await;
    let (status, _) = put(&s, &reader, "nightly", good.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, list) = s.get("/v1/schedules", &reader).await;
    assert_eq!((status, list), (StatusCode::OK, json!({"schedules": []})));

    // Defined: 201, then 200 for a new definition with the same slots.
    let (status, def) = put(&s, ADMIN, "nightly", good.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{def}");
    assert_eq!(def["timezone"], "Europe/Berlin");
    assert_eq!(def["overlap"], "skip");
    assert_eq!(def["enabled"], true);
    assert_eq!(
        (def["fired"].clone(), def["skipped"].clone()),
        (json!(0), json!(0))
    );
    let next = parse_rfc3339(def["next_slot"].as_str().unwrap()).unwrap();
    assert!(next > taskbox::store::Clock::now(&taskbox::store::SystemClock));
    let (status, again) = put(&s, ADMIN, "nightly", good.clone()).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["next_slot"], def["next_slot"]);
    // Another tenant sees none of it.
    let (status, err) = s.get("/v1/schedules/nightly", &reader).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert_eq!(err["error"]["code"], "SCHEDULE_NOT_FOUND");

    // Paused: no next slot; resumed: one after now.
    let (status, paused) = s
        .post("/v1/schedules/nightly/pause", ADMIN, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(
        (paused["enabled"].clone(), paused["next_slot"].clone()),
        (json!(false), Value::Null)
    );
    let (_, resumed) = s
        .post("/v1/schedules/nightly/resume", ADMIN, json!({}))
        .await;
    assert_eq!(resumed["enabled"], true);
    assert_eq!(resumed["next_slot"], def["next_slot"]);

    // A trigger fires it now, outside its slots; its job runs.
    let (status, fired) = s
        .post("/v1/schedules/nightly/trigger", ADMIN, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{fired}");
    let id = fired["last_job"]["id"].as_str().unwrap().to_owned();
    let job = s.finished(ADMIN, &id).await;
    assert_eq!(
        (job["status"].clone(), job["output"].clone()),
        (json!("completed"), json!(1))
    );
    let listed = until(&s, "nightly", |v| v["last_job"]["status"] == "completed").await;
    assert_eq!(listed["fired"], 1);
    let (_, list) = s.get("/v1/schedules", ADMIN).await;
    assert_eq!(list["schedules"][0]["name"], "nightly");

    // Deleted: gone, its job stays.
    let (status, _) = s
        .call(Method::DELETE, "/v1/schedules/nightly", ADMIN, None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = s.get("/v1/schedules/nightly", ADMIN).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = s
        .call(Method::DELETE, "/v1/schedules/nightly", ADMIN, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        s.get(&format!("/v1/jobs/{id}"), ADMIN).await.0,
        StatusCode::OK
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlap_skip_makes_no_job_while_the_last_one_runs() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "slow", "limits", json!({})).await;
    let (status, def) = put(
        &s,
        ADMIN,
        "every-second",
        json!({"cron": "* * * * * *", "task": "slow", "input": {"op": "sleep", "ms": 3_500}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{def}");
    // While the first job sleeps, the slots after it are skipped.
    let first = until(&s, "every-second", |v| v["last_job"]["status"] == "running").await;
    let first_id = first["last_job"]["id"].clone();
    let during = until(&s, "every-second", |v| v["skipped"].as_u64() >= Some(2)).await;
    assert_eq!(during["fired"], 1, "{during:#}");
    assert_eq!(during["last_job"]["id"], first_id);
    assert_eq!(jobs_of(&s, "slow").await.len(), 1);
    // Once it has ended, the next slot fires again.
    let after = until(&s, "every-second", |v| v["fired"].as_u64() >= Some(2)).await;
    let first_job = s
        .get(&format!("/v1/jobs/{}", first_id.as_str().unwrap()), ADMIN)
        .await
        .1;
    assert_eq!(first_job["status"], "completed");
    let second = jobs_of(&s, "slow").await;
    assert_eq!(second.len(), 2);
    // Its job was made after the first ended, not while it ran.
    let ended = parse_rfc3339(first_job["finished_at"].as_str().unwrap()).unwrap();
    let made = parse_rfc3339(second[1]["created_at"].as_str().unwrap()).unwrap();
    assert!(made >= ended, "made {made}, the first ended {ended}");
    assert!(after["skipped"].as_u64().unwrap() >= 2);
    s.post("/v1/schedules/every-second/pause", ADMIN, json!({}))
        .await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_before_task_lets_slots_through_or_skips_them() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "gate", "slot-gate", json!({})).await;
    s.task(ADMIN, "report", "limits", json!({})).await;
    // The gate lets even seconds through with the schedule's input and
    // the slot; odd ones it skips.
    let (status, def) = put(
        &s,
        ADMIN,
        "gated",
        json!({"cron": "* * * * * *", "task": "report", "before": "gate", "overlap": "allow",
               "input": {"every_nth_second": 2, "op": "echo", "value": "hi"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{def}");
    let done = until(&s, "gated", |v| {
        v["fired"].as_u64() >= Some(3) && v["skipped"].as_u64() >= Some(3)
    })
    .await;
    assert_eq!(done["before"], "gate");
    assert_eq!(done["last_error"], Value::Null, "{done:#}");
    s.post("/v1/schedules/gated/pause", ADMIN, json!({})).await;
    let reports = jobs_of(&s, "report").await;
    assert!(reports.len() >= 3);
    for r in &reports {
        let slot = r["input"]["slot"].as_str().unwrap();
        let ms = parse_rfc3339(slot).unwrap();
        assert_eq!(ms % 2_000, 0, "only even seconds go through: {slot}");
        assert_eq!(r["input"]["op"], "echo");
        assert!(r["input"].get("every_nth_second").is_none(), "{r}");
        assert_eq!(r["unique_key"], format!("schedule:gated:{ms}"));
    }
    // Each slot was put to the gate once: a before job per slot.
    let gates = jobs_of(&s, "gate").await;
    let mut slots: Vec<&str> = gates
        .iter()
        .map(|g| g["input"]["slot"].as_str().unwrap())
        .collect();
    let n = slots.len();
    slots.dedup();
    assert_eq!(slots.len(), n);
    s.stop().await;
}
