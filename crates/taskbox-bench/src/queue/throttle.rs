//! `taskbox bench queue --only throttle`: what a throttle key costs a job.
//! The burn-down of `--jobs` plain jobs against `--jobs` throttled ones of
//! the same no-op task, interleaved, three times. The throttled jobs are
//! spread over 100 keys whose limit no key reaches (1,000 a second each),
//! so no job waits: what is measured is the bookkeeping, a key's row read
//! and written with each claim and each job's throttle read back.

use super::bed::{bed, burn_down, insert_shaped};
use super::{durability, progress, runners, QueueBench};
use serde_json::json;
use taskbox::store::throttle::Throttle;

const KEYS: u64 = 100;

/// One burn-down of `jobs` jobs, throttled or plain: seconds taken.
async fn burn(args: &QueueBench, jobs: u64, throttled: bool) -> anyhow::Result<f64> {
    let b = bed(args, durability(args)).await?;
    insert_shaped(&b, jobs, |i, j| {
        if throttled {
            j.throttle = Some(Throttle {
                key: format!("key-{}", i % KEYS),
                limit: 1000,
                period_ms: 1000,
            });
        }
    })
    .await?;
    burn_down(b, runners(args), jobs).await
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
