//! Verifying a candidate against a task's recorded jobs, against the real
//! binary: a task's v1 runs 50 jobs, a candidate that differs on some
//! inputs is verified, and the report names exactly those jobs (with the
//! places their outputs differ), counts the rest as the same, and sums
//! both fuels; the verification is a job of the tenant's, whose fuel its
//! usage records. A deterministic task's candidate runs on each recorded
//! job's own clock and seed, so the same component matches exactly. A task
//! that declares outbound HTTP is verified with requests refused, and says
//! so. A verification is cancelled as a job is. The CLI prints the report
//! and exits 1 when a run differed, 0 when none did. A verification that
//! burns its tenant's fuel budget snoozes and goes on in the next window,
//! and one whose server is killed goes on after the restart from the runs
//! it kept; in both, each run is charged once.

use crate::e2e::{Client, Served, ADMIN};
use crate::replay::ended;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

async fn put(admin: &Client, name: &str, body: Value) {
    let (status, answer) = admin
        .send(
            reqwest::Method::PUT,
            &format!("/v1/tasks/{name}"),
            Some(body),
        )
        .await;
    assert_eq!(status, 201, "{answer}");
}

/// Enqueues each input as a job of `task` and waits for all to end.
async fn run_all(admin: &Client, task: &str, inputs: &[Value]) -> Vec<Value> {
    let jobs: Vec<Value> = inputs
        .iter()
        .map(|i| json!({"task": task, "input": i}))
        .collect();
    let (status, body) = admin.post("/v1/jobs/batch", json!({ "jobs": jobs })).await;
    assert_eq!(status, 200, "{body}");
    let mut out = Vec::new();
    for j in body["jobs"].as_array().unwrap() {
        out.push(ended(admin, j["id"].as_str().unwrap()).await);
    }
    out
}

