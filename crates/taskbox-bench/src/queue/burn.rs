//! The burn-down of pre-inserted no-op jobs by runners in this process, and
//! the store's own share of it (claims and ends with no runner).

use super::bed::{bed, completed, insert_plain, run_until_completed};
use super::{durability, progress, runners, QueueBench};
use anyhow::bail;
use serde_json::json;
use std::time::Duration;
use std::time::Instant;

/// User + system CPU time of this process so far (Linux), in seconds.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

pub(super) async fn burn_down(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let b = bed(args, durability(args)).await?;
    progress(&format!("inserting {} jobs", args.jobs));
    insert_plain(&b, args.jobs).await?;
    eprintln!(" done");
    if args.workers > 0 {
        progress(&format!(
            "burning down with {} worker processes",
            args.workers
        ));
        let r = super::workers::burn_down(
            &b.db.url,
            args.jobs,
            args.workers as usize,
            runners(args),
            &format!("{:?}", durability(args)).to_lowercase(),
            &args.taskbox,
        )
        .await?;
        eprintln!(" done");
        b.store.close().await;
        b.db.drop().await;
        return Ok(r);
    }
    progress("burning down");
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let runner = run_until_completed(&b, runners(args), args.jobs).await;
    let elapsed = started.elapsed();
    let cpu = cpu_seconds().zip(cpu0).map(|(a, b)| a - b);
    eprintln!(" done");
    runner.stop(Duration::from_secs(5)).await;
    let counts = b.store.job_counts().await?;
    if counts != vec![(taskbox::job::JobStatus::Completed, args.jobs)] {
        bail!("not every job completed: {counts:?}");
    }
    b.store.close().await;
    b.db.drop().await;
    let rate = args.jobs as f64 / elapsed.as_secs_f64();
    Ok(json!({
        "jobs": args.jobs,
        "seconds": elapsed.as_secs_f64(),
        "jobs_per_second": rate,
        // CPU time of the whole process over the burn-down: how busy the cores were.
        "cpu_seconds": cpu,
        "cpu_us_per_job": cpu.map(|c| c / args.jobs as f64 * 1e6),
    }))
}

/// Store alone: claim and complete every job, no runner, no sandbox.
pub(super) async fn store_only(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let b = bed(args, durability(args)).await?;
    insert_plain(&b, args.jobs).await?;
    progress("store claims");
    let t0 = Instant::now();
    let mut done = 0u64;
    let (mut tc, mut tf) = (Duration::ZERO, Duration::ZERO);
    while done < args.jobs {
        let c0 = Instant::now();
        let claimed = b
            .store
            .job_claim(taskbox::store::ClaimParams {
                owner: "bench".into(),
                queues: None,
                limit: 512,
                lease_ms: 30_000,
                only_tenants: None,
                begin_each: u32::MAX,
                caps: Default::default(),
            })
            .await?
            .jobs;
        let fin = claimed.iter().map(completed).collect();
        let f0 = Instant::now();
        tc += f0 - c0;
        done += b.store.job_finalize(fin).await?.len() as u64;
        tf += f0.elapsed();
    }
    let s = t0.elapsed().as_secs_f64();
    b.store.close().await;
    b.db.drop().await;
    Ok(
        json!({"jobs": args.jobs, "seconds": s, "jobs_per_second": args.jobs as f64 / s,
              "claim_us_per_job": tc.as_secs_f64() * 1e6 / args.jobs as f64,
              "finalize_us_per_job": tf.as_secs_f64() * 1e6 / args.jobs as f64}),
    )
}
