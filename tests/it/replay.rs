//! `taskbox job replay` against the real binary: a failed attempt's bundle
//! downloaded and run again here reproduces its error kind and its fuel
//! (the guest is deterministic), for a guest's own failure and for a fuel
//! limit; the bundle is another tenant's "not found" and needs `jobs:read`.

use crate::e2e::{Client, Served, ADMIN};
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) async fn ended(client: &Client, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, job) = client.get(&format!("/v1/jobs/{id}")).await;
        if matches!(
            job["status"].as_str(),
            Some("completed" | "failed" | "cancelled")
        ) {
            return job;
        }
        assert!(Instant::now() < deadline, "job {id} did not end: {job}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `taskbox job replay ID --json …` as a user runs it.
pub(crate) fn replay(url: &str, id: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_taskbox"))
        .args(["job", "replay", id, "--json"])
        .args(extra)
        .env("TASKBOX_URL", url)
        .env("TASKBOX_TOKEN", ADMIN)
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code(), v, stderr)
}

#[tokio::test]
async fn a_failed_attempt_replays_with_its_error_kind_and_fuel() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    admin.task("limits", "limits").await;
    // A task with a small fuel budget: a long spin runs out of it.
    let digest = admin.upload("limits").await;
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            "/v1/tasks/tight",
            Some(json!({"component": digest, "limits": {"fuel": 2_000_000}, "retry": {"max_attempts": 1}})),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    let (_, failing) = admin
        .post(
            "/v1/jobs",
            json!({"task": "limits", "input": {"op": "fail", "code": "nope", "retryable": false}}),
        )
        .await;
    let (_, spinning) = admin
        .post(
            "/v1/jobs",
            json!({"task": "tight", "input": {"op": "spin", "iterations": 1_000_000_000u64}}),
        )
        .await;
    for (job, kind) in [(&failing, "task_failed"), (&spinning, "fuel_exhausted")] {
        let id = job["id"].as_str().unwrap();
        let done = ended(&admin, id).await;
        assert_eq!(done["status"], "failed", "{done}");
        assert_eq!(done["error"]["kind"], kind, "{done}");
        let (code, r, stderr) = replay(&served.url, id, &[]);
        assert_eq!(code, Some(1), "failed again, as recorded: {r}\n{stderr}");
        assert_eq!(r["replayed"]["error"]["kind"], kind, "{r}");
        assert_eq!(r["same_ending"], true, "{r}");
        assert_eq!(
            r["replayed"]["fuel_used"], r["recorded"]["fuel_used"],
            "a deterministic guest burns the same fuel: {r}"
        );
        assert!(r["recorded"]["fuel_used"].as_u64().unwrap() > 0, "{r}");
    }
    // The bundle itself: the pinned component, the input, the limits.
    let id = spinning["id"].as_str().unwrap();
    let (status, bundle) = admin.get(&format!("/v1/jobs/{id}/bundle")).await;
    assert_eq!(status, 200);
    assert_eq!(bundle["component"]["digest"], digest.as_str());
    assert_eq!(bundle["input"]["op"], "spin");
    assert_eq!(bundle["limits"]["fuel"], 2_000_000);
    let (status, _) = admin.get(&format!("/v1/jobs/{id}/bundle?attempt=9")).await;
    assert_eq!(status, 400, "no such attempt");
    // --save writes what it ran.
    let saved = tempfile::tempdir().unwrap();
    let (code, _, stderr) = replay(&served.url, id, &["--save", saved.path().to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(saved.path().join("component.wasm").is_file());

    // Another tenant sees no such job; a token without jobs:read is refused.
    let other = Client::new(&served.url, &admin.mint("other", &["jobs:read"]).await);
    let (status, _) = other.get(&format!("/v1/jobs/{id}/bundle")).await;
    assert_eq!(status, 404);
    let queue_only = Client::new(&served.url, &admin.mint("other", &["jobs:queue"]).await);
    let (status, _) = queue_only.get(&format!("/v1/jobs/{id}/bundle")).await;
    assert_eq!(status, 403);
}
