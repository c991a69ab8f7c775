//! Deterministic tasks against the real binary: a task declared
//! `"deterministic": true` runs each job on the job's own clock and random
//! seed, for a task component and for preview-2 and preview-1 commands, and
//! `taskbox job replay` in another process gives exactly the recorded output
//! and fuel, and says so, as two attempts of one job do; a plain task's
//! replay does not, and says that too.
//! Such a task may not declare network access or secrets.

use crate::e2e::{Client, Served, ADMIN};
use crate::replay::{ended, replay};
use serde_json::{json, Value};

/// Defines `name` on `guest`'s component, deterministic or not, retried
/// at once after a retryable failure.
async fn define(admin: &Client, name: &str, guest: &str, deterministic: bool) {
    let digest = admin.upload(guest).await;
    let retry = json!({"max_attempts": 2, "backoff": {"kind": "fixed", "delay_ms": 1}});
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            &format!("/v1/tasks/{name}"),
            Some(json!({"component": digest, "deterministic": deterministic, "retry": retry})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (_, shown) = admin.get(&format!("/v1/tasks/{name}")).await;
    let declared = shown["definition"]["deterministic"].as_bool();
    assert_eq!(declared.unwrap_or(false), deterministic, "{shown}");
}

/// The job's attempts, as the API lists them.
async fn attempts(admin: &Client, id: &str) -> Vec<Value> {
    let (status, page) = admin.get(&format!("/v1/jobs/{id}/attempts")).await;
    assert_eq!(status, 200, "{page}");
    page["attempts"].as_array().unwrap().clone()
}

async fn run(admin: &Client, task: &str, input: Value) -> Value {
    let (status, job) = admin
        .post("/v1/jobs", json!({"task": task, "input": input}))
        .await;
    assert_eq!(status, 201, "{job}");
    let done = ended(admin, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    done
}

fn ns(v: &Value, field: &str) -> u64 {
    v[field]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

#[tokio::test]
async fn a_deterministic_tasks_jobs_replay_exactly_and_a_plain_tasks_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    define(&admin, "pure", "limits", true).await;
    define(&admin, "plain", "limits", false).await;
    let clock = json!({"op": "clock", "iterations": 20_000});

    let done = run(&admin, "pure", clock.clone()).await;
    let id = done["id"].as_str().unwrap();
    let output = &done["output"];
    let fuel = attempts(&admin, id).await[0]["fuel_used"].as_u64().unwrap();
    // The clock starts at the job's creation (its id's millisecond) and
    // moves by the fuel spent, not by the time the attempt took.
    let created_ns = ulid::Ulid::from_string(id).unwrap().timestamp_ms() * 1_000_000;
    let wall = ns(output, "wall_ns");
    assert!(wall >= created_ns && wall - created_ns < fuel, "{done}");

    // Replayed twice, each in a process of its own: exactly what ran.
    for _ in 0..2 {
        let (code, r, stderr) = replay(&served.url, id, &[]);
        assert_eq!(code, Some(0), "{r}\n{stderr}");
        assert_eq!(r["deterministic"], true, "{r}");
        assert_eq!(r["exact"], true, "{r}");
        assert_eq!(&r["replayed"]["output"], output, "{r}");
        assert_eq!(&r["recorded_output"], output, "{r}");
        assert_eq!(r["replayed"]["fuel_used"], fuel, "{r}");
    }
    // Two attempts of one job read the same clock and numbers, and burn
    // the same fuel: a job failing (retryably) with what it read, twice.
    let (_, job) = admin
        .post(
            "/v1/jobs",
            json!({"task": "pure", "input": {"op": "clock", "iterations": 20_000, "fail": true}}),
        )
        .await;
    let twice = job["id"].as_str().unwrap();
    let failed = ended(&admin, twice).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let both = attempts(&admin, twice).await;
    assert_eq!(both.len(), 2, "{both:?}");
    assert_eq!(both[0]["error"]["code"], "clock", "{both:?}");
    assert_eq!(
        both[0]["error"]["message"], both[1]["error"]["message"],
        "{both:?}"
    );
    assert_eq!(both[0]["fuel_used"], both[1]["fuel_used"], "{both:?}");
    for n in ["1", "2"] {
        let (code, r, stderr) = replay(&served.url, twice, &["--attempt", n]);
        assert_eq!(code, Some(1), "failed as recorded: {r}\n{stderr}");
        assert_eq!(r["exact"], true, "{r}");
        assert_eq!(
            r["replayed"]["error"]["message"], both[0]["error"]["message"],
            "{r}"
        );
    }

    // Another job of the same input draws other numbers.
    let again = run(&admin, "pure", clock.clone()).await;
    assert_ne!(again["output"]["random"], output["random"], "{again}");

    // A plain task reads the real clock and random source: its replay ends
    // as it did, but with another output, and says it is not exact.
    let plain = run(&admin, "plain", clock).await;
    let (code, r, stderr) = replay(&served.url, plain["id"].as_str().unwrap(), &[]);
    assert_eq!(code, Some(0), "{r}\n{stderr}");
    assert_eq!(r["deterministic"], false, "{r}");
    assert_eq!(r["same_output"], false, "{r}");
    assert_eq!(r["exact"], false, "{r}");
}

#[tokio::test]
async fn commands_of_either_preview_run_deterministically_too() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    for guest in ["command-p2", "command-p1"] {
        define(&admin, guest, guest, true).await;
        let done = run(&admin, guest, json!({"clock": 20_000})).await;
        let id = done["id"].as_str().unwrap();
        let clock = &done["output"]["clock"];
        let created_ns = ulid::Ulid::from_string(id).unwrap().timestamp_ms() * 1_000_000;
        let fuel = attempts(&admin, id).await[0]["fuel_used"].as_u64().unwrap();
        let wall = ns(clock, "wall_ns");
        assert!(
            wall >= created_ns && wall - created_ns < fuel,
            "{guest}: {done}"
        );
        assert!(ns(clock, "elapsed_ns") < fuel, "{guest}: {done}");
        let (code, r, stderr) = replay(&served.url, id, &[]);
        assert_eq!(code, Some(0), "{guest}: {r}\n{stderr}");
        assert_eq!(r["exact"], true, "{guest}: {r}");
        assert_eq!(r["replayed"]["output"], done["output"], "{guest}: {r}");
    }
}

#[tokio::test]
async fn a_deterministic_task_may_not_declare_network_or_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let digest = admin.upload("limits").await;
    for (extra, named) in [
        (
            json!({"network": {"allow": ["api.example.com"]}}),
            "network",
        ),
        (json!({"secrets": ["STRIPE_KEY"]}), "secrets"),
    ] {
        let mut spec = json!({"component": digest, "deterministic": true});
        spec.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (status, body) = admin
            .send(reqwest::Method::PUT, "/v1/tasks/pure", Some(spec.clone()))
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["error"]["code"], "INVALID_TASK", "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("may not declare {named}")),
            "{body}"
        );
        // Without `deterministic` the same grant is accepted.
        spec["deterministic"] = json!(false);
        let (status, body) = admin
            .send(reqwest::Method::PUT, "/v1/tasks/pure", Some(spec))
            .await;
        assert_eq!(status, 201, "{body}");
    }
}

