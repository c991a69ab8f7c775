//! The harness's webhook endpoint: takes the `job.completed` deliveries of
//! every job, checks each one's signature, refuses every fourth request
//! (500) so that retries happen under the faults too, and keeps which
//! jobs' ends it got, and how often.

use anyhow::Context;
use axum::http::{HeaderMap, StatusCode};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use taskbox::webhooks::sign;

/// The secret the harness's webhook is made with.
pub const SECRET: &str = "faults-harness-secret";

/// What the endpoint got.
#[derive(Default)]
pub struct Got {
    /// Each job's `job.completed` deliveries accepted (2xx), by job id.
    pub ends: Mutex<HashMap<String, u64>>,
    pub requests: AtomicU64,
    /// Requests answered 500 on purpose.
    pub refused: AtomicU64,
    /// Requests whose signature did not verify.
    pub bad_signatures: AtomicU64,
}

/// Starts the endpoint on 127.0.0.1; its URL.
pub async fn start(got: Arc<Got>) -> anyhow::Result<String> {
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let got = got.clone();
            async move { take(&got, &headers, &body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot listen for the harness's webhook")?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(format!("http://{addr}/hook"))
}

fn take(got: &Got, headers: &HeaderMap, body: &str) -> StatusCode {
    let n = got.requests.fetch_add(1, Ordering::Relaxed) + 1;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let signed = headers
        .get(sign::HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|s| sign::verify(SECRET, s, body.as_bytes(), now, 300));
    if !signed {
        got.bad_signatures.fetch_add(1, Ordering::Relaxed);
        return StatusCode::UNAUTHORIZED;
    }
    if n.is_multiple_of(4) {
        got.refused.fetch_add(1, Ordering::Relaxed);
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    let event: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    if let Some(id) = event["job"]["id"].as_str() {
        *got.ends
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id.to_owned())
            .or_default() += 1;
    }
    StatusCode::OK
}
