//! The usage export against the real binary: `GET /v1/usage/export` (JSON
//! and CSV) and `taskbox tenant usage --export` add up to the attempt
//! records of the tenant's jobs, count result cache hits, and show a tenant
//! its own usage alone while the admin sees every tenant's.

use crate::e2e::{Client, Served, ADMIN};
use crate::replay::ended;
use serde_json::{json, Value};
use std::process::Command;

/// Every attempt of every job of the client's tenant.
async fn all_attempts(client: &Client) -> Vec<Value> {
    let (status, page) = client.get("/v1/jobs?limit=100").await;
    assert_eq!(status, 200, "{page}");
    let mut out = Vec::new();
    for job in page["jobs"].as_array().unwrap() {
        let id = job["id"].as_str().unwrap();
        let (_, attempts) = client.get(&format!("/v1/jobs/{id}/attempts")).await;
        out.extend(attempts["attempts"].as_array().unwrap().iter().cloned());
    }
    out
}

fn total(lines: &[Value], field: &str) -> u64 {
    lines.iter().map(|l| l[field].as_u64().unwrap()).sum()
}

#[tokio::test]
async fn the_usage_export_adds_up_to_the_attempt_records() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let other_token = admin
        .mint("other", &["tasks:write", "jobs:queue", "jobs:read"])
        .await;
    let other = Client::new(&served.url, &other_token);
    let digest = admin.upload("limits").await;
    let retry = json!({"max_attempts": 2, "backoff": {"kind": "fixed", "delay_ms": 1}});
    for (name, spec) in [
        ("work", json!({"component": digest, "retry": retry})),
        (
            "pure",
            json!({"component": digest, "deterministic": true, "cache": {"ttl_ms": 600_000}}),
        ),
    ] {
        let (status, body) = admin
            .send(
                reqwest::Method::PUT,
                &format!("/v1/tasks/{name}"),
                Some(spec),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }
    other.task("work", "limits").await;
    let inputs = [
        ("work", json!({"op": "spin", "iterations": 100_000})),
        ("work", json!({"op": "alloc", "mb": 4})),
        (
            "work",
            json!({"op": "fail", "code": "again", "retryable": true}),
        ),
        ("pure", json!({"op": "clock", "iterations": 1_000})),
        ("pure", json!({"op": "clock", "iterations": 1_000})),
    ];
    for (task, input) in inputs {
        let (status, job) = admin
            .post("/v1/jobs", json!({"task": task, "input": input}))
            .await;
        assert_eq!(status, 201, "{job}");
        ended(&admin, job["id"].as_str().unwrap()).await;
    }
    let (_, theirs) = other
        .post(
            "/v1/jobs",
            json!({"task": "work", "input": {"op": "spin", "iterations": 10}}),
        )
        .await;
    ended(&other, theirs["id"].as_str().unwrap()).await;

    // The tenant's export, against its jobs' attempt records.
    let records = all_attempts(&admin).await;
    assert_eq!(
        records.len(),
        5,
        "1 + 1 + 2 (retried) + 1 + 0 (a cache hit)"
    );
    let (status, export) = admin.get("/v1/usage/export?tenant=default").await;
    assert_eq!(status, 200, "{export}");
    let lines = export["lines"].as_array().unwrap();
    assert!(lines.iter().all(|l| l["tenant"] == "default"), "{export}");
    assert_eq!(total(lines, "attempts"), records.len() as u64, "{export}");
    assert_eq!(
        total(lines, "fuel"),
        total(&records, "fuel_used"),
        "{export}"
    );
    assert_eq!(
        total(lines, "wall_ms"),
        total(&records, "duration_ms"),
        "{export}"
    );
    let memory: f64 = records
        .iter()
        .map(|a| {
            a["peak_memory_bytes"].as_f64().unwrap() * a["duration_ms"].as_f64().unwrap()
                / 1_048_576.0
                / 1000.0
        })
        .sum();
    let exported: f64 = lines
        .iter()
        .map(|l| l["memory_mib_seconds"].as_f64().unwrap())
        .sum();
    assert!(
        (memory - exported).abs() < 1e-6,
        "{memory} against {exported}"
    );
    assert_eq!(total(lines, "cache_hits"), 1, "{export}");
    let pure_fuel: u64 = records
        .iter()
        .filter(|a| a["task"]["name"] == "pure")
        .map(|a| a["fuel_used"].as_u64().unwrap())
        .sum();
    assert_eq!(total(lines, "fuel_saved"), pure_fuel, "{export}");
    let versions: Vec<(&str, u64)> = lines
        .iter()
        .map(|l| (l["task"].as_str().unwrap(), l["version"].as_u64().unwrap()))
        .collect();
    assert!(
        versions.contains(&("work", 1)) && versions.contains(&("pure", 1)),
        "{versions:?}"
    );

    // CSV: the same lines.
    let csv = taskbox::http::client()
        .build()
        .unwrap()
        .get(format!(
            "{}/v1/usage/export?tenant=default&format=csv&by=day",
            served.url
        ))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
    let text = csv.text().await.unwrap();
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let fuel_at = header.iter().position(|h| *h == "fuel").unwrap();
    let csv_fuel: u64 = rows
        .map(|r| r.split(',').nth(fuel_at).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(csv_fuel, total(&records, "fuel_used"), "{text}");

    // The admin without a tenant sees every tenant; a tenant its own alone.
    let (_, everyone) = admin.get("/v1/usage/export").await;
    let tenants: std::collections::BTreeSet<&str> = everyone["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["tenant"].as_str().unwrap())
        .collect();
    assert_eq!(
        tenants.into_iter().collect::<Vec<_>>(),
        ["default", "other"]
    );
    let (status, own) = other.get("/v1/usage/export").await;
    assert_eq!(status, 200, "{own}");
    let own_lines = own["lines"].as_array().unwrap();
    assert!(own_lines.iter().all(|l| l["tenant"] == "other"), "{own}");
    assert_eq!(total(own_lines, "attempts"), 1, "{own}");
    let (status, _) = other.get("/v1/usage/export?tenant=default").await;
    assert_eq!(status, 403);
    let (status, body) = other.get("/v1/usage/export?from=yesterday").await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = other
        .get("/v1/usage/export?from=2025-01-01T00:00:00Z&by=hour")
        .await;
    assert_eq!(status, 400, "too many buckets: {body}");

    // The CLI: a table with its totals, and JSON.
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_taskbox"))
            .args(["tenant", "usage", "--export"])
            .args(args)
            .env("TASKBOX_URL", &served.url)
            .env("TASKBOX_TOKEN", &other_token)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let table = cli(&["--by", "day"]);
    assert!(table.contains("usage by day"), "{table}");
    assert!(table.lines().any(|l| l.starts_with("total")), "{table}");
    let json: Value = serde_json::from_str(&cli(&["--json"])).unwrap();
    assert_eq!(json["lines"], own["lines"]);
    let csv = cli(&["--csv"]);
    assert!(csv.starts_with("tenant,start,task,version"), "{csv}");
}
