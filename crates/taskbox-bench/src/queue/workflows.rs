//! `taskbox bench queue --only workflows`: what running a job as a
//! workflow costs. The burn-down of `--jobs` one-step workflow jobs and of
//! `--jobs / 3` three-step ones, against a burn-down of plain jobs of the
//! same no-op task, interleaved, three times: each stage is an attempt
//! like a plain job's, plus the read of its rows and the write of the rows
//! it settles.

use super::bed::{bed, burn_down, insert_plain, Bed};
use super::{durability, progress, runners, QueueBench};
use anyhow::Context;
use serde_json::json;
use taskbox::api::auth::DEFAULT_TENANT;
use taskbox::enqueue::JobSpec;
use taskbox::registry::workflow::WorkflowSpec;
use taskbox::store::Write;

/// Inserts `n` jobs of workflow `name`, 500 to a transaction.
async fn insert_workflows(b: &Bed, name: &str, n: u64) -> anyhow::Result<()> {
    let mut left = n;
    let mut ids = ulid::Generator::new();
    while left > 0 {
        let chunk = left.min(500);
        let mut writes = Vec::with_capacity(2 * chunk as usize);
        for _ in 0..chunk {
            let spec = JobSpec {
                workflow: Some(name.to_owned()),
                input: Some(json!({})),
                ..JobSpec::default()
            };
            let id = ids.generate().map(|u| u.to_string()).unwrap_or_default();
            let (job, start) =
                taskbox::workflow::start::prepare(&b.registry, id, DEFAULT_TENANT, spec, None)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            writes.push(Write::JobInsert(job));
            writes.push(Write::WorkflowStart(start));
        }
        b.store.apply(writes).await?;
        left -= chunk;
    }
    Ok(())
}

/// One burn-down of `jobs` jobs (`steps` stages each; 0: plain jobs):
/// seconds taken.
async fn burn(args: &QueueBench, jobs: u64, steps: usize) -> anyhow::Result<f64> {
    let b = bed(args, durability(args)).await?;
    if steps == 0 {
        insert_plain(&b, jobs).await?;
    } else {
        let spec: WorkflowSpec = serde_json::from_value(json!({
            "steps": (0..steps).map(|i| json!({"name": format!("s{i}"), "task": "noop"})).collect::<Vec<_>>(),
        }))?;
        b.registry
            .define_workflow(DEFAULT_TENANT, "wf", spec)
            .await
            .context("cannot define the bench's workflow")?;
        insert_workflows(&b, "wf", jobs).await?;
    }
    burn_down(b, runners(args), jobs).await
}

pub async fn workflows(args: &QueueBench, rounds: usize) -> anyhow::Result<serde_json::Value> {
    let n = args.jobs;
    let mut runs = Vec::new();
    for round in 1..=rounds {
        progress(&format!(
            "round {round} of {rounds}: plain, one step, three steps"
        ));
        let plain = burn(args, n, 0).await?;
        let one = burn(args, n, 1).await?;
        let three = burn(args, n / 3, 3).await?;
        eprintln!(" done");
        runs.push(json!({
            "plain_jobs_per_second": n as f64 / plain,
            "one_step_jobs_per_second": n as f64 / one,
            "three_step_jobs_per_second": (n / 3) as f64 / three,
            "three_step_stages_per_second": (n / 3 * 3) as f64 / three,
            "one_step_vs_plain": one / plain,
            "three_step_stage_vs_plain": (three / (n / 3 * 3) as f64) / (plain / n as f64),
        }));
    }
    Ok(json!({"jobs": n, "rounds": runs}))
}
