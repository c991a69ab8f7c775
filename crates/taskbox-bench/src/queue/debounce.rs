//! `taskbox bench queue --only debounce`: what a debounce key costs a job.
//! Three shapes of `--jobs` enqueues of the same no-op task, interleaved,
//! three times: plain jobs; debounced jobs each of a key of its own (none
//! replaced: the cost is the look for a pending job and the chain kept on
//! the job); and debounced jobs over 100 keys, each replacing the one
//! before (the cost of a replacement: a pending job cancelled, its event,
//! and the successor's insert). Each enqueue is timed apart from the
//! burn-down of what it left; a period of 1 ms keeps the jobs left due.

use super::bed::{bed, burn_down, insert_shaped};
use super::{durability, progress, runners, QueueBench};
use serde_json::json;
use std::time::Instant;
use taskbox::store::debounce::{Debounce, Debounced};

const KEYS: u64 = 100;

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Plain,
    OwnKeys,
    Replacing,
}

/// One round of a shape: the seconds the enqueues took and the seconds
/// the jobs they left took to run.
async fn burn(args: &QueueBench, jobs: u64, shape: Shape) -> anyhow::Result<(f64, f64)> {
    let b = bed(args, durability(args)).await?;
    let started = Instant::now();
    insert_shaped(&b, jobs, |i, j| {
        let key = match shape {
            Shape::Plain => return,
            Shape::OwnKeys => format!("key-{i}"),
            Shape::Replacing => format!("key-{}", i % KEYS),
        };
        j.debounce = Some(Box::new(Debounced::new(Debounce {
            key,
            period_ms: 1,
            max_wait_ms: Some(1),
        })));
    })
    .await?;
    let enqueued = started.elapsed().as_secs_f64();
    let left = match shape {
        Shape::Replacing => KEYS.min(jobs),
        Shape::Plain | Shape::OwnKeys => jobs,
    };
    if shape == Shape::Replacing {
        // The rest were replaced, each cancelled: the burn-down counts
        // completions only.
        let counts = b.store.job_counts().await?;
        let cancelled = counts
            .iter()
            .find(|(s, _)| *s == taskbox::job::JobStatus::Cancelled)
            .map_or(0, |(_, n)| *n);
        anyhow::ensure!(cancelled == jobs - left, "replaced {cancelled}: {counts:?}");
    }
    let ran = burn_down(b, runners(args), left).await?;
    Ok((enqueued, ran))
}

pub async fn debounce(args: &QueueBench, rounds: usize) -> anyhow::Result<serde_json::Value> {
    let n = args.jobs;
    let mut runs = Vec::new();
    for round in 1..=rounds {
        progress(&format!(
            "round {round} of {rounds}: plain, own keys, replacing"
        ));
        let (plain_in, plain_run) = burn(args, n, Shape::Plain).await?;
        let (own_in, own_run) = burn(args, n, Shape::OwnKeys).await?;
        let (rep_in, _) = burn(args, n, Shape::Replacing).await?;
        eprintln!(" done");
        let per_job = |s: f64| s / n as f64 * 1e6;
        runs.push(json!({
            "plain_enqueue_us": per_job(plain_in),
            "own_keys_enqueue_us": per_job(own_in),
            "replacing_enqueue_us": per_job(rep_in),
            "plain_jobs_per_second": n as f64 / (plain_in + plain_run),
            "own_keys_jobs_per_second": n as f64 / (own_in + own_run),
            "own_keys_vs_plain": (own_in + own_run) / (plain_in + plain_run),
        }));
    }
    Ok(json!({"jobs": n, "keys": KEYS, "rounds": runs}))
}