#[tokio::test]
async fn a_cached_job_completes_without_an_attempt_and_never_across_tenants() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let other = Client::new(
        &served.url,
        &admin
            .mint("other", &["tasks:write", "jobs:queue", "jobs:read"])
            .await,
    );
    let spec = |digest: &str| json!({"component": digest, "deterministic": true, "cache": {"ttl_ms": 600_000}});
    for client in [&admin, &other] {
        let digest = client.upload("limits").await;
        let (status, body) = client
            .send(
                reqwest::Method::PUT,
                "/v1/tasks/cached",
                Some(spec(&digest)),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }
    // A cache without determinism is refused.
    let digest = admin.upload("limits").await;
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            "/v1/tasks/impure",
            Some(json!({"component": digest, "cache": {"ttl_ms": 1000}})),
        )
        .await;
    assert_eq!(status, 422, "{body}");

    let ran = run(
        &admin,
        "cached",
        json!({"op": "clock", "iterations": 20_000}),
    )
    .await;
    let ran_id = ran["id"].as_str().unwrap();
    let fuel = attempts(&admin, ran_id).await[0]["fuel_used"]
        .as_u64()
        .unwrap();
    // The same input (its keys in another order): completed in the answer
    // to the enqueue, with the first job's output and no attempt.
    let (status, hit) = admin
        .post(
            "/v1/jobs",
            json!({"task": "cached", "input": {"iterations": 20_000, "op": "clock"}}),
        )
        .await;
    assert_eq!(status, 201, "{hit}");
    assert_eq!(hit["status"], "completed", "{hit}");
    assert_eq!(hit["cached_from"], ran_id, "{hit}");
    assert_eq!(hit["output"], ran["output"], "{hit}");
    assert_eq!(hit["attempts"], 0, "{hit}");
    let hit_id = hit["id"].as_str().unwrap();
    let (_, shown) = admin.get(&format!("/v1/jobs/{hit_id}")).await;
    assert_eq!(shown["cached_from"], ran_id, "{shown}");
    assert!(attempts(&admin, hit_id).await.is_empty());
    // Nothing to replay: the bundle names the job that ran.
    let (status, body) = admin.get(&format!("/v1/jobs/{hit_id}/bundle")).await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains(ran_id),
        "{body}"
    );
    // Another input runs.
    let fresh = run(
        &admin,
        "cached",
        json!({"op": "clock", "iterations": 20_001}),
    )
    .await;
    assert!(fresh.get("cached_from").is_none(), "{fresh}");

    // Another tenant's identical job does not hit: it runs, on its own clock.
    let (status, theirs) = other
        .post(
            "/v1/jobs",
            json!({"task": "cached", "input": {"op": "clock", "iterations": 20_000}}),
        )
        .await;
    assert_eq!(status, 201, "{theirs}");
    assert!(theirs.get("cached_from").is_none(), "{theirs}");
    let theirs = ended(&other, theirs["id"].as_str().unwrap()).await;
    assert_eq!(theirs["status"], "completed", "{theirs}");
    assert_ne!(
        theirs["output"]["random"], ran["output"]["random"],
        "{theirs}"
    );

    // Usage counts the hit and the fuel it saved, for its tenant alone.
    let (_, usage) = admin.get("/v1/usage").await;
    let sum = |field: &str| {
        usage["current"][field].as_u64().unwrap() + usage["last"][field].as_u64().unwrap()
    };
    assert_eq!((sum("cache_hits"), sum("fuel_saved")), (1, fuel), "{usage}");
    let (_, theirs) = other.get("/v1/usage").await;
    assert_eq!(theirs["current"]["cache_hits"], 0, "{theirs}");
}