async fn verify(admin: &Client, task: &str, component: &str, sample: u32) -> Value {
    let (status, job) = admin
        .post(
            &format!("/v1/tasks/{task}/verify"),
            json!({"component": component, "sample": sample}),
        )
        .await;
    assert_eq!(status, 202, "{job}");
    assert_eq!(job["task"]["name"], format!("verify:{task}"), "{job}");
    assert_eq!(job["task"]["digest"], component, "{job}");
    let done = ended(admin, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    done
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verification_names_exactly_the_jobs_a_candidate_changes() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let v1 = admin.task("pricing", "limits").await;
    let candidate = admin.upload("noop").await;

    // A task with nothing ended yet has nothing to verify against.
    let (status, body) = admin
        .post("/v1/tasks/pricing/verify", json!({"component": candidate}))
        .await;
    assert_eq!(status, 409, "{body}");

    // 50 jobs: echoing `{}` (noop gives the same), echoing a number (noop
    // gives `{}`: different), failing (noop completes: different).
    let inputs: Vec<Value> = (0..50)
        .map(|i| match i % 10 {
            3 | 7 => json!({"op": "echo", "value": {"n": i}}),
            5 => json!({"op": "fail", "code": "nope"}),
            _ => json!({"op": "echo", "value": {}}),
        })
        .collect();
    let jobs = run_all(&admin, "pricing", &inputs).await;
    let expected: BTreeSet<String> = jobs
        .iter()
        .zip(&inputs)
        .filter(|(_, i)| i != &&json!({"op": "echo", "value": {}}))
        .map(|(j, _)| j["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(expected.len(), 15);
    assert_eq!(jobs.iter().filter(|j| j["status"] == "failed").count(), 5);

    for (body, status) in [
        (json!({"component": candidate, "sample": 0}), 400),
        (json!({"component": candidate, "sample": 1001}), 400),
        (
            json!({"component": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}),
            404,
        ),
        (json!({"component": candidate, "extra": 1}), 400),
    ] {
        let (got, answer) = admin.post("/v1/tasks/pricing/verify", body.clone()).await;
        assert_eq!(got, status, "{body}: {answer}");
    }
    let (status, _) = admin
        .post("/v1/tasks/nothing/verify", json!({"component": candidate}))
        .await;
    assert_eq!(status, 404);

    let done = verify(&admin, "pricing", &candidate, 50).await;
    let report = &done["output"];
    assert_eq!(report["runs"], 50, "{report}");
    assert_eq!(report["same"], 35, "{report}");
    assert_eq!(report["different"], 15, "{report}");
    assert_eq!(report["candidate_failures"], 0, "{report}");
    assert_eq!(report["requests_refused"], false, "{report}");
    let named: BTreeSet<String> = report["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["job"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(named, expected, "{report}");
    for d in report["differences"].as_array().unwrap() {
        let recorded = &d["recorded"];
        match recorded["status"].as_str().unwrap() {
            "completed" => {
                // Outputs by hash, the first difference as a preview.
                let first = &d["first_difference"];
                assert_eq!(first["path"], "/n", "{d}");
                let n: u64 = first["recorded"].as_str().unwrap().parse().unwrap();
                assert!(n % 10 == 3 || n % 10 == 7, "{d}");
                assert!(first.get("candidate").is_none(), "{d}");
                assert_eq!(d["diff_total"], 1, "{d}");
                let hash = recorded["output_sha256"].as_str().unwrap();
                assert!(hash.starts_with("sha256:") && hash.len() == 71, "{d}");
                assert!(recorded.get("output").is_none(), "{d}");
            }
            "failed" => {
                assert_eq!(recorded["code"], "nope", "{d}");
                assert_eq!(d["candidate"]["status"], "completed", "{d}");
            }
            other => panic!("{other}: {d}"),
        }
    }
    // Fuel: each run's, summed; the recorded one is each job's last attempt.
    let each = report["each"].as_array().unwrap();
    assert_eq!(each.len(), 50);
    let sum = |field: &str| each.iter().map(|r| r[field].as_u64().unwrap()).sum::<u64>();
    assert_eq!(report["fuel"]["recorded"], sum("recorded_fuel"), "{report}");
    assert_eq!(
        report["fuel"]["candidate"],
        sum("candidate_fuel"),
        "{report}"
    );
    assert!(
        sum("recorded_fuel") > 0 && sum("candidate_fuel") > 0,
        "{report}"
    );

    // It was a job of the tenant's: its attempts' fuel is in the usage
    // records, under the verification's own name.
    let (status, export) = admin.get("/v1/usage/export?by=day").await;
    assert_eq!(status, 200, "{export}");
    let charged: u64 = export["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["task"] == "verify:pricing")
        .map(|l| l["fuel"].as_u64().unwrap())
        .sum();
    assert_eq!(charged, sum("candidate_fuel"), "{export}");
    // A verification is neither replayed nor retried.
    let id = done["id"].as_str().unwrap();
    let (status, body) = admin.get(&format!("/v1/jobs/{id}/bundle")).await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = admin.post(&format!("/v1/jobs/{id}/retry"), json!({})).await;
    assert!(status == 400 || status == 409, "{status} {body}");

    // The version's own component matches every run; a later verification
    // does not count the first one among the recorded jobs.
    let same = verify(&admin, "pricing", &v1, 100).await;
    assert_eq!(same["output"]["runs"], 50, "{same}");
    assert_eq!(same["output"]["different"], 0, "{same}");

    // The CLI: a table and exit 1 when a run differed, 0 when none did.
    let noop = crate::common::guests_dir().join("noop.wasm");
    let limits = crate::common::guests_dir().join("limits.wasm");
    let (code, out, err) = served.cli(&["task", "verify", "pricing", noop.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("different           15\n"), "{out}");
    assert!(out.contains("differences:"), "{out}");
    let (code, out, err) = served.cli(&[
        "task",
        "verify",
        "pricing",
        limits.to_str().unwrap(),
        "--sample",
        "10",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (r["runs"].as_u64(), r["same"].as_u64()),
        (Some(10), Some(10)),
        "{r}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deterministic_runs_match_exactly_and_a_network_task_is_verified_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let limits = admin.upload("limits").await;

    // The clock and the random numbers are each recorded job's own.
    put(
        &admin,
        "pure",
        json!({"component": limits, "deterministic": true}),
    )
    .await;
    let clock = json!({"op": "clock", "iterations": 5000});
    run_all(&admin, "pure", &vec![clock; 5]).await;
    let done = verify(&admin, "pure", &limits, 5).await;
    assert_eq!(done["output"]["same"], 5, "{done}");
    assert_eq!(
        done["output"]["fuel"]["recorded"], done["output"]["fuel"]["candidate"],
        "{done}"
    );
    // Without determinism the same component reads another clock.
    put(&admin, "impure", json!({"component": limits})).await;
    run_all(
        &admin,
        "impure",
        &vec![json!({"op": "clock", "iterations": 5000}); 3],
    )
    .await;
    let done = verify(&admin, "impure", &limits, 3).await;
    assert_eq!(done["output"]["different"], 3, "{done}");

    // A task that may call out is verified with every request refused.
    put(
        &admin,
        "calls-out",
        json!({"component": limits, "network": {"allow": ["example.com"]}}),
    )
    .await;
    run_all(&admin, "calls-out", &[json!({"op": "echo", "value": 1})]).await;
    let done = verify(&admin, "calls-out", &limits, 1).await;
    assert_eq!(done["output"]["requests_refused"], true, "{done}");
    assert_eq!(done["output"]["same"], 1, "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verification_is_cancelled_as_a_job_is() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    admin.task("quick", "limits").await;
    run_all(&admin, "quick", &vec![json!({"op": "echo", "value": 1}); 3]).await;
    // The candidate sleeps an hour on any input; the verification is
    // cancelled while it runs.
    let sleeper = admin.upload("hostile-sleep").await;
    let (status, job) = admin
        .post("/v1/tasks/quick/verify", json!({"component": sleeper}))
        .await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().unwrap();
    admin.until(id, |j| j["status"] == "running").await;
    let (status, body) = admin
        .post(&format!("/v1/jobs/{id}/cancel"), json!({}))
        .await;
    assert!(status == 200 || status == 202, "{status} {body}");
    let done = ended(&admin, id).await;
    assert_eq!(done["status"], "cancelled", "{done}");
}

/// Waits up to `secs` for a job to end (a budget's window is a minute).
async fn ended_within(client: &Client, id: &str, secs: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (_, job) = client.get(&format!("/v1/jobs/{id}")).await;
        if matches!(
            job["status"].as_str(),
            Some("completed" | "failed" | "cancelled")
        ) {
            return job;
        }
        assert!(Instant::now() < deadline, "job {id} did not end: {job}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A job's attempts: (outcome, fuel) of each, in order.
async fn attempts(client: &Client, id: &str) -> Vec<(String, u64)> {
    let (status, body) = client.get(&format!("/v1/jobs/{id}/attempts")).await;
    assert_eq!(status, 200, "{body}");
    body["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["outcome"].as_str().unwrap().to_owned(),
                a["fuel_used"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The candidate fuel of each run in a report, in the plan's order.
fn each_fuel(report: &Value) -> Vec<u64> {
    report["each"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["candidate_fuel"].as_u64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verification_snoozes_at_its_tenants_budget_and_goes_on_in_the_next_window() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let token = admin
        .mint("metered", &["tasks:write", "jobs:queue", "jobs:read"])
        .await;
    let tenant = Client::new(&served.url, &token);
    // What one run of the candidate burns: a job of its own.
    tenant.task("meter", "limits").await;
    let spin = json!({"op": "spin", "iterations": 300_000});
    let (status, job) = tenant
        .post("/v1/jobs", json!({"task": "meter", "input": spin}))
        .await;
    assert_eq!(status, 201, "{job}");
    let metered = ended(&tenant, job["id"].as_str().unwrap()).await;
    let x = attempts(&tenant, metered["id"].as_str().unwrap()).await[0].1;
    assert!(x > 100_000, "{x}");

    // Four recorded jobs that cost next to nothing (noop ignores its
    // input); the candidate spins on each.
    tenant.task("cheap", "noop").await;
    run_all(&tenant, "cheap", &vec![spin; 4]).await;
    let candidate = tenant.upload("limits").await;
    // A budget of 2.5 runs a minute: whatever this minute has used (at most
    // the meter's run and the noops), the first attempt stops after two or
    // three runs, and the second, in a fresh window, runs the rest.
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            "/v1/tenants/metered",
            Some(json!({"quotas": {"fuel_per_minute": x * 5 / 2}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, job) = tenant
        .post("/v1/tasks/cheap/verify", json!({"component": candidate}))
        .await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().unwrap();
    let done = ended_within(&tenant, id, 150).await;
    assert_eq!(done["status"], "completed", "{done}");
    let report = &done["output"];
    assert_eq!(report["runs"], 4, "{report}");
    assert_eq!(report["different"], 4, "{report}");

    let tries = attempts(&tenant, id).await;
    let outcomes: Vec<&str> = tries.iter().map(|(o, _)| o.as_str()).collect();
    assert_eq!(outcomes, ["snoozed", "completed"], "{tries:?}");
    // Each run is charged once: the first attempt's fuel is its runs', a
    // prefix of the plan, and the second's the rest.
    let each = each_fuel(report);
    let k = (1..each.len())
        .find(|&k| each[..k].iter().sum::<u64>() == tries[0].1)
        .unwrap_or_else(|| panic!("{tries:?} is no prefix of {each:?}"));
    assert!((2..=3).contains(&k), "{k} runs in the first attempt");
    assert_eq!(
        tries[1].1,
        each[k..].iter().sum::<u64>(),
        "{tries:?} {each:?}"
    );
    assert_eq!(report["fuel"]["candidate"], each.iter().sum::<u64>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_verification_goes_on_from_the_runs_it_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut served = Served::spawn(dir.path(), &["--grace-ms", "2000"], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let v1 = admin.task("nap", "limits").await;
    run_all(&admin, "nap", &vec![json!({"op": "sleep", "ms": 400}); 10]).await;
    let (status, job) = admin
        .post("/v1/tasks/nap/verify", json!({"component": v1}))
        .await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    // Runs are kept every second: by the fifth run (2 s in) some are.
    admin
        .until(&id, |j| j["progress"]["percent"].as_u64() >= Some(50))
        .await;
    served.kill();

    let served = Served::spawn(dir.path(), &["--grace-ms", "2000"], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let done = ended_within(&admin, &id, 120).await;
    assert_eq!(done["status"], "completed", "{done}");
    let report = &done["output"];
    assert_eq!(
        (report["runs"].as_u64(), report["same"].as_u64()),
        (Some(10), Some(10)),
        "{report}"
    );
    let tries = attempts(&admin, &id).await;
    let outcomes: Vec<&str> = tries.iter().map(|(o, _)| o.as_str()).collect();
    assert_eq!(outcomes, ["retried", "completed"], "{tries:?}");
    // The attempt after the restart ran only the runs not kept: a suffix
    // of the plan, without the first three at least.
    let each = each_fuel(report);
    let k = (1..each.len())
        .find(|&k| each[k..].iter().sum::<u64>() == tries[1].1)
        .unwrap_or_else(|| panic!("{tries:?} is no suffix of {each:?}"));
    assert!(k >= 3, "only {k} runs were kept");
}
