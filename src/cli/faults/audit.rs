//! The verdict, read from the database's own records after the run: every
//! acknowledged job ended, none completed twice, no fallback ran twice, and
//! each job's status agrees with its attempts.

use super::load::FALLBACK;
use anyhow::Context;
use serde::Serialize;
use sqlx::Row;
use std::collections::HashMap;

/// What the records say.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Audit {
    /// Jobs in the database.
    pub stored: usize,
    /// Acknowledged jobs by their status now.
    pub completed: usize,
    pub failed: usize,
    pub cancelled: usize,
    /// Acknowledged jobs not in the database, or not ended.
    pub lost: usize,
    /// Jobs with more than one completed attempt.
    pub duplicated: usize,
    /// Jobs whose fallback ran more than once.
    pub fallback_twice: usize,
    /// Jobs whose status disagrees with their attempts (completed without
    /// exactly one completed attempt, or failed with one).
    pub inconsistent: usize,
    /// Attempts decided as lost by a rescue (`runner_lost`).
    pub rescued: u64,
    /// Attempts written, in all.
    pub attempts: u64,
    /// A few of the jobs counted as lost, duplicated or inconsistent.
    pub examples: Vec<String>,
}

impl Audit {
    /// Nothing lost, nothing twice, nothing contradicting itself.
    pub fn clean(&self) -> bool {
        self.lost == 0 && self.duplicated == 0 && self.fallback_twice == 0 && self.inconsistent == 0
    }
}

#[derive(Default)]
struct Tally {
    attempts: u64,
    completed: u64,
    fallback: u64,
}

/// How many acknowledged jobs are not yet ended (for the progress line).
pub async fn unfinished(pool: &sqlx::PgPool) -> anyhow::Result<u64> {
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM jobs WHERE status NOT IN ('completed', 'failed', 'cancelled')",
    )
    .fetch_one(pool)
    .await?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Reads the records and judges the acknowledged jobs `ids`.
pub async fn audit(pool: &sqlx::PgPool, ids: &[String]) -> anyhow::Result<Audit> {
    let mut a = Audit::default();
    let mut status: HashMap<String, String> = HashMap::new();
    for r in sqlx::query("SELECT id, status FROM jobs")
        .fetch_all(pool)
        .await
        .context("cannot read the jobs")?
    {
        status.insert(r.try_get("id")?, r.try_get("status")?);
    }
    a.stored = status.len();
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    for r in sqlx::query(
        "SELECT job_id, task, outcome, coalesce(error, '') LIKE '%runner_lost%' AS lost FROM attempts",
    )
    .fetch_all(pool)
    .await
    .context("cannot read the attempts")?
    {
        let job: String = r.try_get("job_id")?;
        let task: String = r.try_get("task")?;
        let outcome: String = r.try_get("outcome")?;
        let lost: bool = r.try_get("lost")?;
        let t = tallies.entry(job).or_default();
        t.attempts += 1;
        a.attempts += 1;
        t.completed += u64::from(outcome == "completed");
        t.fallback += u64::from(task == FALLBACK);
        a.rescued += u64::from(lost);
    }
    let none = Tally::default();
    for id in ids {
        let t = tallies.get(id).unwrap_or(&none);
        let bad = |what: &str, count: &mut usize, examples: &mut Vec<String>| {
            *count += 1;
            if examples.len() < 10 {
                examples.push(format!("{id}: {what}"));
            }
        };
        match status.get(id).map(String::as_str) {
            None => bad("acknowledged, not stored", &mut a.lost, &mut a.examples),
            Some("completed") => {
                a.completed += 1;
                if t.completed != 1 {
                    bad(
                        &format!("completed, with {} completed attempts", t.completed),
                        &mut a.inconsistent,
                        &mut a.examples,
                    );
                }
            }
            Some("failed") => {
                a.failed += 1;
                if t.completed != 0 {
                    bad(
                        "failed, with a completed attempt",
                        &mut a.inconsistent,
                        &mut a.examples,
                    );
                }
            }
            Some("cancelled") => a.cancelled += 1,
            Some(other) => bad(&format!("still {other}"), &mut a.lost, &mut a.examples),
        }
        if t.completed > 1 {
            bad(
                &format!("{} completed attempts", t.completed),
                &mut a.duplicated,
                &mut a.examples,
            );
        }
        if t.fallback > 1 {
            bad(
                &format!("its fallback ran {} times", t.fallback),
                &mut a.fallback_twice,
                &mut a.examples,
            );
        }
    }
    Ok(a)
}
