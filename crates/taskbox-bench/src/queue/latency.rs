//! Enqueue→start latency: sequential enqueues, each timed from its call
//! (and from its answer) to its attempt's start.

use super::bed::{bed, job};
use super::{durability, progress, runners, QueueBench};
use crate::common::percentiles;
use anyhow::Context;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;
use taskbox::api::auth::DEFAULT_TENANT;
use taskbox::enqueue::Enqueuer;
use taskbox::enqueue::JobSpec;
use taskbox::runner::Runner;
use taskbox::runner::RunnerConfig;
use taskbox::runner::RunnerEvent;
use tokio::sync::oneshot;
use tokio::sync::Notify;

pub(super) async fn latency(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let b = bed(args, durability(args)).await?;
    let waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Instant>>>> = Arc::default();
    // Through the enqueue path the id is not known before the call; the
    // enqueues are one at a time, so the next start is the one.
    let next: Arc<Mutex<Option<oneshot::Sender<Instant>>>> = Arc::default();
    let (w, n) = (waiting.clone(), next.clone());
    let hook = Arc::new(move |e: RunnerEvent| {
        if let RunnerEvent::Started { id, at, .. } = e {
            let tx = w.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            let tx = tx.or_else(|| n.lock().unwrap_or_else(|p| p.into_inner()).take());
            if let Some(tx) = tx {
                let _ = tx.send(at);
            }
        }
    });
    let wake = Arc::new(Notify::new());
    let runner = Arc::new(Runner::start(
        b.registry.clone(),
        RunnerConfig {
            on_event: Some(hook),
            ..RunnerConfig::new(runners(args))
        },
        wake.clone(),
    ));
    let enqueuer = Enqueuer::new(b.registry.clone(), runner.clone());
    // Two ways a job reaches a runner, each timed from its enqueue call to
    // its attempt's start: through the enqueue path (`Enqueuer`, which
    // `POST /v1/jobs` calls: the task's rules, then the runner's insert
    // and a claim for its tenant); and inserted by the store alone, then claimed by the claim
    // loop once woken (a job enqueued by another process, or while the
    // runner was full).
    let mut ids = ulid::Generator::new();
    let mut timed = Vec::new();
    for by_runner in [true, false] {
        progress(&format!(
            "{} sequential enqueues{}",
            args.samples + 100,
            if by_runner {
                " through the enqueue path"
            } else {
                ", claimed by the claim loop"
            }
        ));
        let (mut from_call, mut from_ack) = (Vec::new(), Vec::new());
        for i in 0..(args.samples + 100) {
            let (tx, rx) = oneshot::channel();
            let t0;
            if by_runner {
                *next.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
                t0 = Instant::now();
                let spec = JobSpec::of(b.task.name.clone(), json!({}));
                enqueuer.enqueue(DEFAULT_TENANT, spec, None).await?;
            } else {
                let id = ids.generate().map(|u| u.to_string()).unwrap_or_default();
                waiting
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(id.clone(), tx);
                t0 = Instant::now();
                let jobs = vec![job(&b.task, id)];
                b.store
                    .job_insert(jobs)
                    .await?
                    .into_iter()
                    .next()
                    .context("no answer")??;
            }
            let acked = Instant::now();
            if !by_runner {
                wake.notify_one();
            }
            let at = tokio::time::timeout(Duration::from_secs(10), rx)
                .await
                .context("a job did not start within 10 s")??;
            if i >= 100 {
                from_call.push(at.saturating_duration_since(t0));
                from_ack.push(at.saturating_duration_since(acked));
            }
        }
        eprintln!(" done");
        timed.push((from_call, from_ack));
    }
    runner.stop(Duration::from_secs(5)).await;
    b.store.close().await;
    b.db.drop().await;
    let mut timed = timed.into_iter();
    let (api_call, api_ack) = timed.next().unwrap_or_default();
    let (loop_call, loop_ack) = timed.next().unwrap_or_default();
    Ok(json!({
        "samples": args.samples,
        "enqueue_call_to_start": percentiles(api_call),
        "acknowledged_to_start": percentiles(api_ack),
        "by_the_claim_loop": {
            "enqueue_call_to_start": percentiles(loop_call),
            "acknowledged_to_start": percentiles(loop_ack),
        },
    }))
}
