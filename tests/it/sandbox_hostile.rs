//! Every hostile guest ends in its own kind, the process stays up, and the
//! next attempt in the same sandbox is fine.

use crate::common::*;
use taskbox::attempt_log::Source;
use taskbox::job::ErrorKind;
use taskbox::sandbox::{Ending, Invalid, Limits};

#[tokio::test]
async fn infinite_loop_times_out_or_runs_out_of_fuel() {
    let limits = Limits {
        timeout_ms: 200,
        ..roomy()
    };
    let report = run("hostile-loop", "{}", limits).await;
    expect_failed(&report, ErrorKind::Timeout);
    next_attempt_is_fine().await;

    let limits = Limits {
        fuel: 100_000_000,
        ..roomy()
    };
    let report = run("hostile-loop", "{}", limits).await;
    expect_failed(&report, ErrorKind::FuelExhausted);
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn memory_bomb_hits_the_memory_limit() {
    let limits = Limits {
        memory_mb: 64,
        ..roomy()
    };
    let report = run("hostile-membomb", "{}", limits).await;
    expect_failed(&report, ErrorKind::MemoryLimit);
    assert!(report.peak_memory_bytes <= 64 << 20);
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn unbounded_recursion_overflows_the_stack() {
    let report = run("hostile-recursion", "{}", roomy()).await;
    expect_failed(&report, ErrorKind::StackOverflow);
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn a_100_mib_output_is_too_large() {
    let report = run("hostile-bigoutput", "{}", roomy()).await;
    expect_failed(&report, ErrorKind::OutputTooLarge);
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn a_stdout_flood_is_bounded_and_the_guest_finishes() {
    let report = run("hostile-stdout-flood", "{}", roomy()).await;
    assert_eq!(expect_done(&report)["flooded"], true);
    let kept: usize = report.log.lines.iter().map(|l| l.message.len()).sum();
    assert!(kept <= taskbox::sandbox::Ceilings::DEFAULT.max_log_bytes);
    // 64 MiB + 16 MiB of 100-byte lines were written; almost all were dropped and counted.
    assert!(
        report.log.dropped_bytes > 70 << 20,
        "{}",
        report.log.dropped_bytes
    );
    assert!(report.log.lines.iter().any(|l| l.source == Source::Stdout));
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn a_panic_is_a_trap_and_its_message_is_logged() {
    let report = run("hostile-panic", "{}", roomy()).await;
    let err = expect_failed(&report, ErrorKind::Trap);
    assert_eq!(err.code, "unreachable_code_reached");
    let log: Vec<_> = report
        .log
        .lines
        .iter()
        .map(|l| l.message.as_str())
        .collect();
    assert!(
        log.iter()
            .any(|m| m.contains("hostile guest panicked on purpose")),
        "the panic message reaches the log: {log:#?}"
    );
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn a_wasi_probe_finds_nothing() {
    let report = run("hostile-probe", "{}", roomy()).await;
    let out = expect_done(&report);
    for probe in [
        "read_dir_root",
        "read_dir_cwd",
        "read_etc_passwd",
        "write_tmp",
        "env_home",
    ] {
        assert!(out[probe].get("err").is_some(), "{probe} must fail: {out}");
    }
    assert_eq!(out["env_vars"]["ok"], serde_json::json!([]), "{out}");
    assert_eq!(out["stdin"]["ok"], "", "stdin is closed");
    assert!(!std::path::Path::new("/tmp/taskbox-probe").exists());
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn sleeping_in_a_host_call_times_out() {
    let limits = Limits {
        timeout_ms: 200,
        ..roomy()
    };
    let report = run("hostile-sleep", "{}", limits).await;
    expect_failed(&report, ErrorKind::Timeout);
    assert!(report.duration.as_secs() < 5);
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn an_import_the_host_does_not_offer_is_refused_by_name() {
    match sandbox().load("test", &guest("hostile-import")).await {
        Err(Invalid::ForbiddenImports(names)) => {
            assert_eq!(names, ["evil:net/raw@0.1.0"]);
        }
        other => panic!("expected the upload to be refused, got {other:?}"),
    }
    next_attempt_is_fine().await;
}

#[tokio::test]
async fn hostile_guests_side_by_side_do_not_disturb_a_real_task() {
    let limits = Limits {
        timeout_ms: 300,
        memory_mb: 64,
        ..roomy()
    };
    let hostile = [
        "hostile-loop",
        "hostile-membomb",
        "hostile-recursion",
        "hostile-panic",
    ];
    let mut tasks = Vec::new();
    for name in hostile {
        tasks.push(tokio::spawn(
            async move { run(name, "{}", limits).await.ending },
        ));
    }
    next_attempt_is_fine().await;
    for t in tasks {
        assert!(matches!(t.await.unwrap(), Ending::Failed(_)));
    }
}
