//! Both ABIs end to end: the task world (Rust, JavaScript), commands
//! (preview-2 component, preview-1 module, Go), outcomes, progress, cancel,
//! and refusal of bytes that are not a guest.

use crate::common::*;
use serde_json::json;
use std::sync::{Arc, Mutex};
use taskbox::job::ErrorKind;
use taskbox::sandbox::{Abi, AttemptRequest, Ending, Invalid, Limits};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn rust_invoice_task() {
    let input = repo_file("guest-examples/rust/invoice/example.json");
    let program = load("invoice").await;
    assert_eq!(program.abi(), Abi::Task);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut req = request(&input, Limits::DEFAULT);
    let hook_seen = seen.clone();
    req.on_progress = Some(Arc::new(move |p| hook_seen.lock().unwrap().push(p.percent)));
    let report = sandbox().run(&program, req).await;
    let out = expect_done(&report);
    assert_eq!(out["invoice_number"], "INV-A-1001");
    assert_eq!(out["subtotal_cents"], 10547);
    assert_eq!(out["total_cents"], 11924);
    assert_eq!(*seen.lock().unwrap(), [50, 100]);
    assert_eq!(report.progress.unwrap().percent, 100);
    assert!(report
        .log
        .lines
        .iter()
        .any(|l| l.message.contains("A-1001")));
}

#[tokio::test]
async fn rust_wordstats_task() {
    let input = repo_file("guest-examples/rust/wordstats/example.json");
    let out = expect_done(&run("wordstats", &input, Limits::DEFAULT).await);
    assert!(out["words"].as_u64().unwrap() > 0);
    assert!(out["top"].as_array().is_some());
}

#[tokio::test]
async fn javascript_task_and_its_thrown_failure() {
    let program = load("js-article").await;
    assert_eq!(program.abi(), Abi::Task);
    let input = repo_file("guest-examples/js/example.json");
    let report = run_loaded(&program, &input).await;
    let out = expect_done(&report);
    assert_eq!(out["slug"], "sandboxing-jobs-with-webassembly-components");
    assert_eq!(out["words"], 40);
    assert_eq!(
        out["headings"],
        json!(["Why sandbox jobs?", "Limits", "Résumé"])
    );

    let bad = json!({"title": "", "body": "x"}).to_string();
    let report = run_loaded(&program, &bad).await;
    expect_guest_failure(&report, "empty_title", false);
}

#[tokio::test]
async fn python_task_and_its_raised_failure() {
    let program = load("py-sales").await;
    assert_eq!(program.abi(), Abi::Task);
    let input = repo_file("guest-examples/python/example.json");
    let report = run_loaded(&program, &input).await;
    let out = expect_done(&report);
    assert_eq!(out["rows"], 5);
    assert_eq!(out["total"], 1190.5);
    assert_eq!(
        out["groups"][0],
        json!({"key": "north", "rows": 2, "total": 700.0})
    );
    assert!(report
        .log
        .lines
        .iter()
        .any(|l| l.message.contains("5 rows in 3 groups")));

    let bad = json!({"csv": "a,b\nx,not-a-number\n", "group_by": "a", "sum": "b"}).to_string();
    let report = run_loaded(&program, &bad).await;
    expect_guest_failure(&report, "bad_number", false);
}

#[tokio::test]
async fn go_command_module() {
    let program = load("go-stats").await;
    assert_eq!(program.abi(), Abi::Command);
    let input = repo_file("guest-examples/go/example.json");
    let out = expect_done(&run_loaded(&program, &input).await);
    assert_eq!(out["count"], 8);

    let report = run_loaded(&program, "{\"readings\": \"no\"}").await;
    let err = expect_failed(&report, ErrorKind::TaskFailed);
    assert_eq!(err.code, "exit:2");
    assert_eq!(err.retryable, Some(true));
    assert!(!err.message.is_empty(), "stderr's tail is the message");
}

#[tokio::test]
async fn preview2_and_preview1_commands() {
    // wasi:cli/exit 0.2 can only say success or failure, so a preview-2
    // command's `exit(3)` arrives as status 1; preview 1 keeps the code.
    for (name, status) in [("command-p2", "exit:1"), ("command-p1", "exit:3")] {
        let program = load(name).await;
        assert_eq!(program.abi(), Abi::Command);
        let out = expect_done(&run_loaded(&program, "{\"a\": 1}").await);
        assert_eq!(out["echo"], json!({"a": 1}), "{name}");

        let report = run_loaded(&program, "{\"exit\": 3}").await;
        let err = expect_failed(&report, ErrorKind::TaskFailed);
        assert_eq!(err.code, status, "{name}");
        assert!(err.message.contains("failing with exit 3"), "{name}: {err}");
    }
}

