//! The HTTP parts: enqueues from many clients (`POST /v1/jobs`) and
//! batches of a thousand from one (`POST /v1/jobs/batch`), to a server with
//! no runners.

use super::bed::Db;
use super::{durability, progress, QueueBench};
use crate::common::percentiles;
use anyhow::bail;
use anyhow::Context;
use serde_json::json;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use taskbox::app::App;
use taskbox::config::ServeConfig;

/// A server on a fresh database with no runners, and the no-op task
/// defined on it: what the HTTP parts enqueue into.
struct HttpBed {
    _dir: tempfile::TempDir,
    db: Db,
    app: App,
    url: String,
    client: reqwest::Client,
}

const TOKEN: &str = "bench-admin-token-0123456789";

async fn http_bed(args: &QueueBench) -> anyhow::Result<HttpBed> {
    let dir = tempfile::tempdir()?;
    let db = Db::new(args, dir.path()).await?;
    let started = App::start(ServeConfig {
        durability: durability(args),
        ..crate::server::serve_config(dir.path(), db.url.clone(), TOKEN, &args.taskbox)?
    })
    .await?;
    let app = started.app;
    let url = format!(
        "http://{}",
        app.addr.context("the bench server has no API")?
    );
    let client = taskbox::http::default_client();
    let noop = std::fs::read(args.guests.join("noop.wasm")).context("cannot read noop.wasm")?;
    let up: serde_json::Value = client
        .post(format!("{url}/v1/components"))
        .bearer_auth(TOKEN)
        .body(noop)
        .send()
        .await?
        .json()
        .await?;
    let put = client
        .put(format!("{url}/v1/tasks/noop"))
        .bearer_auth(TOKEN)
        .body(json!({"component": up["digest"], "input_schema": {"type": "object"}}).to_string())
        .send()
        .await?;
    if !put.status().is_success() {
        bail!("cannot define the task: {}", put.text().await?);
    }
    Ok(HttpBed {
        _dir: dir,
        db,
        app,
        url,
        client,
    })
}

pub(super) async fn http(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let HttpBed {
        _dir,
        db,
        app,
        url,
        client,
    } = http_bed(args).await?;
    progress(&format!(
        "{} enqueues from {} clients",
        args.http_jobs, args.clients
    ));
    let next = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(AtomicU64::new(0));
    // Parsed once: the clients share this process's cores with the server,
    // and parsing the URL for every request showed in its profile.
    let endpoint = reqwest::Url::parse(&format!("{url}/v1/jobs"))?;
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..args.clients {
        let (client, url, next, failures, total) = (
            client.clone(),
            endpoint.clone(),
            next.clone(),
            failures.clone(),
            args.http_jobs,
        );
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let r = client
                    .post(url.clone())
                    .bearer_auth(TOKEN)
                    .body(r#"{"task": "noop", "input": {"n": 1}}"#)
                    .send()
                    .await;
                if !matches!(r, Ok(ref resp) if resp.status() == 201) {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for t in tasks {
        t.await?;
    }
    let elapsed = t0.elapsed();
    eprintln!(" done");
    app.stop().await;
    db.drop().await;
    let failed = failures.load(Ordering::Relaxed);
    if failed > 0 {
        bail!("{failed} enqueues were not acknowledged with 201");
    }
    Ok(json!({
        "jobs": args.http_jobs,
        "clients": args.clients,
        "seconds": elapsed.as_secs_f64(),
        "jobs_per_second": args.http_jobs as f64 / elapsed.as_secs_f64(),
    }))
}

#[derive(serde::Deserialize)]
struct BatchAnswer {
    jobs: Vec<BatchItem>,
}

#[derive(serde::Deserialize)]
struct BatchItem {
    id: Option<String>,
}

/// One client sending `POST /v1/jobs/batch` of a thousand jobs, one
/// request after another's answer: jobs written per second, and how long
/// each request took.
pub(super) async fn batch(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let bed = http_bed(args).await?;
    const PER_BATCH: u64 = taskbox::enqueue::MAX_BATCH as u64;
    let total = args.batch_jobs.div_ceil(PER_BATCH) * PER_BATCH;
    progress(&format!(
        "{total} jobs in batches of {PER_BATCH} from one client"
    ));
    let endpoint = reqwest::Url::parse(&format!("{}/v1/jobs/batch", bed.url))?;
    // Each batch's text made before the clock starts: the client's work
    // is not the server's.
    let bodies: Vec<String> = (0..total / PER_BATCH)
        .map(|b| {
            let jobs: Vec<serde_json::Value> = (0..PER_BATCH)
                .map(|i| json!({"task": "noop", "input": {"n": b * PER_BATCH + i}}))
                .collect();
            json!({ "jobs": jobs }).to_string()
        })
        .collect();
    let mut took = Vec::with_capacity(bodies.len());
    let t0 = Instant::now();
    for body in bodies {
        let t = Instant::now();
        let resp = bed
            .client
            .post(endpoint.clone())
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await?;
        let status = resp.status();
        let text = resp.bytes().await?;
        took.push(t.elapsed());
        // Read only what is checked: every item a job with an id.
        let answer: BatchAnswer = match serde_json::from_slice(&text) {
            Ok(a) if status.is_success() => a,
            _ => bail!(
                "a batch was refused ({status}): {}",
                String::from_utf8_lossy(&text)
            ),
        };
        if answer.jobs.len() as u64 != PER_BATCH || answer.jobs.iter().any(|j| j.id.is_none()) {
            bail!(
                "a job of a batch was refused: {}",
                String::from_utf8_lossy(&text)
            );
        }
    }
    let elapsed = t0.elapsed();
    eprintln!(" done");
    let queued = bed.app.state.store.job_counts().await?;
    bed.app.stop().await;
    bed.db.drop().await;
    if queued != vec![(taskbox::job::JobStatus::Queued, total)] {
        bail!("not every job was written: {queued:?}");
    }
    Ok(json!({
        "jobs": total,
        "per_batch": PER_BATCH,
        "seconds": elapsed.as_secs_f64(),
        "jobs_per_second": total as f64 / elapsed.as_secs_f64(),
        "request": percentiles(took),
    }))
}
