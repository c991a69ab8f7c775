//! The generated API clients under `clients/`: what is checked in is what the
//! real binary's `/openapi.json` makes (`scripts/gen-clients --check`), and
//! each client's example enqueues jobs, waits out a 429 by its
//! `Retry-After`, and prints the jobs' outputs, against the real binary.

use crate::e2e::{repo, run_script, Client, Served, ADMIN};
use serde_json::json;
use std::process::Output;

fn said(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checked_in_clients_are_what_the_live_document_makes() {
    let bin = env!("CARGO_BIN_EXE_taskbox");
    let out = tokio::process::Command::new(repo().join("scripts/gen-clients"))
        .args(["--check", "--bin", bin])
        .current_dir(repo())
        .output()
        .await
        .expect("run scripts/gen-clients");
    assert!(out.status.success(), "{}", said(&out));
}

/// A tenant that may enqueue one job a second (a burst of one), with a
/// task `echo` that answers its input's `value`, and a token for it.
async fn rate_limited_tenant(served: &Served, tenant: &str) -> String {
    let admin = Client::new(&served.url, ADMIN);
    let token = admin
        .mint(tenant, &["tasks:write", "jobs:queue", "jobs:read"])
        .await;
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            &format!("/v1/tenants/{tenant}"),
            Some(json!({"quotas": {"enqueue_per_second": 1, "enqueue_burst": 1}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    Client::new(&served.url, &token)
        .task("echo", "limits")
        .await;
    token
}

/// Two jobs: the second enqueue meets the rate limit, is told to wait a
/// second, waits, and goes in; both outputs are the input echoed.
fn assert_two_echoes_after_a_wait(out: &Output) {
    assert!(out.status.success(), "{}", said(out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, [r#""hi""#; 2], "{}", said(out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rate limited: retrying after"),
        "{}",
        said(out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_enqueues_waits_out_a_429_and_awaits_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let token = rate_limited_tenant(&served, "ts-app").await;
    let out = run_script(
        "scripts/clients-setup
         cd clients/typescript
         node_modules/.bin/tsc -p .
         node dist/examples/enqueue.js echo '{\"op\": \"echo\", \"value\": \"hi\"}' 2",
        &served.url,
        &token,
        &[],
    )
    .await;
    assert_two_echoes_after_a_wait(&out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_enqueues_waits_out_a_429_and_awaits_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let token = rate_limited_tenant(&served, "py-app").await;
    let out = run_script(
        "scripts/clients-setup
         target/toolchains/clients-py/bin/python clients/python/examples/enqueue.py \
             echo '{\"op\": \"echo\", \"value\": \"hi\"}' 2",
        &served.url,
        &token,
        &[],
    )
    .await;
    assert_two_echoes_after_a_wait(&out);
}
