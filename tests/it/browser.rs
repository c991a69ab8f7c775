//! The dashboard in a real browser: the real binary serves it, and
//! `tests/browser/dashboard.mjs` drives Debian's headless Chromium through
//! it with Playwright (sign in, a job appearing and completing live, its
//! log, a cancel from the page, another tenant's job not found, a workflow
//! job's timeline, schedules, webhooks and their deliveries, secrets,
//! dead letters, events, the admin's tenants, charts drawn and updating
//! live, a phone's width, the admin's view of every tenant, a job's
//! callbacks, a workflow's versions, schedules and deliveries live),
//! checking
//! what each page shows against the API's own answers. The data is real:
//! a workflow whose failed step ran its `on_error`, a schedule, a webhook
//! whose deliveries fail, a secret, two tenants that burned different
//! fuel. Screenshots land in `target/browser-shots/`.
//! `scripts/test` installs Chromium and the script's one npm package; with
//! `CI=true` their absence fails the test instead of skipping it.

use crate::e2e::{Client, Served, ADMIN};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether the browser and the driver are here; `CI=true` insists.
fn have_browser() -> bool {
    let script_deps = repo().join("tests/browser/node_modules/playwright-core");
    let found = Path::new(CHROMIUM).is_file() && script_deps.is_dir();
    if !found && std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "CI=true and the browser test's tools are missing: {CHROMIUM} (apt-get install chromium) \
             or tests/browser/node_modules (npm ci --prefix tests/browser); scripts/test installs both"
        );
    }
    found
}

