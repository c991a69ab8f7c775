//! The harness's work: its tasks, a mix of jobs (most short, some seconds
//! long, some failing into a fallback, some failing for good), enqueued
//! over HTTP at a steady pace, each with an idempotency key and tried
//! again until the server acknowledges it.

use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The task most jobs run: retried, then handed to `FALLBACK`.
pub const WORK: &str = "work";
/// The fallback: the no-op guest, one attempt.
pub const FALLBACK: &str = "rescue";
/// A task with no fallback, whose failures stay failures; its jobs' ends
/// enqueue `AFTER` (its `on_success` and `on_fail`).
pub const PLAIN: &str = "plain";
/// The callback of `PLAIN`: the no-op guest, one attempt.
pub const AFTER: &str = "after";
/// The task of the harness's every-second schedule: the no-op guest.
pub const TICK: &str = "tick";
/// The every-second schedule, fired by whichever process leads.
pub const SCHEDULE: &str = "heartbeat";
/// Attempts of `WORK` and `PLAIN`.
pub const MAX_ATTEMPTS: u32 = 4;

/// One job of the mix, by its number.
pub fn job(i: u64) -> (&'static str, Value) {
    match i % 40 {
        // Seconds long: these are what a killed worker loses.
        0 | 20 => (WORK, json!({"op": "sleep", "ms": 1000 + (i * 7919) % 3000})),
        // Fails every attempt, then the fallback completes it.
        1 | 21 => (
            WORK,
            json!({"op": "fail", "code": "flaky", "retryable": true}),
        ),
        // Fails for good at once.
        2 => (
            PLAIN,
            json!({"op": "fail", "code": "broken", "retryable": false}),
        ),
        3 | 23 => (
            PLAIN,
            json!({"op": "sleep", "ms": 200 + (i * 104_729) % 800}),
        ),
        _ => (WORK, json!({"op": "echo", "value": i})),
    }
}

/// Uploads the guests, defines the tasks, and makes a webhook of every
/// job's end to `hook`.
pub async fn define(
    client: &reqwest::Client,
    api: &str,
    token: &str,
    guests: &Path,
    hook: &str,
) -> anyhow::Result<()> {
    let upload = |name: &'static str| {
        let path = guests.join(name);
        async move {
            let bytes = std::fs::read(&path).with_context(|| {
                format!(
                    "cannot read {} (build the guests first: scripts/build-guests)",
                    path.display()
                )
            })?;
            let r = client
                .post(format!("{api}/v1/components"))
                .bearer_auth(token)
                .body(bytes)
                .send()
                .await?;
            let status = r.status();
            let body: Value = r.json().await?;
            if !status.is_success() {
                bail!("cannot upload {name}: {body}");
            }
            Ok::<_, anyhow::Error>(body["digest"].clone())
        }
    };
    let limits = upload("limits.wasm").await?;
    let noop = upload("noop.wasm").await?;
    let retry =
        json!({"max_attempts": MAX_ATTEMPTS, "backoff": {"kind": "fixed", "delay_ms": 100}});
    for (name, spec) in [
        (
            FALLBACK,
            json!({"component": noop, "retry": {"max_attempts": 1}}),
        ),
        (
            WORK,
            json!({"component": limits, "retry": retry, "fallback": FALLBACK}),
        ),
        (
            AFTER,
            json!({"component": noop, "retry": {"max_attempts": 1}}),
        ),
        (
            PLAIN,
            json!({"component": limits, "retry": retry, "on_success": AFTER, "on_fail": AFTER}),
        ),
        (TICK, json!({"component": noop})),
    ] {
        let r = client
            .put(format!("{api}/v1/tasks/{name}"))
            .bearer_auth(token)
            .json(&spec)
            .send()
            .await?;
        if !r.status().is_success() {
            bail!("cannot define task {name}: {}", r.text().await?);
        }
    }
    let r = client
        .post(format!("{api}/v1/webhooks"))
        .bearer_auth(token)
        .json(&json!({"url": hook, "events": ["job.completed"], "secret": super::hook::SECRET}))
        .send()
        .await?;
    if !r.status().is_success() {
        bail!("cannot make the webhook: {}", r.text().await?);
    }
    // Every slot fires whatever the faults: the catch-up window outlasts
    // any outage the harness makes.
    let r = client
        .put(format!("{api}/v1/schedules/{SCHEDULE}"))
        .bearer_auth(token)
        .json(
            &json!({"cron": "* * * * * *", "task": TICK, "overlap": "allow",
                      "catchup_window_ms": 600_000}),
        )
        .send()
        .await?;
    if !r.status().is_success() {
        bail!("cannot make the schedule: {}", r.text().await?);
    }
    Ok(())
}

