//! Shared test helpers: built guests, one shared sandbox, attempt shorthands.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use taskbox::job::{ErrorKind, JobError};
use taskbox::sandbox::{
    AttemptReport, AttemptRequest, Ending, JobRef, Limits, Program, Sandbox, SandboxConfig,
};

/// Where the built guests are: `TASKBOX_GUESTS`, else `target/guests`.
pub fn guests_dir() -> PathBuf {
    std::env::var_os("TASKBOX_GUESTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/guests"))
}

/// The bytes of a built guest, e.g. `guest("noop")`.
pub fn guest(name: &str) -> Vec<u8> {
    let path = guests_dir().join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; build the guests first with scripts/build-guests",
            path.display()
        )
    })
}

/// A file of the repository, e.g. an example input.
pub fn repo_file(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// One sandbox for the whole test binary, so each guest compiles once; its
/// artifacts are cached under target/ so reruns skip compiling.
pub fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        Sandbox::new(SandboxConfig {
            cache_dir: Some(
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts"),
            ),
            ..SandboxConfig::default()
        })
        .expect("sandbox")
    })
}

/// A sandbox of its own with few instance slots (each engine reserves
/// address space for its pool).
pub fn small_sandbox(config: SandboxConfig) -> Sandbox {
    Sandbox::new(SandboxConfig {
        max_instances: config.max_instances.min(8),
        ..config
    })
    .expect("sandbox")
}

pub async fn load(name: &str) -> Arc<Program> {
    sandbox()
        .load("test", &guest(name))
        .await
        .unwrap_or_else(|e| panic!("{name} was refused: {e}"))
}

pub fn job(attempt: u32) -> JobRef {
    JobRef {
        id: "01JTESTJOB".into(),
        attempt,
        queue: "default".into(),
    }
}

pub fn request(input: &str, limits: Limits) -> AttemptRequest {
    AttemptRequest::new(job(1), input, limits)
}

/// Runs `name` once in the shared sandbox.
pub async fn run(name: &str, input: &str, limits: Limits) -> AttemptReport {
    let program = load(name).await;
    sandbox().run(&program, request(input, limits)).await
}

/// Runs an already loaded program once in the shared sandbox, default limits.
pub async fn run_loaded(program: &Program, input: &str) -> AttemptReport {
    sandbox()
        .run(program, request(input, Limits::DEFAULT))
        .await
}

/// The attempt failed with the guest's own failure of this code and flag.
#[track_caller]
pub fn expect_guest_failure(report: &AttemptReport, code: &str, retryable: bool) -> JobError {
    let err = expect_failed(report, ErrorKind::TaskFailed);
    assert_eq!((err.code.as_str(), err.retryable), (code, Some(retryable)));
    err
}

/// Generous limits, so a test isolates the one it is about.
pub fn roomy() -> Limits {
    Limits {
        timeout_ms: 60_000,
        fuel: 100_000_000_000,
        memory_mb: 512,
    }
}

#[track_caller]
pub fn expect_done(report: &AttemptReport) -> serde_json::Value {
    match &report.ending {
        Ending::Done(text) => serde_json::from_str(text).expect("done output is JSON"),
        other => panic!("expected done, got {other:?}\nlog: {:#?}", report.log.lines),
    }
}

#[track_caller]
pub fn expect_failed(report: &AttemptReport, kind: ErrorKind) -> JobError {
    match &report.ending {
        Ending::Failed(e) if e.kind == kind => e.clone(),
        other => panic!("expected {kind}, got {other:?}"),
    }
}

/// The sandbox still works: a real task completes right after.
pub async fn next_attempt_is_fine() {
    let input = repo_file("guest-examples/rust/invoice/example.json");
    let report = run("invoice", &input, Limits::DEFAULT).await;
    let out = expect_done(&report);
    assert_eq!(out["invoice_number"], "INV-A-1001");
}

/// What a `host_keeping` host was sent: each request's value of its header.
pub type Kept = Arc<std::sync::Mutex<Vec<Option<String>>>>;

/// An HTTP host on 127.0.0.1 that answers every request with `answer`
/// and keeps the value of its `header`: its port, and what it kept.
pub async fn host_keeping(header: &'static str, answer: &'static str) -> (u16, Kept) {
    let got: Kept = Arc::default();
    let sink = got.clone();
    let app = axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
        let sink = sink.clone();
        async move {
            let value = headers
                .get(header)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            sink.lock().unwrap().push(value);
            answer
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, got)
}