#[tokio::test]
async fn the_dashboard_works_in_a_real_browser() {
    if !have_browser() {
        eprintln!("skipped: no Chromium or no tests/browser/node_modules here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Deliveries retried only when the page says so: their backoff is
    // longer than the test.
    let served = Served::spawn(
        dir.path(),
        &["--webhook-allow-private", "--webhook-backoff-ms", "600000"],
        Some(ADMIN),
    );
    let admin = Client::new(&served.url, ADMIN);
    let every = [
        "tasks:write",
        "jobs:queue",
        "jobs:run",
        "jobs:cancel",
        "jobs:read",
        "schedules:write",
        "webhooks:write",
        "secrets:write",
    ];
    let acme = admin.mint("acme", &every).await;
    let as_acme = Client::new(&served.url, &acme);
    as_acme.task("limits", "limits").await;
    as_acme.task("slow", "limits").await;
    let workflow_job = failed_workflow(&as_acme).await;
    // A second version of the workflow: its page lists both.
    let (status, body) = as_acme
        .put(
            "/v1/workflows/doomed",
            json!({"steps": [{"name": "first", "task": "echo"}]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let callback_job = job_with_a_callback(&as_acme).await;
    let webhook = failing_webhook(&as_acme).await;
    let (status, body) = as_acme
        .put(
            "/v1/schedules/weekday-report",
            json!({"cron": "30 9 * * 1-5", "timezone": "Europe/Berlin",
                   "task": "limits", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    assert!(status == 201 || status == 200, "{body}");
    let (status, body) = as_acme
        .put("/v1/secrets/API_KEY", json!({"value": "not-a-real-key"}))
        .await;
    assert_eq!(status, 201, "{body}");
    let other = admin.mint("other", &every).await;
    let as_other = Client::new(&served.url, &other);
    as_other.task("limits", "limits").await;
    let (status, job) = as_other
        .post(
            "/v1/jobs",
            json!({"task": "limits", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    assert_eq!(status, 201, "{job}");

    let shots = repo().join("target/browser-shots");
    let out = Command::new("node")
        .arg(repo().join("tests/browser/dashboard.mjs"))
        .env("TASKBOX_URL", &served.url)
        .env("TENANT_TOKEN", &acme)
        .env("ADMIN_TOKEN", ADMIN)
        .env("OTHER_JOB", job["id"].as_str().unwrap())
        .env("WORKFLOW_JOB", &workflow_job)
        .env("WEBHOOK", &webhook)
        .env("CALLBACK_JOB", &callback_job)
        .env("SHOTS", &shots)
        .env("CHROMIUM", CHROMIUM)
        .output()
        .expect("run node");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{said}");
    assert!(out.status.success(), "the browser run failed:\n{said}");
    for name in [
        "02-jobs",
        "03-job",
        "04-job-cancelled",
        "09-jobs-phone",
        "10-tenants",
        "11-workflow-job",
        "12-schedule",
        "13-webhook",
        "18-charts",
        "19-fuel-chart",
        "20-callbacks",
        "21-workflow-versions",
        "22-admin-every-tenant",
        "23-admin-events",
    ] {
        assert!(
            shots.join(format!("{name}.png")).is_file(),
            "no screenshot {name}"
        );
    }
    eprintln!("screenshots in {}", shots.display());
}

/// A workflow whose middle step fails for good (twice) and whose
/// `on_error` step then runs: the job's id once it failed.
async fn failed_workflow(c: &Client) -> String {
    c.task("echo", "limits").await;
    c.task("flaky", "flaky").await;
    c.task("alert", "noop").await;
    let quick = json!({"max_attempts": 2, "backoff": {"kind": "fixed", "delay_ms": 1}});
    let (status, body) = c
        .put(
            "/v1/workflows/doomed",
            json!({
                "steps": [
                    {"name": "first", "task": "echo"},
                    {"name": "never", "task": "flaky", "retry": quick},
                    {"name": "unreached", "task": "echo"},
                ],
                "on_error": [{"name": "tell", "task": "alert"}],
                "on_cancel": [{"name": "undo", "task": "alert"}],
            }),
        )
        .await;
    assert!(status == 201 || status == 200, "{body}");
    let input = json!({"op": "echo", "value": {"seen": 1}, "succeed_on_attempt": 9});
    let (status, job) = c
        .post("/v1/jobs", json!({"workflow": "doomed", "input": input}))
        .await;
    assert_eq!(status, 201, "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    let done = c.until(&id, |j| j["status"] == "failed").await;
    assert_eq!(done["steps"][3]["status"], "completed", "{done:#}");
    id
}

/// A job whose task's `on_success` made a callback: its id once the
/// callback exists.
async fn job_with_a_callback(c: &Client) -> String {
    c.task("notify", "noop").await;
    let digest = c.upload("limits").await;
    let (status, body) = c
        .put(
            "/v1/tasks/paid",
            json!({"component": digest, "on_success": "notify"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, job) = c
        .post(
            "/v1/jobs",
            json!({"task": "paid", "input": {"op": "echo", "value": 7}}),
        )
        .await;
    assert_eq!(status, 201, "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    let done = c.until(&id, |j| j["callbacks"].is_array()).await;
    assert_eq!(done["callbacks"][0]["kind"], "on_success", "{done:#}");
    id
}

/// A webhook at a port nothing listens on: its deliveries fail and wait
/// to be tried again. Its id once one has failed.
async fn failing_webhook(c: &Client) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (status, hook) = c
        .post(
            "/v1/webhooks",
            json!({"url": format!("http://127.0.0.1:{port}/hook"), "events": ["job.failed"]}),
        )
        .await;
    assert_eq!(status, 201, "{hook}");
    let id = hook["id"].as_str().unwrap().to_owned();
    // Something to deliver: a job that fails.
    let (status, job) = c
        .post(
            "/v1/jobs",
            json!({"task": "flaky", "input": {"succeed_on_attempt": 9}}),
        )
        .await;
    assert_eq!(status, 201, "{job}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, page) = c.get(&format!("/v1/webhooks/{id}/deliveries")).await;
        let tried = page["deliveries"]
            .as_array()
            .is_some_and(|d| d.iter().any(|d| d["attempts"].as_u64() >= Some(1)));
        if tried {
            return id;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no delivery was tried: {page}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