#[tokio::test]
async fn outcomes_and_guest_failures() {
    let limits = Limits::DEFAULT;
    let go =
        |v: serde_json::Value| async move { run("limits", &v.to_string(), limits).await.ending };

    assert_eq!(
        go(json!({"op": "snooze", "ms": 1500})).await,
        Ending::Snooze(1500)
    );
    match go(json!({"op": "wait", "for": {"approval": "manager"}})).await {
        Ending::Wait(text) => {
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&text).unwrap(),
                json!({"approval": "manager"})
            )
        }
        other => panic!("{other:?}"),
    }
    match go(json!({"op": "fail", "code": "card_declined", "retryable": false})).await {
        Ending::Failed(e) => {
            assert_eq!(
                (e.kind, e.code.as_str(), e.retryable),
                (ErrorKind::TaskFailed, "card_declined", Some(false))
            )
        }
        other => panic!("{other:?}"),
    }
    match go(json!({"op": "raw", "text": "not json {"})).await {
        Ending::Failed(e) => assert_eq!(e.kind, ErrorKind::InvalidOutput),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_flaky_task_sees_its_attempt_number() {
    let program = load("flaky").await;
    let input = json!({"succeed_on_attempt": 3}).to_string();
    for attempt in 1..=3 {
        let req = AttemptRequest::new(job(attempt), input.clone(), Limits::DEFAULT);
        let report = sandbox().run(&program, req).await;
        if attempt < 3 {
            expect_guest_failure(&report, "not_yet", true);
        } else {
            assert_eq!(expect_done(&report)["attempt"], 3);
        }
    }
}

#[tokio::test]
async fn cancelling_stops_a_running_guest() {
    let program = load("hostile-loop").await;
    let cancel = CancellationToken::new();
    let mut req = request("{}", roomy());
    req.cancel = Some(cancel.clone());
    let running = tokio::spawn(async move { sandbox().run(&program, req).await });
    cancel.cancel();
    let report = running.await.unwrap();
    assert_eq!(report.ending, Ending::Cancelled);
    assert!(report.duration.as_secs() < 10);
}

#[tokio::test]
async fn bytes_that_are_not_a_guest_are_refused_clearly() {
    let s = sandbox();
    assert_eq!(
        s.load("test", b"#!/bin/sh\necho hi").await.unwrap_err(),
        Invalid::NotWasm
    );

    let no_start = wat::parse_str("(module (func (export \"main\")))").unwrap();
    assert_eq!(
        s.load("test", &no_start).await.unwrap_err(),
        Invalid::NoEntryPoint
    );

    let bad_imports = wat::parse_str(
        r#"(module (import "env" "open" (func)) (import "wasi_snapshot_preview1" "nope" (func))
                   (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
                   (func (export "_start")))"#,
    )
    .unwrap();
    match s.load("test", &bad_imports).await.unwrap_err() {
        Invalid::ForbiddenImports(names) => {
            assert_eq!(names, ["env::open", "wasi_snapshot_preview1::nope"])
        }
        other => panic!("{other:?}"),
    }

    // A preview-1 import with the wrong signature is caught when linking.
    let wrong_sig = wat::parse_str(
        r#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32)))
                   (func (export "_start")))"#,
    )
    .unwrap();
    assert!(matches!(
        s.load("test", &wrong_sig).await.unwrap_err(),
        Invalid::Link(_)
    ));

    let invalid = wat::parse_str("(module (func (export \"_start\") (result i32)))").unwrap();
    let err = s.load("test", &invalid).await.unwrap_err();
    assert!(
        matches!(err, Invalid::Compile(_) | Invalid::Link(_)),
        "{err:?}"
    );
}

#[tokio::test]
async fn truncated_and_corrupted_components_never_panic() {
    let bytes = guest("noop");
    let s = small_sandbox(Default::default());
    for cut in [9, 64, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        assert!(s.load("test", &bytes[..cut]).await.is_err(), "cut at {cut}");
    }
    let mut flipped = bytes.clone();
    for i in (8..flipped.len()).step_by(997) {
        flipped[i] ^= 0x5a;
    }
    // Either refused or, if still valid, runs to some classified ending.
    if let Ok(p) = s.load("test", &flipped).await {
        let _ = s.run(&p, request("{}", Limits::DEFAULT)).await;
    }
}

#[tokio::test]
async fn oversized_uploads_are_refused_before_parsing() {
    let s = small_sandbox(taskbox::sandbox::SandboxConfig {
        max_component_bytes: 1000,
        ..Default::default()
    });
    match s.load("test", &guest("noop")).await.unwrap_err() {
        Invalid::TooLarge { limit, .. } => assert_eq!(limit, 1000),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_full_instance_pool_is_unavailable_not_a_guest_failure() {
    let s = small_sandbox(taskbox::sandbox::SandboxConfig {
        max_instances: 1,
        ..Default::default()
    });
    let sleeper = s.load("test", &guest("limits")).await.unwrap();
    let noop = s.load("test", &guest("noop")).await.unwrap();
    let cancel = CancellationToken::new();
    let mut req = request(&json!({"op": "sleep", "ms": 60_000}).to_string(), roomy());
    req.cancel = Some(cancel.clone());
    let holder = {
        let s = s.clone();
        tokio::spawn(async move { s.run(&sleeper, req).await })
    };
    // Once the sleeper holds the only slot, the next attempt cannot get one.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let why = loop {
        match s.run(&noop, request("{}", Limits::DEFAULT)).await.ending {
            Ending::Unavailable(why) => break why,
            Ending::Done(_) => {}
            other => panic!("{other:?}"),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the pool never filled"
        );
        tokio::task::yield_now().await;
    };
    assert!(why.contains("concurrent"), "{why}");
    cancel.cancel();
    assert_eq!(holder.await.unwrap().ending, Ending::Cancelled);
    expect_done(&s.run(&noop, request("{}", Limits::DEFAULT)).await);
}
