//! The book's walk through outbound HTTP and secrets (docs/book/src/outbound.md), run as a user runs
//! it: the real binary started with `--outbound-allow-private`, the shell
//! block after `<!-- outbound-quick-start -->` run by bash. The demo host
//! must get the real key, and the job's log must show it redacted.

use crate::e2e::{doc_block, run_script, Served, ADMIN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbound_quick_start_works() {
    let dir = tempfile::tempdir().unwrap();
    let server = Served::spawn(dir.path(), &["--outbound-allow-private"], Some(ADMIN));
    let script = doc_block("docs/book/src/outbound.md", "<!-- outbound-quick-start -->");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = run_script(
        &script,
        &server.url,
        ADMIN,
        &[("DEMO_PORT", port.to_string())],
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(out.status.success(), "the walkthrough failed:\n{all}");
    assert!(
        stderr.contains("the host got x-api-key: sk_demo_7f3a9c2e51"),
        "{all}"
    );
    assert!(stdout.contains("secret API_KEY = [redacted]"), "{all}");
    assert!(
        !stdout.contains("sk_demo_7f3a9c2e51"),
        "the job's answers leak the key:\n{all}"
    );
    assert!(stdout.contains("1 req"), "{all}");
}
