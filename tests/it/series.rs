//! `GET /v1/series` against the real binary: the charts' figures add up
//! to the jobs and their attempt records (fuel and wall time by tenant and
//! task, jobs started and ended), the queue sampler's depth shows a
//! paused queue's waiting jobs, a tenant sees its own alone, and a bad
//! span is refused.

use crate::e2e::{Client, Served, ADMIN};
use crate::replay::ended;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn sum(values: &Value) -> u64 {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

/// Each named series' total in a stack.
fn totals(stack: &Value) -> BTreeMap<String, u64> {
    stack
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["total"].as_u64().unwrap(), sum(&s["values"]), "{s}");
            (
                s["name"].as_str().unwrap().to_owned(),
                s["total"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Fuel and wall time of every attempt of the client's jobs.
async fn burned(client: &Client) -> (u64, u64) {
    let (_, page) = client.get("/v1/jobs?limit=100").await;
    let mut out = (0, 0);
    for job in page["jobs"].as_array().unwrap() {
        let id = job["id"].as_str().unwrap();
        let (_, attempts) = client.get(&format!("/v1/jobs/{id}/attempts")).await;
        for a in attempts["attempts"].as_array().unwrap() {
            out.0 += a["fuel_used"].as_u64().unwrap();
            out.1 += a["duration_ms"].as_u64().unwrap();
        }
    }
    out
}

#[tokio::test]
async fn the_series_add_up_to_the_records_and_show_each_tenant_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let other_token = admin
        .mint(
            "other",
            &["tasks:write", "jobs:queue", "jobs:read", "jobs:run"],
        )
        .await;
    let other = Client::new(&served.url, &other_token);
    admin.task("work", "limits").await;
    other.task("work", "limits").await;
    let mut ids = Vec::new();
    for input in [
        json!({"op": "spin", "iterations": 200_000}),
        json!({"op": "spin", "iterations": 50_000}),
        json!({"op": "fail", "code": "nope", "retryable": false}),
    ] {
        let (status, job) = admin
            .post("/v1/jobs", json!({"task": "work", "input": input}))
            .await;
        assert_eq!(status, 201, "{job}");
        ids.push((&admin, job["id"].as_str().unwrap().to_owned()));
    }
    let (_, theirs) = other
        .post(
            "/v1/jobs",
            json!({"task": "work", "input": {"op": "spin", "iterations": 10}}),
        )
        .await;
    ids.push((&other, theirs["id"].as_str().unwrap().to_owned()));
    for (client, id) in &ids {
        ended(client, id).await;
    }

    let (status, all) = admin.get("/v1/series").await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(
        (all["span"].as_str(), all["bucket_ms"].as_i64()),
        (Some("hour"), Some(60_000))
    );
    assert_eq!(all["tenant"], Value::Null);
    assert_eq!(all["times"].as_array().unwrap().len(), 60);
    assert_eq!(sum(&all["jobs"]["started"]), 4, "{all}");
    assert_eq!(sum(&all["jobs"]["completed"]), 3, "{all}");
    assert_eq!(sum(&all["jobs"]["failed"]), 1, "{all}");
    let waited = all["start_wait_ms"]["p50"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v.is_number())
        .count();
    assert!(waited >= 1, "a wait where jobs started: {all}");
    let (mine, theirs) = (burned(&admin).await, burned(&other).await);
    let fuel = totals(&all["fuel"]["by_tenant"]);
    assert_eq!(
        fuel,
        BTreeMap::from([
            ("default".to_owned(), mine.0),
            ("other".to_owned(), theirs.0)
        ])
    );
    assert!(
        mine.0 > theirs.0,
        "the two tenants burn unlike amounts: {fuel:?}"
    );
    assert_eq!(
        totals(&all["fuel"]["by_task"]),
        BTreeMap::from([
            ("default/work".to_owned(), mine.0),
            ("other/work".to_owned(), theirs.0)
        ])
    );
    let wall = totals(&all["wall_ms"]["by_tenant"]);
    assert_eq!((wall["default"], wall["other"]), (mine.1, theirs.1));

    // One tenant's, as the admin asks for it and as its own token sees it.
    let (_, one) = admin.get("/v1/series?tenant=other").await;
    let (status, own) = other.get("/v1/series").await;
    assert_eq!(status, 200, "{own}");
    for s in [&one, &own] {
        assert_eq!(s["tenant"], "other", "{s}");
        assert_eq!(sum(&s["jobs"]["completed"]), 1, "{s}");
        assert_eq!(
            totals(&s["fuel"]["by_task"]),
            BTreeMap::from([("work".to_owned(), theirs.0)])
        );
    }
    let (status, refused) = other.get("/v1/series?tenant=default").await;
    assert_eq!(status, 403, "{refused}");
    let (status, bad) = admin.get("/v1/series?span=week").await;
    assert_eq!(status, 400, "{bad}");
    let (status, day) = admin.get("/v1/series?span=day").await;
    assert_eq!(status, 200, "{day}");
    assert_eq!(
        (
            day["times"].as_array().unwrap().len(),
            day["bucket_ms"].as_i64()
        ),
        (144, Some(600_000))
    );
    assert_eq!(sum(&day["jobs"]["started"]), 4, "{day}");

    // A paused queue's jobs wait: the sampler sees them within its rounds.
    let (status, body) = other.post("/v1/queues/held/pause", json!({})).await;
    assert!(status == 200 || status == 201, "{body}");
    for _ in 0..2 {
        let (status, job) = other
            .post(
                "/v1/jobs",
                json!({"task": "work", "queue": "held", "input": {"op": "spin", "iterations": 1}}),
            )
            .await;
        assert_eq!(status, 201, "{job}");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, s) = other.get("/v1/series").await;
        if status == 429 {
            // Polled past the tenant's read rate: told when to come back.
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        assert_eq!(status, 200, "{s}");
        let depth = totals(&s["queue_depth"]);
        if depth.get("held").is_some_and(|d| *d >= 2) {
            assert_eq!(s["oldest_wait_ms"].as_array().unwrap().len(), 60, "{s}");
            let (_, across) = admin.get("/v1/series").await;
            assert!(
                totals(&across["queue_depth"]).contains_key("other"),
                "{across}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the sampler never saw the held queue: {s}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