/// Pauses the schedule (tried again while the server cannot answer), so
/// that the jobs can all end before the audit.
pub async fn pause_schedule(
    client: &reqwest::Client,
    api: &str,
    token: &str,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = client
            .post(format!("{api}/v1/schedules/{SCHEDULE}/pause"))
            .bearer_auth(token)
            .send()
            .await;
        match r {
            Ok(r) if r.status().is_success() => return Ok(()),
            Ok(r) if Instant::now() > deadline => {
                bail!("cannot pause the schedule: {}", r.text().await?)
            }
            Err(e) if Instant::now() > deadline => bail!("cannot pause the schedule: {e}"),
            _ => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

/// What the enqueuers saw.
#[derive(Default)]
pub struct Enqueued {
    /// The id the server acknowledged for each job number, once it did.
    pub ids: Mutex<Vec<Option<String>>>,
    pub acknowledged: AtomicUsize,
    /// Answers 503 `UNAVAILABLE` (the database was down).
    pub unavailable: AtomicU64,
    /// Requests that got no answer at all, or an answer other than 2xx or
    /// 503 (an internal error, say); tried again.
    pub errors: AtomicU64,
    /// Jobs never acknowledged before the deadline.
    pub given_up: AtomicUsize,
}

/// How the jobs are sent.
pub struct Load {
    pub client: reqwest::Client,
    pub api: String,
    pub token: String,
    /// Jobs `0..jobs`.
    pub jobs: u64,
    /// Requests in flight at once.
    pub clients: usize,
    /// The time the enqueues are spread over.
    pub spread: Duration,
    /// How long one job is tried before it counts as never acknowledged.
    pub give_up_after: Duration,
}

/// Enqueues the jobs; each is sent again (same idempotency key) until the
/// server acknowledges it or `give_up_after` passes.
pub async fn enqueue(load: Load, out: Arc<Enqueued>) {
    let Load {
        client,
        api,
        token,
        jobs,
        clients,
        spread,
        give_up_after,
    } = load;
    *out.ids.lock().unwrap_or_else(|p| p.into_inner()) = vec![None; jobs as usize];
    let next = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients.max(1) {
        let (client, api, token, next, out) = (
            client.clone(),
            api.clone(),
            token.clone(),
            next.clone(),
            out.clone(),
        );
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs {
                    return;
                }
                // Paced, so that the faults meet a queue that is busy.
                let due = t0 + spread.mul_f64(i as f64 / jobs as f64);
                tokio::time::sleep_until(due.into()).await;
                let (task, input) = job(i);
                let body = json!({"task": task, "input": input});
                let started = Instant::now();
                loop {
                    let r = client
                        .post(format!("{api}/v1/jobs"))
                        .bearer_auth(&token)
                        .header("Idempotency-Key", format!("faults-{i}"))
                        .timeout(Duration::from_secs(10))
                        .json(&body)
                        .send()
                        .await;
                    match r {
                        Ok(r) if r.status().is_success() => {
                            let v: Value = r.json().await.unwrap_or(Value::Null);
                            if let Some(id) = v["id"].as_str() {
                                out.ids.lock().unwrap_or_else(|p| p.into_inner())[i as usize] =
                                    Some(id.to_owned());
                                out.acknowledged.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            out.errors.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(r) if r.status().as_u16() == 503 => {
                            out.unavailable.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(r) => {
                            let status = r.status();
                            let text = r.text().await.unwrap_or_default();
                            tracing::warn!(%status, %text, job = i, "enqueue refused");
                            out.errors.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            out.errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    if started.elapsed() > give_up_after {
                        out.given_up.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
}
