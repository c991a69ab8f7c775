//! The dashboard in a real browser: the real binary serves it, and
//! `tests/browser/dashboard.mjs` drives Debian's headless Chromium through
//! it with Playwright (sign in, a job appearing and completing live, its
//! log, a cancel from the page, another tenant's job not found, every
//! page, a phone's width). Screenshots land in `target/browser-shots/`.
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
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let every = [
        "tasks:write",
        "jobs:queue",
        "jobs:run",
        "jobs:cancel",
        "jobs:read",
    ];
    let acme = admin.mint("acme", &every).await;
    let as_acme = Client::new(&served.url, &acme);
    as_acme.task("limits", "limits").await;
    as_acme.task("slow", "limits").await;
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
    ] {
        assert!(
            shots.join(format!("{name}.png")).is_file(),
            "no screenshot {name}"
        );
    }
    eprintln!("screenshots in {}", shots.display());
}
