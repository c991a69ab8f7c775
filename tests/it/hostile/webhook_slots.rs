//! Round two, item 10: the webhook sender's slots are shared among
//! tenants. Thirty-two webhooks of one tenant aimed at an endpoint that
//! accepts and never answers once held all 256 slots, and another
//! tenant's `job.completed` waited for their timeout.

use crate::server::{TestServer, ALL_SCOPES};
use axum::http::StatusCode;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Accepts connections and keeps them, reading nothing, answering nothing.
async fn black_hole() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            held.push(socket);
        }
    });
    (format!("http://{addr}/hook"), accepted)
}

/// Answers 200 and notes when each request came.
async fn endpoint() -> (String, Arc<Mutex<Vec<tokio::time::Instant>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let sink = sink.clone();
            async move {
                sink.lock().unwrap().push(tokio::time::Instant::now());
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/hook"), got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_silent_endpoints_do_not_hold_anothers_deliveries() {
    // A's tries hang for a minute (the longest a try may wait): B's
    // delivery arriving within half that means it waited for none of them.
    let s = TestServer::start_with(2, |c| {
        c.webhooks.allow_private = true;
        c.webhooks.timeout = Duration::from_secs(60);
    })
    .await;
    let a = s.tenant("flooder", ALL_SCOPES).await;
    let b = s.tenant("bystander", ALL_SCOPES).await;
    s.task(&a, "echo", "noop", json!({})).await;
    s.task(&b, "echo", "noop", json!({})).await;

    let (hole, accepted) = black_hole().await;
    for _ in 0..32 {
        let (status, body) = s
            .post(
                "/v1/webhooks",
                &a,
                json!({"url": hole, "events": ["job.completed"]}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    // Eight completed jobs: eight deliveries for each of A's 32 webhooks,
    // 256 in all, as many as the sender has slots.
    for _ in 0..8 {
        let job = s.enqueue(&a, json!({"task": "echo"})).await;
        s.finished(&a, job["id"].as_str().unwrap()).await;
    }
    // A holds what it may of the slots: wait until the hole has them.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while accepted.load(Ordering::SeqCst) < 64 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the black hole got {} connections",
            accepted.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let (url, got) = endpoint().await;
    let (status, body) = s
        .post(
            "/v1/webhooks",
            &b,
            json!({"url": url, "events": ["job.completed"]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let job = s.enqueue(&b, json!({"task": "echo"})).await;
    s.finished(&b, job["id"].as_str().unwrap()).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while got.lock().unwrap().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "B's delivery waited behind A's {} silent connections",
            accepted.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A still holds its connections (none of its tries ended), and no
    // more than its share of them.
    let held = accepted.load(Ordering::SeqCst);
    assert!(
        held <= 64,
        "A holds {held} connections, past its share of 64"
    );
}
