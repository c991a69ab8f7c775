//! Round three, item 9: a deterministic task that sleeps finishes. Its
//! clock moved only with fuel while its sleeps waited in real time, so a
//! guest that sleeps in slices until its clock says 30 ms have passed
//! looped until its timeout. A sleep now moves the virtual clock on by what
//! it waits, at once: such a task completes quickly, with the same fuel and
//! output on every run, as a component (`subscribe-duration` and `block`,
//! Rust's `thread::sleep`), as a preview-1 module (`poll_oneoff`), through
//! `taskbox run --deterministic` and on the server. A plain task still
//! sleeps in real time; a deterministic sleep past the attempt's timeout
//! ends it `timeout` at once.

use crate::common::*;
use crate::e2e::{Client, Served, ADMIN};
use crate::replay::ended;
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};
use taskbox::job::ErrorKind;
use taskbox::sandbox::{AttemptReport, Determinism, Limits};

/// A job id, as the server makes them.
fn job_id() -> String {
    ulid::Ulid::from_parts(1_767_225_600_000, 7).to_string()
}

/// Sleeps 1 ms at a time until the monotonic clock says 30 ms have passed.
fn nap() -> String {
    json!({"op": "nap", "ms": 30, "slice_ms": 1}).to_string()
}

fn limits(timeout_ms: u64) -> Limits {
    Limits {
        timeout_ms,
        ..roomy()
    }
}

/// A preview-1 command that sleeps (`poll_oneoff`, one relative monotonic
/// clock of `slice_ns`) until `clock_time_get` says `total_ns` have
/// passed, then prints how many slices it slept.
fn p1_napper(total_ns: u64, slice_ns: u64) -> Vec<u8> {
    let slice = slice_ns
        .to_le_bytes()
        .map(|b| format!("\\{b:02x}"))
        .concat();
    wat::parse_str(format!(
        r#"(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  ;; 0: one subscription: userdata 0, a clock, monotonic (1), the slice.
  (data (i32.const 16) "\01")
  (data (i32.const 24) "{slice}")
  ;; 64: its event; 96: how many events; 104: a clock reading.
  ;; 200: the output, its last digit the slices modulo 10.
  (data (i32.const 200) "{{\"slept\":0}}")
  (func (export "_start") (local $start i64) (local $slices i32)
    (if (call $clock (i32.const 1) (i64.const 1) (i32.const 104)) (then (call $exit (i32.const 2))))
    (local.set $start (i64.load (i32.const 104)))
    (block $done
      (loop $again
        (if (call $clock (i32.const 1) (i64.const 1) (i32.const 104)) (then (call $exit (i32.const 2))))
        (br_if $done (i64.ge_u (i64.sub (i64.load (i32.const 104)) (local.get $start)) (i64.const {total_ns})))
        (if (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 96)) (then (call $exit (i32.const 3))))
        (if (i32.ne (i32.load (i32.const 96)) (i32.const 1)) (then (call $exit (i32.const 4))))
        (local.set $slices (i32.add (local.get $slices) (i32.const 1)))
        (br $again)))
    (i32.store8 (i32.const 209) (i32.add (i32.const 48) (i32.rem_u (local.get $slices) (i32.const 10))))
    (i32.store (i32.const 128) (i32.const 200))
    (i32.store (i32.const 132) (i32.const 11))
    (drop (call $write (i32.const 1) (i32.const 128) (i32.const 1) (i32.const 140)))))"#
    ))
    .unwrap()
}

async fn run_deterministic(
    program: &taskbox::sandbox::Program,
    input: &str,
    timeout_ms: u64,
) -> AttemptReport {
    let mut req = request(input, limits(timeout_ms));
    req.determinism = Some(Determinism::of_job(&job_id()));
    sandbox().run(program, req).await
}

/// Twice, deterministically: done both times, quickly (within 5 s of
/// real time however long it slept), with the same output and fuel.
async fn completes_the_same_twice(program: &taskbox::sandbox::Program, input: &str) -> Value {
    let mut runs = Vec::new();
    for _ in 0..2 {
        let began = Instant::now();
        let report = run_deterministic(program, input, 5_000).await;
        let output = expect_done(&report);
        assert!(began.elapsed() < Duration::from_secs(5), "{report:?}");
        runs.push((output, report.fuel_used));
    }
    assert_eq!(runs[0], runs[1]);
    runs.remove(0).0
}

