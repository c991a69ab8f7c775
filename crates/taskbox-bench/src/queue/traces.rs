//! `taskbox bench queue --only traces`: what tracing costs a job. The
//! burn-down of `--jobs` no-op jobs with traces off, with traces made and
//! batched but dropped (what the server itself pays), and sent over OTLP
//! to a receiver on this machine that reads each export, interleaved,
//! three times. Each job makes its wait and attempt spans; the enqueue's
//! span is the API's, and the burn-down inserts through the store.

use super::bed::{bed, burn_down, insert_plain};
use super::{durability, progress, runners, QueueBench};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use taskbox::otel::{OtlpEndpoint, OtlpProtocol, Traces};

/// An OTLP/HTTP receiver on 127.0.0.1 that reads each export whole and
/// answers it: its traces URL and the bytes it was sent.
async fn receiver() -> anyhow::Result<(String, Arc<AtomicU64>)> {
    let bytes = Arc::new(AtomicU64::new(0));
    let seen = bytes.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let seen = seen.clone();
            async move {
                seen.fetch_add(body.len() as u64, Ordering::Relaxed);
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1/traces", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, bytes))
}

/// One burn-down of `jobs` jobs with spans going to `to` (`None`: off):
/// seconds taken, the spans flushed before the clock stops.
async fn burn(args: &QueueBench, jobs: u64, to: Option<&OtlpEndpoint>) -> anyhow::Result<f64> {
    let b = bed(args, durability(args)).await?;
    let traces = match to {
        Some(e) => Traces::start(e)?,
        None => Traces::off(),
    };
    b.registry.set_traces(traces.clone());
    insert_plain(&b, jobs).await?;
    let started = std::time::Instant::now();
    burn_down(b, runners(args), jobs).await?;
    traces.shutdown().await;
    Ok(started.elapsed().as_secs_f64())
}

pub async fn traces(args: &QueueBench, rounds: usize) -> anyhow::Result<serde_json::Value> {
    let n = args.jobs;
    let (url, received) = receiver().await?;
    let sent = OtlpEndpoint::parse(&url, OtlpProtocol::Http)?;
    let mut runs = Vec::new();
    for round in 1..=rounds {
        progress(&format!("round {round} of {rounds}: off, dropped, sent"));
        let off = burn(args, n, None).await?;
        let dropped = burn(args, n, Some(&OtlpEndpoint::Drop)).await?;
        let before = received.load(Ordering::Relaxed);
        let sent_s = burn(args, n, Some(&sent)).await?;
        let bytes = received.load(Ordering::Relaxed) - before;
        eprintln!(" done");
        runs.push(json!({
            "off_jobs_per_second": n as f64 / off,
            "dropped_jobs_per_second": n as f64 / dropped,
            "sent_jobs_per_second": n as f64 / sent_s,
            "dropped_vs_off": dropped / off,
            "sent_vs_off": sent_s / off,
            "us_per_job_dropped": (dropped - off) / n as f64 * 1e6,
            "us_per_job_sent": (sent_s - off) / n as f64 * 1e6,
            "otlp_bytes_per_job": bytes as f64 / n as f64,
        }));
    }
    Ok(json!({"jobs": n, "rounds": runs}))
}
