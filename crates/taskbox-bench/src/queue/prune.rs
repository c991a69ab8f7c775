//! `taskbox bench queue --only prune`: what pruning a backlog of ended
//! jobs costs the queue. Fills the store with finished jobs (each with its
//! attempt), then times sequential enqueue→start through the enqueue path
//! with a runner, first alone, then while the pruner deletes every one of
//! them, as it would after a week's retention runs out at once.

use super::bed::{bed, completed, insert_plain};
use super::{durability, progress, runners, QueueBench};
use crate::common::percentiles;
use anyhow::Context;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use taskbox::api::auth::DEFAULT_TENANT;
use taskbox::enqueue::{Enqueuer, JobSpec};
use taskbox::maintenance::pruner::{Pruner, Retention, Round, STEPS_PER_ROUND};
use taskbox::runner::{Runner, RunnerConfig, RunnerEvent};
use taskbox::store::ClaimParams;
use tokio::sync::{oneshot, Notify};

/// On PostgreSQL, vacuums what the fill left: jobs that ended a week ago
/// were vacuumed long since, and the claim's partial index still holding
/// the fill's million dead entries (until autovacuum gets to them) would
/// slow every claim, pruning or not.
async fn settle(url: &str) -> anyhow::Result<()> {
    use sqlx::Connection;
    if !url.starts_with("postgres") {
        return Ok(());
    }
    progress("vacuuming after the fill");
    let mut conn = sqlx::PgConnection::connect(url).await?;
    sqlx::query("VACUUM (ANALYZE) jobs, attempts")
        .execute(&mut conn)
        .await?;
    eprintln!(" done");
    Ok(())
}

pub async fn prune(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let b = bed(args, durability(args)).await?;
    let n = args.prune_jobs;
    progress(&format!("inserting and finishing {n} jobs"));
    insert_plain(&b, n).await?;
    let mut done = 0;
    while done < n {
        let claimed = b
            .store
            .job_claim(ClaimParams {
                owner: "bench".into(),
                queues: None,
                limit: 1000,
                lease_ms: 60_000,
                only_tenants: None,
                begin_each: u32::MAX,
                caps: Default::default(),
            })
            .await?
            .jobs;
        anyhow::ensure!(!claimed.is_empty(), "the claim found no job");
        let fin = claimed.iter().map(completed).collect();
        done += b.store.job_finalize(fin).await?.len() as u64;
    }
    eprintln!(" done");
    settle(&b.db.url).await?;
    let next: Arc<Mutex<Option<oneshot::Sender<Instant>>>> = Arc::default();
    let n2 = next.clone();
    let hook = Arc::new(move |e: RunnerEvent| {
        if let RunnerEvent::Started { at, .. } = e {
            if let Some(tx) = n2.lock().unwrap_or_else(|p| p.into_inner()).take() {
                let _ = tx.send(at);
            }
        }
    });
    let runner = Arc::new(Runner::start(
        b.registry.clone(),
        RunnerConfig {
            on_event: Some(hook),
            ..RunnerConfig::new(runners(args))
        },
        Arc::new(Notify::new()),
    ));
    let enqueuer = Enqueuer::new(b.registry.clone(), runner.clone());
    // One enqueue→start, through the enqueue path.
    let sample = || async {
        let (tx, rx) = oneshot::channel();
        *next.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
        let t0 = Instant::now();
        let spec = JobSpec::of(b.task.name.clone(), json!({}));
        enqueuer.enqueue(DEFAULT_TENANT, spec, None).await?;
        let at = tokio::time::timeout(Duration::from_secs(10), rx)
            .await
            .context("a job did not start within 10 s")??;
        anyhow::Ok(at.saturating_duration_since(t0))
    };
    progress(&format!(
        "{} enqueue→start samples alone",
        args.samples + 100
    ));
    let mut alone = Vec::new();
    for i in 0..args.samples + 100 {
        let d = sample().await?;
        if i >= 100 {
            alone.push(d);
        }
    }
    eprintln!(" done");
    progress(&format!("pruning {n} jobs while sampling"));
    let pruner = Arc::new(Pruner::new(
        b.store.clone(),
        Retention {
            completed: Some(Duration::from_millis(1)),
            failed: Some(Duration::from_millis(1)),
        },
    ));
    // Every job finished at least a millisecond ago.
    tokio::time::sleep(Duration::from_millis(2)).await;
    let over = Arc::new(AtomicBool::new(false));
    let (p, o) = (pruner.clone(), over.clone());
    let t0 = Instant::now();
    let pruning = tokio::spawn(async move {
        let r = until_pass_over(&p).await;
        o.store(true, Ordering::Release);
        r.map(|r| (r, t0.elapsed()))
    });
    let mut during = Vec::new();
    while !over.load(Ordering::Acquire) {
        during.push(sample().await?);
    }
    let (round, took) = pruning.await.context("the pruner panicked")??;
    eprintln!(" done");
    runner.stop(Duration::from_secs(5)).await;
    let left: u64 = b
        .store
        .job_counts()
        .await?
        .into_iter()
        .filter(|(s, _)| s.is_terminal())
        .map(|(_, c)| c)
        .sum();
    b.store.close().await;
    b.db.drop().await;
    anyhow::ensure!(
        round.jobs >= n,
        "the pass pruned {} of the {n} jobs",
        round.jobs
    );
    Ok(json!({
        "jobs": n,
        "pruned": round.jobs,
        "attempts_pruned": round.attempts,
        "left_ended": left,
        "seconds": took.as_secs_f64(),
        "jobs_per_second": round.jobs as f64 / took.as_secs_f64(),
        "alone": percentiles(alone),
        "during": {"samples": during.len(), "enqueue_call_to_start": percentiles(during)},
    }))
}

/// Runs the pruner's rounds, as its service does, until a pass ends; what
/// they did, with the components collected at its end.
async fn until_pass_over(p: &Pruner) -> taskbox::store::StoreResult<Round> {
    let mut total = Round::default();
    loop {
        let r = p.round(STEPS_PER_ROUND).await?;
        total.jobs += r.jobs;
        total.attempts += r.attempts;
        if r.pass_over {
            total.pass_over = true;
            total.components = p.collect().await?;
            return Ok(total);
        }
    }
}
