//! Each limit as an obeyed/violated pair on the same guest (`limits.wasm`),
//! plus fuel determinism and the bounded log.

use crate::common::*;
use serde_json::json;
use taskbox::attempt_log::Source;
use taskbox::job::ErrorKind;
use taskbox::sandbox::{Ceilings, Limits};

fn op(v: serde_json::Value) -> String {
    v.to_string()
}

#[tokio::test]
async fn timeout_obeyed_and_violated() {
    let limits = Limits {
        timeout_ms: 10_000,
        ..roomy()
    };
    let ok = run(
        "limits",
        &op(json!({"op": "spin", "iterations": 100_000})),
        limits,
    )
    .await;
    expect_done(&ok);

    let limits = Limits {
        timeout_ms: 150,
        ..roomy()
    };
    let report = run(
        "limits",
        &op(json!({"op": "spin", "iterations": u64::MAX})),
        limits,
    )
    .await;
    let err = expect_failed(&report, ErrorKind::Timeout);
    assert!(err.message.contains("150 ms"), "{err}");
    assert!(report.duration.as_millis() >= 150);
}

#[tokio::test]
async fn timeout_reaches_a_guest_blocked_in_a_host_call() {
    let limits = Limits {
        timeout_ms: 10_000,
        ..roomy()
    };
    let ok = run("limits", &op(json!({"op": "sleep", "ms": 5})), limits).await;
    assert_eq!(expect_done(&ok)["slept_ms"], 5);

    // Epochs do not fire while the guest sleeps in WASI; the outer timer does.
    let limits = Limits {
        timeout_ms: 150,
        ..roomy()
    };
    let report = run("limits", &op(json!({"op": "sleep", "ms": 600_000})), limits).await;
    expect_failed(&report, ErrorKind::Timeout);
}

#[tokio::test]
async fn fuel_obeyed_and_violated() {
    let limits = Limits {
        fuel: 50_000_000,
        ..roomy()
    };
    let ok = run(
        "limits",
        &op(json!({"op": "spin", "iterations": 1000})),
        limits,
    )
    .await;
    expect_done(&ok);
    assert!(ok.fuel_used > 0 && ok.fuel_used < 50_000_000);

    let report = run(
        "limits",
        &op(json!({"op": "spin", "iterations": u64::MAX})),
        limits,
    )
    .await;
    expect_failed(&report, ErrorKind::FuelExhausted);
    assert_eq!(report.fuel_used, 50_000_000);
}

#[tokio::test]
async fn fuel_is_deterministic() {
    let input = op(json!({"op": "spin", "iterations": 200_000}));
    let a = run("limits", &input, roomy()).await;
    let b = run("limits", &input, roomy()).await;
    expect_done(&a);
    assert_eq!(a.fuel_used, b.fuel_used, "same input, same fuel");

    // A separate engine counts the same, and runs out at the same point.
    let other = small_sandbox(Default::default());
    let program = other.load("test", &guest("limits")).await.unwrap();
    let c = other.run(&program, request(&input, roomy())).await;
    assert_eq!(a.fuel_used, c.fuel_used);

    let budget = a.fuel_used / 2;
    let limits = Limits {
        fuel: budget,
        ..roomy()
    };
    let x = run("limits", &input, limits).await;
    let y = other.run(&program, request(&input, limits)).await;
    expect_failed(&x, ErrorKind::FuelExhausted);
    expect_failed(&y, ErrorKind::FuelExhausted);
    assert_eq!((x.fuel_used, y.fuel_used), (budget, budget));
}

#[tokio::test]
async fn memory_obeyed_and_violated() {
    let limits = Limits {
        memory_mb: 64,
        ..roomy()
    };
    let ok = run("limits", &op(json!({"op": "alloc", "mb": 16})), limits).await;
    assert_eq!(expect_done(&ok)["allocated_mb"], 16);
    assert!(ok.peak_memory_bytes >= 16 << 20 && ok.peak_memory_bytes <= 64 << 20);

    let report = run("limits", &op(json!({"op": "alloc", "mb": 128})), limits).await;
    let err = expect_failed(&report, ErrorKind::MemoryLimit);
    assert!(err.message.contains("64 MiB"), "{err}");
    assert!(report.peak_memory_bytes <= 64 << 20);
}