#[tokio::test]
async fn a_deterministic_component_that_sleeps_in_slices_completes_the_same_every_run() {
    let program = load("limits").await;
    let done = completes_the_same_twice(&program, &nap()).await;
    // Its clock says 30 ms passed, in 1 ms slices: 30 of them (the fuel
    // between them adds a little to each, never a whole slice).
    let elapsed: u64 = done["elapsed_ns"].as_str().unwrap().parse().unwrap();
    assert!(elapsed >= 30_000_000, "{done}");
    assert_eq!(done["slices"], 30, "{done}");
    // Longer than the real timeout's worth of virtual time, in slices: the
    // clock is virtual, so it is quick too.
    let long = json!({"op": "nap", "ms": 4_000, "slice_ms": 10}).to_string();
    completes_the_same_twice(&program, &long).await;
}

#[tokio::test]
async fn a_deterministic_module_that_sleeps_with_poll_oneoff_completes_the_same_every_run() {
    let program = sandbox()
        .load("test", &p1_napper(30_000_000, 1_000_000))
        .await
        .unwrap();
    let done = completes_the_same_twice(&program, "").await;
    assert_eq!(done, json!({"slept": 0}), "30 slices");
}

#[test]
fn taskbox_run_deterministic_completes_a_task_that_sleeps() {
    let cache = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-artifacts");
    let limits = guests_dir().join("limits.wasm");
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let out = Command::new(env!("CARGO_BIN_EXE_taskbox"))
            .args(["run", limits.to_str().unwrap(), "--deterministic"])
            .args(["--job-id", &job_id(), "--timeout-ms", "5000"])
            .args(["--input", &nap(), "--json"])
            .env("TASKBOX_CACHE_DIR", cache)
            .output()
            .expect("start taskbox");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_str(&stdout).unwrap();
        outputs.push((report["outcome"].clone(), report["fuel_used"].clone()));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0].0["slices"], 30, "{outputs:?}");
}

#[tokio::test]
async fn a_deterministic_task_that_sleeps_completes_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let digest = admin.upload("limits").await;
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            "/v1/tasks/napper",
            Some(
                json!({"component": digest, "deterministic": true, "limits": {"timeout_ms": 5000}}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, job) = admin
        .post(
            "/v1/jobs",
            json!({"task": "napper", "input": {"op": "nap", "ms": 30, "slice_ms": 1}}),
        )
        .await;
    assert_eq!(status, 201, "{job}");
    let done = ended(&admin, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"]["slices"], 30, "{done}");
}

#[tokio::test]
async fn a_plain_sleep_waits_in_real_time_and_a_virtual_one_past_the_timeout_ends_it() {
    // Obeyed: without determinism a sleep is real (the attempt lasts it).
    let program = load("limits").await;
    let report = sandbox()
        .run(
            &program,
            request(
                &json!({"op": "sleep", "ms": 100}).to_string(),
                limits(5_000),
            ),
        )
        .await;
    expect_done(&report);
    assert!(report.duration >= Duration::from_millis(100), "{report:?}");

    // Violated: a deterministic sleep of an hour against a 60 s timeout
    // ends `timeout` at once (within 5 s), the same every run, as one
    // module's would.
    let hour = json!({"op": "sleep", "ms": 3_600_000}).to_string();
    let module = sandbox()
        .load("test", &p1_napper(3_600_000_000_000, 3_600_000_000_000))
        .await
        .unwrap();
    for (program, input) in [(&program, hour.as_str()), (&module, "")] {
        let mut fuel = Vec::new();
        for _ in 0..2 {
            let began = Instant::now();
            let report = run_deterministic(program, input, 60_000).await;
            let err = expect_failed(&report, ErrorKind::Timeout);
            assert!(err.message.contains("60000 ms"), "{err:?}");
            assert!(began.elapsed() < Duration::from_secs(5), "{report:?}");
            fuel.push(report.fuel_used);
        }
        assert_eq!(fuel[0], fuel[1]);
    }
}
