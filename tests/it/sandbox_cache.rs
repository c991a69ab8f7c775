//! The compile cache: artifacts are reused across processes, and a corrupted
//! or foreign artifact is detected and recompiled, never executed.

use crate::common::*;
use taskbox::sandbox::{Limits, Origin, SandboxConfig};

fn config(dir: &std::path::Path) -> SandboxConfig {
    SandboxConfig {
        cache_dir: Some(dir.to_owned()),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_corrupted_artifact_is_recompiled_not_executed() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = guest("invoice");
    let input = repo_file("guest-examples/rust/invoice/example.json");

    let first = small_sandbox(config(dir.path()));
    let program = first.load("test", &bytes).await.unwrap();
    assert_eq!(program.origin, Origin::Compiled { rejected: None });
    let path = first
        .artifact_cache()
        .unwrap()
        .artifact_path(&program.digest);
    assert!(path.exists());

    // A new process (here: a new sandbox) loads it from disk.
    let second = small_sandbox(config(dir.path()));
    let program = second.load("test", &bytes).await.unwrap();
    assert_eq!(program.origin, Origin::DiskCache);
    expect_done(&second.run(&program, request(&input, Limits::DEFAULT)).await);

    // Flip one byte of the machine code.
    let mut artifact = std::fs::read(&path).unwrap();
    let mid = artifact.len() / 2;
    artifact[mid] ^= 0xff;
    std::fs::write(&path, &artifact).unwrap();
    let third = small_sandbox(config(dir.path()));
    let program = third.load("test", &bytes).await.unwrap();
    assert!(
        matches!(&program.origin, Origin::Compiled { rejected: Some(why) } if why.contains("MAC")),
        "{:?}",
        program.origin
    );
    expect_done(&third.run(&program, request(&input, Limits::DEFAULT)).await);

    // Truncated to nothing.
    std::fs::write(&path, b"").unwrap();
    let fourth = small_sandbox(config(dir.path()));
    let program = fourth.load("test", &bytes).await.unwrap();
    assert!(matches!(
        program.origin,
        Origin::Compiled { rejected: Some(_) }
    ));

    // Another component's valid artifact swapped in under this digest.
    let other = fourth.load("test", &guest("noop")).await.unwrap();
    let other_path = fourth
        .artifact_cache()
        .unwrap()
        .artifact_path(&other.digest);
    std::fs::copy(&other_path, &path).unwrap();
    let fifth = small_sandbox(config(dir.path()));
    let program = fifth.load("test", &bytes).await.unwrap();
    assert!(matches!(
        program.origin,
        Origin::Compiled { rejected: Some(_) }
    ));
    let out = expect_done(&fifth.run(&program, request(&input, Limits::DEFAULT)).await);
    assert_eq!(out["invoice_number"], "INV-A-1001");
}

#[tokio::test]
async fn the_same_bytes_load_once_per_process() {
    let s = small_sandbox(Default::default());
    let a = s.load("test", &guest("noop")).await.unwrap();
    let b = s.load("test", &guest("noop")).await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert_eq!(
        a.digest.to_string(),
        taskbox::digest::Digest::of(&guest("noop")).to_string()
    );
}

/// Uploads of the same bytes at once compile them once; a load whose
/// caller gave up mid-compile still finishes, and the next load of those
/// bytes gets its program instead of compiling them again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_bytes_compile_once() {
    let sandbox = small_sandbox(SandboxConfig::default());
    let bytes = guest("wordstats");
    let (a, b) = tokio::join!(sandbox.load("test", &bytes), sandbox.load("test", &bytes));
    assert!(std::sync::Arc::ptr_eq(&a.unwrap(), &b.unwrap()));
    assert_eq!(sandbox.compiles(), 1);

    let bytes = guest("invoice");
    let first = {
        let (sandbox, bytes) = (sandbox.clone(), bytes.clone());
        tokio::spawn(async move { sandbox.load("test", &bytes).await })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while sandbox.compiles() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the compile never began"
        );
        tokio::task::yield_now().await;
    }
    first.abort();
    let program = sandbox.load("test", &bytes).await.unwrap();
    assert_eq!(program.digest.to_string().len(), 71);
    assert_eq!(
        sandbox.compiles(),
        2,
        "the abandoned compile was not wasted"
    );
}