#[tokio::test]
async fn stack_obeyed_and_violated() {
    let ok = run(
        "limits",
        &op(json!({"op": "recurse", "depth": 1000})),
        roomy(),
    )
    .await;
    assert_eq!(expect_done(&ok)["depth"], 1000);

    let report = run(
        "limits",
        &op(json!({"op": "recurse", "depth": 100_000_000})),
        roomy(),
    )
    .await;
    expect_failed(&report, ErrorKind::StackOverflow);
}

#[tokio::test]
async fn output_size_obeyed_and_violated() {
    let cap = Ceilings::DEFAULT.max_output_bytes as u64;
    // Exactly at the cap: the JSON string is n + 2 bytes.
    let ok = run(
        "limits",
        &op(json!({"op": "output", "bytes": cap - 2})),
        roomy(),
    )
    .await;
    assert_eq!(expect_done(&ok).as_str().unwrap().len() as u64, cap - 2);

    // Just past it (within the copy slack) and far past it fail the same way.
    for bytes in [cap - 1, 8 * cap] {
        let report = run(
            "limits",
            &op(json!({"op": "output", "bytes": bytes})),
            roomy(),
        )
        .await;
        expect_failed(&report, ErrorKind::OutputTooLarge);
    }
}

#[tokio::test]
async fn log_is_bounded_and_counts_what_it_drops() {
    let ok = run("limits", &op(json!({"op": "log", "lines": 10})), roomy()).await;
    expect_done(&ok);
    let guest_lines: Vec<_> = ok
        .log
        .lines
        .iter()
        .filter(|l| l.source == Source::Guest)
        .collect();
    assert_eq!(guest_lines.len(), 10);
    assert_eq!(guest_lines[0].message, "line 1");
    assert_eq!(ok.log.dropped_lines, 0);

    let lines = 100_000u64;
    let chatty = run("limits", &op(json!({"op": "log", "lines": lines})), roomy()).await;
    assert_eq!(expect_done(&chatty)["lines"], lines);
    let kept: usize = chatty.log.lines.iter().map(|l| l.message.len()).sum();
    assert!(kept <= Ceilings::DEFAULT.max_log_bytes);
    assert_eq!(
        chatty.log.lines.len() as u64 + chatty.log.dropped_lines,
        lines
    );
}

/// Empty lines cost something too: a guest writing `\n` in a loop or
/// logging "" cannot grow the host past the log budget.
#[tokio::test]
async fn empty_lines_count_against_the_log_budget() {
    let lines = 100_000u64;
    let report = run(
        "limits",
        &op(json!({"op": "blank", "lines": lines})),
        roomy(),
    )
    .await;
    assert_eq!(expect_done(&report)["lines"], lines);
    let kept = report.log.lines.len() as u64;
    // Every kept line costs at least 16 bytes of the budget, empty or not.
    assert!(
        kept <= (Ceilings::DEFAULT.max_log_bytes / 16) as u64,
        "{kept} empty lines kept"
    );
    assert_eq!(kept + report.log.dropped_lines, 2 * lines);
}

#[tokio::test]
async fn limits_above_the_ceilings_are_clamped() {
    let sandbox = small_sandbox(taskbox::sandbox::SandboxConfig {
        ceilings: Ceilings {
            max_memory_mb: 32,
            ..Ceilings::DEFAULT
        },
        ..Default::default()
    });
    let program = sandbox.load("test", &guest("limits")).await.unwrap();
    let asked = Limits {
        memory_mb: 4096,
        ..roomy()
    };
    let report = sandbox
        .run(
            &program,
            request(&op(json!({"op": "alloc", "mb": 48})), asked),
        )
        .await;
    let err = expect_failed(&report, ErrorKind::MemoryLimit);
    assert!(err.message.contains("32 MiB"), "{err}");
}
