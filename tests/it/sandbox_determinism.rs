//! Deterministic attempts in the sandbox: a guest that reads the wall clock,
//! the monotonic clock and random numbers gives the same output and spends
//! the same fuel on every attempt of a job, with its clock starting at the
//! job's creation and moving with the fuel; without determinism it does not.

use crate::common::*;
use serde_json::{json, Value};
use taskbox::sandbox::{AttemptReport, Determinism};

const CREATED_MS: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// A job id made at `CREATED_MS`, as the server makes them.
fn job_id(n: u128) -> String {
    ulid::Ulid::from_parts(CREATED_MS, n).to_string()
}

async fn clock_run(determinism: Option<Determinism>) -> (Value, AttemptReport) {
    let program = load("limits").await;
    let mut req = request(
        &json!({"op": "clock", "iterations": 20_000}).to_string(),
        roomy(),
    );
    req.determinism = determinism;
    let report = sandbox().run(&program, req).await;
    (expect_done(&report), report)
}

fn ns(v: &Value, field: &str) -> u64 {
    v[field]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

#[tokio::test]
async fn a_deterministic_attempt_repeats_its_output_and_fuel_exactly() {
    let of_job = Determinism::of_job(&job_id(1));
    let (first, first_report) = clock_run(Some(of_job)).await;
    let (second, second_report) = clock_run(Some(of_job)).await;
    assert_eq!(first, second);
    assert_eq!(first_report.fuel_used, second_report.fuel_used);

    // The clock starts at the job's creation and moves with the fuel spent:
    // after it, by less than the whole attempt's fuel.
    let start_ns = CREATED_MS * 1_000_000;
    let wall = ns(&first, "wall_ns");
    let elapsed = ns(&first, "elapsed_ns");
    assert!(
        wall >= start_ns && wall - start_ns < first_report.fuel_used,
        "{first}"
    );
    assert!(elapsed > 0 && elapsed < first_report.fuel_used, "{first}");

    // Another job draws other random numbers, from the same clock start.
    let other = Determinism::of_job(&job_id(2));
    let (third, _) = clock_run(Some(other)).await;
    assert_ne!(third["random"], first["random"]);
    assert_eq!(third["wall_ns"], first["wall_ns"]);
}

#[tokio::test]
async fn without_determinism_the_clocks_and_random_numbers_are_real() {
    let (first, _) = clock_run(None).await;
    let (second, _) = clock_run(None).await;
    assert_ne!(first["random"], second["random"]);
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let wall = ns(&first, "wall_ns");
    // Real time: within a minute of now, not at some job's creation.
    assert!(now_ns.abs_diff(wall) < 60_000_000_000, "{first}");
}

#[tokio::test]
async fn commands_of_either_preview_read_the_virtual_clock_and_seeded_random() {
    for guest in ["command-p2", "command-p1"] {
        let program = load(guest).await;
        let run = |determinism: Option<Determinism>| {
            let mut req = request(&json!({"clock": 20_000}).to_string(), roomy());
            req.determinism = determinism;
            let program = program.clone();
            async move {
                let report = sandbox().run(&program, req).await;
                (expect_done(&report)["clock"].clone(), report.fuel_used)
            }
        };
        let of_job = Determinism::of_job(&job_id(1));
        let (first, fuel) = run(Some(of_job)).await;
        let (second, fuel_again) = run(Some(of_job)).await;
        assert_eq!(first, second, "{guest}");
        assert_eq!(fuel, fuel_again, "{guest}");
        let wall = ns(&first, "wall_ns");
        let start_ns = CREATED_MS * 1_000_000;
        assert!(
            wall >= start_ns && wall - start_ns < fuel,
            "{guest}: {first}"
        );
        assert!(ns(&first, "elapsed_ns") < fuel, "{guest}: {first}");
        let (other, _) = run(Some(Determinism::of_job(&job_id(2)))).await;
        assert_ne!(other["random"], first["random"], "{guest}");
        // Without it: the real clock, other numbers each run.
        let (real, _) = run(None).await;
        let (real_again, _) = run(None).await;
        assert_ne!(real["random"], real_again["random"], "{guest}");
        assert!(
            ns(&real, "wall_ns") > start_ns + 60_000_000_000,
            "{guest}: {real}"
        );
    }
}
