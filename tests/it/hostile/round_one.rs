//! The holes a hostile tenant could use to stop the service for everyone,
//! each reproduced through the API: an abandoned run-now, run-now beyond
//! the slots, a schema that makes validation exponential, a tenant that
//! floods at the best priority, a snooze loop, and the smaller ones (a page
//! of jobs without a bound, attempts without pages, a concurrency key
//! without a length, a health check that tells internals).

use crate::server::{TestServer, ADMIN, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// A request must never own an attempt: a client that goes away in the
/// middle of `run?wait=true` leaves the job to finish and the slot free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_run_now_leaves_the_runner_whole() {
    let s = TestServer::start(1).await;
    s.task(ADMIN, "t", "limits", json!({})).await;
    let slow = s
        .enqueue(
            ADMIN,
            json!({"task": "t", "input": {"op": "sleep", "ms": 400}, "delay_ms": 3_600_000}),
        )
        .await;
    let id = slow["id"].as_str().unwrap().to_owned();
    let path = format!("/v1/jobs/{id}/run?wait=true");
    let run = s.call(Method::POST, &path, ADMIN, None);
    // The client goes away once the attempt is under way.
    tokio::select! {
        r = run => panic!("the attempt ended before the client left: {r:?}"),
        _ = s.until(ADMIN, &id, |j| j["status"] == "running") => {}
    }
    assert_eq!(s.finished(ADMIN, &id).await["status"], "completed");
    let next = s
        .enqueue(
            ADMIN,
            json!({"task": "t", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    let done = s.finished(ADMIN, next["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "the slot is free again");
    s.stop().await;
}

/// Run-now takes a slot like any claimed job: with one slot, three jobs
/// run now run one after another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_now_takes_a_slot() {
    let s = TestServer::start(1).await;
    s.task(ADMIN, "t", "limits", json!({})).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let j = s
            .enqueue(
                ADMIN,
                json!({"task": "t", "input": {"op": "sleep", "ms": 150}, "delay_ms": 3_600_000}),
            )
            .await;
        ids.push(j["id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        let (status, body) = s
            .call(Method::POST, &format!("/v1/jobs/{id}/run"), ADMIN, None)
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
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
        assert!(pair[0].1 <= pair[1].0, "attempts ran at once: {pair:?}");
    }
    s.stop().await;
}

/// A recursive `anyOf` over `$ref` made the validator's work exponential
/// in the input's depth (no answer within a minute at 22 levels); a fan
/// of shared `$ref`s does the same to a plain number. Each check is bounded
/// now, and one past the bound is refused naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_schema_costs_a_bounded_check() {
    let s = TestServer::start(0).await;
    let recursive = json!({"$defs": {"n": {"anyOf": [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["z"]},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["y"]}
    ]}}, "$ref": "#/$defs/n"});
    s.task(ADMIN, "rec", "noop", json!({"input_schema": recursive}))
        .await;
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!({ "a": deep });
    }
    let answer = tokio::time::timeout(
        Duration::from_secs(60),
        s.post("/v1/jobs", ADMIN, json!({"task": "rec", "input": deep})),
    )
    .await
    .expect("an answer, not a core spinning");
    assert_eq!(answer.0, StatusCode::BAD_REQUEST, "{}", answer.1);
    assert_eq!(answer.1["error"]["code"], "JOB_INVALID_INPUT");

    let mut defs = Map::new();
    for i in 0..40 {
        let r = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"oneOf": [{"$ref": r}, {"$ref": r}]}),
        );
    }
    defs.insert("d40".into(), json!(false));
    s.task(
        ADMIN,
        "fan",
        "noop",
        json!({"input_schema": {"$defs": defs, "$ref": "#/$defs/d0"}}),
    )
    .await;
    let (status, body) = tokio::time::timeout(
        Duration::from_secs(60),
        s.post("/v1/jobs", ADMIN, json!({"task": "fan", "input": 1})),
    )
    .await
    .expect("an answer, not a core spinning");
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let said = body["error"]["details"][0]["message"].as_str().unwrap();
    assert!(said.contains("steps"), "the bound is named: {said}");

    // Input nesting and schema size are bounded too.
    let mut nested = json!(1);
    for _ in 0..100 {
        nested = json!([nested]);
    }
    s.task(ADMIN, "any", "noop", json!({"input_schema": {}}))
        .await;
    let (status, body) = s
        .post("/v1/jobs", ADMIN, json!({"task": "any", "input": nested}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("levels deep"), "{body}");
    let digest = s.upload(ADMIN, "noop").await;
    let huge = json!({"enum": ["x".repeat(300 * 1024)]});
    let (status, body) = s
        .call(
            Method::PUT,
            "/v1/tasks/huge",
            ADMIN,
            Some(json!({"component": digest, "input_schema": huge})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    // And an ordinary input is as welcome as ever.
    let (status, body) = s
        .post("/v1/jobs", ADMIN, json!({"task": "any", "input": {"n": 1}}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    s.stop().await;
}

/// A server with one slot, and two tenants with task `t` (the limits
/// guest): the server and each tenant's token.
async fn two_tenants(a: &str, b: &str) -> (TestServer, String, String) {
    let s = TestServer::start(1).await;
    let ta = s.tenant(a, ALL_SCOPES).await;
    let tb = s.tenant(b, ALL_SCOPES).await;
    s.task(&ta, "t", "limits", json!({})).await;
    s.task(&tb, "t", "limits", json!({})).await;
    (s, ta, tb)
}

/// A tenant with a backlog at the best priority and a `run_at` in the past
/// gets its share of the runner, not all of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tenant_cannot_starve_another() {
    let (s, flood, quiet) = two_tenants("flood", "quiet").await;
    for _ in 0..60 {
        let j = s
            .enqueue(
                &flood,
                json!({"task": "t", "input": {"op": "sleep", "ms": 20}, "priority": -1000,
                       "run_at": "2000-01-01T00:00:00Z"}),
            )
            .await;
        assert!(
            j["run_at"].as_str() >= j["created_at"].as_str(),
            "a run_at in the past is now: {j}"
        );
    }
    let b = s
        .enqueue(
            &quiet,
            json!({"task": "t", "input": {"op": "echo", "value": 1}, "priority": 1000}),
        )
        .await;
    let done = s.finished(&quiet, b["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed");
    let (_, waiting) = s.get("/v1/jobs?status=queued&limit=500", &flood).await;
    let left = waiting["jobs"].as_array().unwrap().len();
    assert!(
        left >= 30,
        "the quiet tenant's job ran while the flood waited its turn ({left} left)"
    );
    s.stop().await;
}

/// A tenant with nothing waiting or running here starts its job beside a
/// runner whose every slot another tenant's long attempts fill: it is
/// claimed for at once, not after the batch (or the slot) it would
/// otherwise wait for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sparse_tenant_starts_beside_a_full_runner() {
    let (s, busy, quiet) = two_tenants("busy", "quiet").await;
    let mut long = Vec::new();
    for _ in 0..3 {
        let j = s
            .enqueue(
                &busy,
                json!({"task": "t", "input": {"op": "sleep", "ms": 4000}}),
            )
            .await;
        long.push(j["id"].as_str().unwrap().to_owned());
    }
    s.until(&busy, &long[0], |j| j["status"] == "running").await;
    let q = s
        .enqueue(
            &quiet,
            json!({"task": "t", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    let done = s.finished(&quiet, q["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed");
    let (_, first) = s.get(&format!("/v1/jobs/{}", long[0]), &busy).await;
    assert_eq!(
        first["status"], "running",
        "the quiet tenant's job ran beside the busy one's, not after it"
    );
    for id in &long {
        s.post(&format!("/v1/jobs/{id}/cancel"), &busy, json!({}))
            .await;
    }
    s.stop().await;
}

/// A guest answering `snooze(0)` for ever looped for ever, an attempt row
/// each time; now each snooze waits at least the floor, and the snooze
/// after the cap fails the job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snooze_loop_ends() {
    let s = TestServer::start_with(1, |c| {
        c.rules.snooze_floor_ms = 40;
        c.rules.max_snoozes = 3;
    })
    .await;
    s.task(ADMIN, "t", "limits", json!({})).await;
    let j = s
        .enqueue(
            ADMIN,
            json!({"task": "t", "input": {"op": "snooze", "ms": 0}}),
        )
        .await;
    let done = s.finished(ADMIN, j["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed", "{done:#}");
    assert_eq!(done["error"]["code"], "too_many_snoozes");
    let attempts = s.attempts(ADMIN, j["id"].as_str().unwrap()).await;
    let outcomes: Vec<&str> = attempts
        .iter()
        .map(|a| a["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["snoozed", "snoozed", "snoozed", "failed"]);
    let ms =
        |a: &Value, k: &str| taskbox::store::clock::parse_rfc3339(a[k].as_str().unwrap()).unwrap();
    for pair in attempts.windows(2) {
        assert!(
            ms(&pair[1], "started_at") - ms(&pair[0], "finished_at") >= 40,
            "a snooze of 0 waits the floor: {pair:?}"
        );
    }
    s.stop().await;
}

/// A page of jobs holds at most a bounded number of bytes of inputs and
/// outputs, whatever `limit` asks for; the rest follow the cursor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_jobs_is_bounded_in_bytes() {
    let s = TestServer::start(0).await;
    s.task(ADMIN, "t", "noop", json!({})).await;
    let pad = "x".repeat(300 * 1024);
    for _ in 0..40 {
        s.enqueue(ADMIN, json!({"task": "t", "input": {"pad": pad}}))
            .await;
    }
    let mut seen = 0;
    let mut cursor = String::new();
    let mut pages = 0;
    loop {
        let (status, page) = s
            .get(&format!("/v1/jobs?limit=500&cursor={cursor}"), ADMIN)
            .await;
        assert_eq!(status, StatusCode::OK);
        let n = page["jobs"].as_array().unwrap().len();
        assert!(n < 40, "a page of {n} jobs of 300 KiB each");
        seen += n;
        pages += 1;
        match page["next_cursor"].as_str() {
            Some(c) => cursor = c.to_owned(),
            None => break,
        }
    }
    assert_eq!(seen, 40, "every job is listed, over {pages} pages");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attempts_are_listed_a_page_at_a_time() {
    let s = TestServer::start(1).await;
    s.task(
        ADMIN,
        "flaky",
        "flaky",
        json!({"retry": {"max_attempts": 5, "backoff": {"kind": "fixed", "delay_ms": 1, "jitter": 0.0}}}),
    )
    .await;
    let j = s
        .enqueue(
            ADMIN,
            json!({"task": "flaky", "input": {"succeed_on_attempt": 5}}),
        )
        .await;
    let id = j["id"].as_str().unwrap();
    assert_eq!(s.finished(ADMIN, id).await["status"], "completed");
    let (_, p1) = s
        .get(&format!("/v1/jobs/{id}/attempts?limit=2"), ADMIN)
        .await;
    let numbers = |p: &Value| -> Vec<u64> {
        p["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["attempt"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(numbers(&p1), [1, 2], "{p1}");
    let (_, p2) = s
        .get(
            &format!(
                "/v1/jobs/{id}/attempts?limit=2&cursor={}",
                p1["next_cursor"]
            ),
            ADMIN,
        )
        .await;
    assert_eq!(numbers(&p2), [3, 4]);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrency_key_from_the_input_is_capped() {
    let s = TestServer::start(0).await;
    s.task(
        ADMIN,
        "t",
        "noop",
        json!({"concurrency": {"key": "/account", "mode": "exclusive"}}),
    )
    .await;
    let (status, body) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "t", "input": {"account": "a".repeat(300)}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["details"][0]["pointer"], "/account");
    let (status, _) = s
        .post(
            "/v1/jobs",
            ADMIN,
            json!({"task": "t", "input": {"account": "acme"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    s.stop().await;
}

/// A 503 from `/healthz` says the database does not answer, and not why:
/// the database's own words stay in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_failures_name_no_internals() {
    let s = TestServer::start(0).await;
    s.app.as_ref().unwrap().state.store.close().await;
    let (status, body) = s.get("/healthz", "").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        body["error"]["message"], "the database does not answer",
        "{body}"
    );
}
