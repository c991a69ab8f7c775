//! `taskbox bench queue --workers N`: the burn-down by N `taskbox worker`
//! processes on the bench's PostgreSQL database, as peers are measured:
//! timed from their spawn, and steady from 10 % to 90 % done.

use anyhow::{bail, Context};
use serde_json::json;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Worker processes; killed when dropped.
struct Workers(Vec<Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Burns down the `jobs` queued on `database_url` with `workers` processes
/// of `runners` runners each.
pub async fn burn_down(
    database_url: &str,
    jobs: u64,
    workers: usize,
    runners: usize,
    durability: &str,
    taskbox: &crate::server::Taskbox,
) -> anyhow::Result<serde_json::Value> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(database_url)
        .await
        .context("cannot connect to the bench database")?;
    let dir = tempfile::tempdir()?;
    let t0 = Instant::now();
    let mut procs = Workers(Vec::new());
    for n in 0..workers {
        procs.0.push(
            taskbox
                .command()?
                .args(["worker", "--no-migrate", "--durability", durability])
                .args(["--runners", &runners.to_string()])
                .args(["--database-url", database_url])
                .arg("--data-dir")
                .arg(dir.path().join(format!("worker-{n}")))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .context("cannot start a worker")?,
        );
    }
    // The counters say how many are left, at the cost of a few rows.
    let (mut at_10, mut at_90) = (None, None);
    let deadline = Duration::from_secs(600);
    loop {
        let left: i64 =
            sqlx::query_scalar("SELECT coalesce(sum(queued + running), 0)::int8 FROM tenant_jobs")
                .fetch_one(&pool)
                .await?;
        let done = jobs.saturating_sub(u64::try_from(left).unwrap_or(0));
        if at_10.is_none() && done * 10 >= jobs {
            at_10 = Some(t0.elapsed());
        }
        if at_90.is_none() && done * 10 >= jobs * 9 {
            at_90 = Some(t0.elapsed());
        }
        if left == 0 {
            break;
        }
        for c in &mut procs.0 {
            if let Some(status) = c.try_wait()? {
                bail!("a worker exited ({status}) before the jobs were done");
            }
        }
        if t0.elapsed() > deadline {
            bail!(
                "{left} jobs were still not done after {} s",
                deadline.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let elapsed = t0.elapsed();
    drop(procs);
    pool.close().await;
    let steady = match (at_10, at_90) {
        (Some(a), Some(b)) if b > a => Some(jobs as f64 * 0.8 / (b - a).as_secs_f64()),
        _ => None,
    };
    Ok(json!({
        "jobs": jobs,
        "workers": workers,
        "runners_per_worker": runners,
        "seconds": elapsed.as_secs_f64(),
        "jobs_per_second": jobs as f64 / elapsed.as_secs_f64(),
        "steady_10_90_jobs_per_second": steady,
    }))
}
