//! `taskbox bench queue --only throttle`: what a throttle key costs a job.
//! The burn-down of `--jobs` plain jobs against `--jobs` throttled ones of
//! the same no-op task, interleaved, three times. The throttled jobs are
//! spread over 100 keys whose limit no key reaches (1,000 a second each),
//! so no job waits: what is measured is the bookkeeping, a key's row read
//! and written with each claim and each job's throttle read back.

use super::bed::{bed, insert_plain, job, run_until_completed, Bed};
use super::{durability, progress, runners, QueueBench};
use anyhow::bail;
use serde_json::json;
use std::time::{Duration, Instant};
use taskbox::store::throttle::Throttle;

const KEYS: u64 = 100;

/// Inserts `n` throttled jobs, spread over `KEYS` keys.
async fn insert_throttled(b: &Bed, n: u64) -> anyhow::Result<()> {
    let mut ids = ulid::Generator::new();
    let mut left = n;
    let mut i = 0u64;
    while left > 0 {
        let chunk = left.min(2000);
        let batch = (0..chunk)
            .map(|_| {
                i += 1;
                let mut j = job(
                    &b.task,
                    ids.generate().map(|u| u.to_string()).unwrap_or_default(),
                );
                j.throttle = Some(Throttle {
                    key: format!("key-{}", i % KEYS),
                    limit: 1000,
                    period_ms: 1000,
                });
                j
            })
            .collect();
        for r in b.store.job_insert(batch).await? {
            r?;
        }
        left -= chunk;
    }
    Ok(())
}

/// One burn-down of `jobs` jobs, throttled or plain: seconds taken.
async fn burn(args: &QueueBench, jobs: u64, throttled: bool) -> anyhow::Result<f64> {
    let b = bed(args, durability(args)).await?;
    if throttled {
        insert_throttled(&b, jobs).await?;
    } else {
        insert_plain(&b, jobs).await?;
    }
    let started = Instant::now();
    let runner = run_until_completed(&b, runners(args), jobs).await;
    let seconds = started.elapsed().as_secs_f64();
    runner.stop(Duration::from_secs(5)).await;
    let counts = b.store.job_counts().await?;
    if counts != vec![(taskbox::job::JobStatus::Completed, jobs)] {
        bail!("not every job completed: {counts:?}");
    }
    b.store.close().await;
    b.db.drop().await;
    Ok(seconds)
}

pub async fn throttle(args: &QueueBench, rounds: usize) -> anyhow::Result<serde_json::Value> {
    let n = args.jobs;
    let mut runs = Vec::new();
    for round in 1..=rounds {
        progress(&format!("round {round} of {rounds}: plain, throttled"));
        let plain = burn(args, n, false).await?;
        let throttled = burn(args, n, true).await?;
        eprintln!(" done");
        runs.push(json!({
            "plain_jobs_per_second": n as f64 / plain,
            "throttled_jobs_per_second": n as f64 / throttled,
            "throttled_vs_plain": throttled / plain,
            "us_per_job_added": (throttled - plain) / n as f64 * 1e6,
        }));
    }
    Ok(json!({"jobs": n, "keys": KEYS, "rounds": runs}))
}
