//! Canary rollouts against the real binary: a version staged at 25 % pins
//! about a quarter of 400 new jobs (exactly those whose id's bucket falls
//! in the share), each runs its own version's component, and the task and
//! the metrics show each version's completions and fuel since the rollout
//! began; the share ramps, promote makes the staged version live, and
//! rollback drops one while the jobs already pinned to it still run it.
//! The CLI stages, shows, ramps and rolls back.

use crate::e2e::{Client, Served, ADMIN};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use taskbox::registry::rollout::takes_staged;

async fn put(admin: &Client, name: &str, body: Value) -> (u16, Value) {
    admin
        .send(
            reqwest::Method::PUT,
            &format!("/v1/tasks/{name}"),
            Some(body),
        )
        .await
}

/// Enqueues `n` jobs of `task` in one batch; their views.
async fn enqueue(admin: &Client, task: &str, n: usize) -> Vec<Value> {
    let jobs: Vec<Value> = (0..n)
        .map(|_| json!({"task": task, "input": {"op": "spin", "iterations": 2000}}))
        .collect();
    let (status, body) = admin.post("/v1/jobs/batch", json!({ "jobs": jobs })).await;
    assert_eq!(status, 200, "{body}");
    let jobs = body["jobs"].as_array().unwrap().clone();
    assert!(jobs.iter().all(|j| j["id"].is_string()), "{body}");
    jobs
}

fn versions(jobs: &[Value]) -> Vec<u64> {
    jobs.iter()
        .map(|j| j["task"]["version"].as_u64().unwrap())
        .collect()
}

