//! The API clients: the generated ones under `clients/` are what the real
//! binary's `/openapi.json` makes (`scripts/gen-clients --check`), and each
//! one's example enqueues jobs, waits out a 429 by its `Retry-After`, and
//! prints the jobs' outputs, against the real binary; so does the Rust
//! client's (`clients/rust`), and a test through its own calls reads every
//! field of the jobs the server sends.

use crate::e2e::{repo, run_script, Client, Served, ADMIN};
use serde_json::{json, Value};
use std::process::Output;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use taskbox_client::{EnqueueOptions, Error, JobSpec, JobStatus, TaskDefinition, WaitOptions};

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

/// The Rust client's example, as `cargo test` builds it beside the binary
/// (`target/debug/examples/enqueue`), run as the others' are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_clients_example_enqueues_waits_out_a_429_and_awaits_the_results() {
    let example = std::path::PathBuf::from(env!("CARGO_BIN_EXE_taskbox"))
        .with_file_name("examples")
        .join("enqueue");
    assert!(
        example.is_file(),
        "{} is missing: `cargo test` (no --test filter) builds it; or run \
         `cargo build -p taskbox-client --example enqueue`",
        example.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let token = rate_limited_tenant(&served, "rs-example").await;
    let out = run_script(
        &format!(
            "{} echo '{{\"op\": \"echo\", \"value\": \"hi\"}}' 2",
            example.display()
        ),
        &served.url,
        &token,
        &[],
    )
    .await;
    assert_two_echoes_after_a_wait(&out);
}

/// The job as the server sent it, read through the client's `Job` and
/// written back: equal only if the client's type drops no field.
async fn reads_every_field(taskbox: &taskbox_client::Client, id: &str) -> taskbox_client::Job {
    let raw: Value = taskbox
        .get(&["v1", "jobs", id])
        .send()
        .await
        .unwrap()
        .json()
        .unwrap();
    let job = taskbox.job(id).await.unwrap();
    assert_eq!(serde_json::to_value(&job).unwrap(), raw);
    job
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_client_pushes_enqueues_waits_out_a_429_and_reads_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let token = admin
        .mint(
            "rs-app",
            &["tasks:write", "jobs:queue", "jobs:read", "jobs:cancel"],
        )
        .await;
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            "/v1/tenants/rs-app",
            Some(json!({"quotas": {"enqueue_per_second": 1, "enqueue_burst": 1}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let taskbox = taskbox_client::Client::new(&served.url, &token).unwrap();

    // Push: upload and define, with a schema the server then enforces.
    let wasm = crate::common::guest("limits");
    let mut definition = TaskDefinition::of("");
    definition.input_schema = Some(json!({
        "type": "object", "required": ["op"], "properties": {"op": {"type": "string"}}
    }));
    let (component, defined) = taskbox
        .push_task("echo", wasm.clone(), definition)
        .await
        .unwrap();
    assert!(component.new);
    assert_eq!(component.abi, "task");
    assert_eq!((defined.name.as_str(), defined.version), ("echo", 1));
    assert_eq!(defined.digest, component.digest);
    let again = taskbox.upload_component(wasm).await.unwrap();
    assert!(!again.new, "the same bytes are stored once");

    // A bad input: the server's own error, field named, not retried.
    let refused = taskbox
        .enqueue(&JobSpec::task("echo", json!({"op": 7})).unwrap())
        .await
        .unwrap_err();
    let api = refused.api().unwrap_or_else(|| panic!("{refused:?}"));
    assert_eq!(
        (api.status, api.code.as_deref()),
        (400, Some("JOB_INVALID_INPUT"))
    );
    assert!(refused.to_string().contains("/op"), "{refused}");
    assert!(!refused.is_transient());

    // Three enqueues at 1/s: the later ones are told to wait, and wait.
    let waits = AtomicU32::new(0);
    let told = |wait: Duration, _try: u32| {
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(2),
            "{wait:?}"
        );
        waits.fetch_add(1, Ordering::Relaxed);
    };
    let options = EnqueueOptions {
        on_rate_limited: Some(&told),
        ..EnqueueOptions::default()
    };
    let mut ids = Vec::new();
    for value in ["hi", "there"] {
        let spec = JobSpec::task("echo", json!({"op": "echo", "value": value})).unwrap();
        let job = taskbox.enqueue_with(&spec, &options).await.unwrap();
        assert_eq!(job.task.name, "echo");
        ids.push(job.id);
    }
    let failing = JobSpec::task(
        "echo",
        json!({"op": "fail", "code": "nope", "retryable": false}),
    )
    .unwrap();
    let failing = taskbox.enqueue_with(&failing, &options).await.unwrap();
    assert!(
        waits.load(Ordering::Relaxed) >= 1,
        "a tenant at 1 enqueue/s was never told to wait"
    );

    let wait = WaitOptions {
        timeout: Duration::from_secs(60),
        ..WaitOptions::default()
    };
    for (id, value) in ids.iter().zip(["hi", "there"]) {
        let done = taskbox.wait_for_job(id, &wait).await.unwrap();
        assert_eq!(done.status, JobStatus::Completed, "{done:?}");
        assert_eq!(done.output, Some(json!(value)));
        reads_every_field(&taskbox, id).await;
    }
    let failed = taskbox.wait_for_job(&failing.id, &wait).await.unwrap();
    assert_eq!(failed.status, JobStatus::Failed);
    let error = failed.error.clone().expect("a failed job says why");
    assert_eq!(
        (error.kind.as_str(), error.code.as_str()),
        ("task_failed", "nope")
    );
    reads_every_field(&taskbox, &failing.id).await;

    // Waiting for a job that never ends gives up, saying where it stands.
    let later = JobSpec {
        delay_ms: Some(3_600_000),
        ..JobSpec::task("echo", json!({"op": "echo", "value": 1})).unwrap()
    };
    let later = taskbox.enqueue(&later).await.unwrap();
    let short = WaitOptions {
        timeout: Duration::from_millis(200),
        ..WaitOptions::default()
    };
    let gave_up = taskbox.wait_for_job(&later.id, &short).await.unwrap_err();
    assert!(
        matches!(&gave_up, Error::WaitTimedOut { status, .. } if status == "queued"),
        "{gave_up:?}"
    );
    let cancelled = taskbox.cancel_job(&later.id).await.unwrap();
    assert_eq!(cancelled.status, JobStatus::Cancelled);

    // The blocking client, off the async runtime, sees the same jobs.
    let (url, id) = (served.url.clone(), ids[0].clone());
    let job = tokio::task::spawn_blocking(move || {
        taskbox_client::blocking::Client::new(&url, &token).and_then(|c| c.job(&id))
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(job.output, Some(json!("hi")));

    // Another tenant's job is not found, and the answer says so.
    let stranger = admin.mint("rs-other", &["jobs:read"]).await;
    let stranger = taskbox_client::Client::new(&served.url, &stranger).unwrap();
    let hidden = stranger.job(&ids[0]).await.unwrap_err();
    assert_eq!(hidden.api().map(|a| a.status), Some(404), "{hidden:?}");
}