/// The task as `GET /v1/tasks/{name}` shows it, once `pred` holds.
async fn task_until(admin: &Client, name: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (status, task) = admin.get(&format!("/v1/tasks/{name}")).await;
        assert_eq!(status, 200, "{task}");
        if pred(&task) {
            return task;
        }
        assert!(Instant::now() < deadline, "never got there: {task:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn states(task: &Value) -> Vec<(u64, String)> {
    task["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version"].as_u64().unwrap(),
                v["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_pins_its_share_and_promote_and_rollback_move_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let old = admin.task("canary", "noop").await;
    let new = admin.upload("limits").await;

    // A first version has nothing to be rolled out beside.
    let (status, body) = put(
        &admin,
        "fresh",
        json!({"component": old, "rollout": {"percent": 10}}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no live version"),
        "{body}"
    );
    let (status, body) = put(
        &admin,
        "canary",
        json!({"component": new, "rollout": {"percent": 101}}),
    )
    .await;
    assert_eq!(status, 422, "{body}");

    let (status, body) = put(
        &admin,
        "canary",
        json!({"component": new, "rollout": {"percent": 25}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        (body["version"].as_u64(), body["rollout_percent"].as_u64()),
        (Some(2), Some(25))
    );
    let (_, shown) = admin.get("/v1/tasks/canary").await;
    assert_eq!(shown["version"], 1, "{shown}");
    assert_eq!(shown["digest"], old.as_str(), "{shown}");
    assert_eq!(shown["rollout"]["version"], 2, "{shown}");
    assert_eq!(shown["rollout"]["live_version"], 1, "{shown}");
    assert_eq!(shown["rollout"]["percent"], 25, "{shown}");
    assert!(shown["definition"].get("rollout").is_none(), "{shown}");
    assert_eq!(
        states(&shown),
        vec![(1, "live".into()), (2, "staged".into())]
    );
    // No other version while one is being rolled out.
    let (status, body) = put(&admin, "canary", json!({"component": old})).await;
    assert_eq!(status, 409, "{body}");

    // 400 jobs: each pins the staged version exactly when its id's bucket
    // is in the share, about a quarter of them (binomial: mean 100, sd
    // 8.7; 4.5 sd either side).
    let jobs = enqueue(&admin, "canary", 400).await;
    let mut staged = 0;
    for j in &jobs {
        let id = j["id"].as_str().unwrap();
        let version = j["task"]["version"].as_u64().unwrap();
        assert_eq!(version == 2, takes_staged(id, 25), "{j}");
        let digest = if version == 2 { &new } else { &old };
        assert_eq!(j["task"]["digest"], digest.as_str(), "{j}");
        staged += usize::from(version == 2);
    }
    assert!((61..=139).contains(&staged), "{staged} of 400 staged");

    // Each runs its version's component; the task shows what each did.
    let task = task_until(&admin, "canary", |t| {
        let f = &t["rollout"]["figures"];
        f[0]["completed"].as_u64().unwrap_or(0) + f[1]["completed"].as_u64().unwrap_or(0) == 400
    })
    .await;
    let figures = &task["rollout"]["figures"];
    assert_eq!(figures[0]["version"], 2, "{task}");
    assert_eq!(figures[0]["completed"], staged as u64, "{task}");
    assert_eq!(figures[1]["completed"], (400 - staged) as u64, "{task}");
    assert_eq!(figures[0]["attempts"], staged as u64, "{task}");
    assert_eq!(figures[0]["failed"], 0, "{task}");
    // The staged version spins; the live one does nothing.
    let per = |f: &Value| f["fuel"].as_u64().unwrap() / f["attempts"].as_u64().unwrap();
    assert!(per(&figures[0]) > per(&figures[1]), "{task}");
    let one_staged = jobs.iter().find(|j| j["task"]["version"] == 2).unwrap();
    let done = admin
        .until(one_staged["id"].as_str().unwrap(), |j| {
            j["status"] == "completed"
        })
        .await;
    assert!(done["output"]["result"].is_number(), "{done}");
    let (status, text) = admin.get("/metrics").await;
    assert_eq!(status, 200);
    let text = text.as_str().unwrap();
    let line = format!(
        "taskbox_rollout_jobs{{tenant=\"default\",task=\"canary\",version=\"2\",role=\"staged\",status=\"completed\"}} {staged}"
    );
    assert!(text.contains(&line), "{line}\n{text}");
    assert!(
        text.contains(
            "taskbox_rollout_percent{tenant=\"default\",task=\"canary\",version=\"2\",role=\"staged\"} 25"
        ),
        "{text}"
    );

    // The share ramps down to none, then promote moves every new job.
    let (status, body) = admin
        .post("/v1/tasks/canary/rollout", json!({"percent": 0}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["rollout"]["percent"], 0, "{body}");
    assert!(versions(&enqueue(&admin, "canary", 20).await)
        .iter()
        .all(|v| *v == 1));
    let (status, body) = admin.post("/v1/tasks/canary/promote", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["version"].as_u64(), body["digest"].as_str()),
        (Some(2), Some(new.as_str()))
    );
    assert!(body.get("rollout").is_none(), "{body}");
    assert_eq!(
        states(&body),
        vec![(1, "superseded".into()), (2, "live".into())]
    );
    assert!(versions(&enqueue(&admin, "canary", 20).await)
        .iter()
        .all(|v| *v == 2));
    let (status, body) = admin.post("/v1/tasks/canary/promote", json!({})).await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = admin.post("/v1/tasks/nothing/rollback", json!({})).await;
    assert_eq!(status, 404, "{body}");

    // Rolled back: new jobs pin the live version again, and jobs pinned to
    // the dropped one still run it.
    let (status, body) = put(
        &admin,
        "canary",
        json!({"component": old, "rollout": {"percent": 100}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, _) = admin.post("/v1/queues/default/pause", json!({})).await;
    assert_eq!(status, 200);
    let pinned = enqueue(&admin, "canary", 5).await;
    assert_eq!(versions(&pinned), vec![3; 5]);
    let (status, body) = admin.post("/v1/tasks/canary/rollback", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], 2, "{body}");
    assert_eq!(
        states(&body),
        vec![
            (1, "superseded".into()),
            (2, "live".into()),
            (3, "rolled_back".into())
        ]
    );
    assert!(versions(&enqueue(&admin, "canary", 20).await)
        .iter()
        .all(|v| *v == 2));
    let (status, _) = admin.post("/v1/queues/default/resume", json!({})).await;
    assert_eq!(status, 200);
    for j in &pinned {
        let done = admin
            .until(j["id"].as_str().unwrap(), |j| j["status"] == "completed")
            .await;
        assert_eq!(done["task"]["version"], 3, "{done}");
        assert_eq!(done["output"], json!({}), "v3 is noop's: {done}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_stages_shows_ramps_and_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let guests = crate::common::guests_dir();
    let noop = guests.join("noop.wasm");
    let limits = guests.join("limits.wasm");
    let (code, out, err) = served.cli(&["task", "push", "cli-canary", noop.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, out, err) = served.cli(&[
        "task",
        "push",
        "cli-canary",
        limits.to_str().unwrap(),
        "--rollout",
        "10",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("staged for 10 % of new jobs"), "{out}");
    let (code, out, err) = served.cli(&["task", "rollout", "cli-canary", "50"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("rollout: version 2 for 50 % of new jobs beside version 1"),
        "{out}"
    );
    assert!(out.contains("staged"), "{out}");
    let (code, out, err) = served.cli(&["task", "rollout", "cli-canary", "101"]);
    assert_ne!(code, Some(0), "{out}{err}");
    let (code, out, err) = served.cli(&["task", "rollback", "cli-canary", "--json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], 1, "{v}");
    let (code, out, err) = served.cli(&["task", "show", "cli-canary"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("rolled back"), "{out}");
    let (code, out, err) = served.cli(&["task", "promote", "cli-canary"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("no version being rolled out"), "{err}");
}
