//! The verdict, read from the database's own records after the run: every
//! acknowledged job ended, none completed twice, no fallback ran twice,
//! each job's status agrees with its attempts, each ended job of a task
//! with callbacks has its callback once, the outbox numbers each tenant's
//! events without a gap and holds each job's events in order, its end
//! once; the webhook endpoint got every completed job's end; and the
//! every-second schedule made one job for each of its slots.

use super::load::{AFTER, FALLBACK, PLAIN, SCHEDULE};
use anyhow::Context;
use serde::Serialize;
use sqlx::Row;
use std::collections::HashMap;
use taskbox::events::{decode, EventType};
use taskbox::store::{EventColumns, EventRow};

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
    /// Ended jobs of a task with callbacks whose callback job is missing.
    pub callback_missing: usize,
    /// Jobs with more than one callback job.
    pub callback_twice: usize,
    /// Callback jobs in all.
    pub callbacks: usize,
    /// Events in the outbox.
    pub events: u64,
    /// Places where a tenant's numbers skip or repeat.
    pub event_gaps: usize,
    /// Jobs whose events do not tell their life in order (no `job.queued`
    /// first, an end that is not the last, an ended job without its end
    /// or with two).
    pub events_out_of_order: usize,
    /// Completed jobs whose `job.completed` the webhook endpoint never got.
    pub webhook_missing: usize,
    /// Deliveries dead, or still pending at the audit.
    pub deliveries_unfinished: u64,
    /// The schedule's slots that made a job, from its first to its last.
    pub slots: usize,
    /// Slots that made more than one job.
    pub slots_twice: usize,
    /// Slots between the first and the last that made no job.
    pub slots_missing: usize,
    /// Slots the schedule counted as skipped (none should be: its
    /// catch-up window outlasts the outages).
    pub slots_skipped: u64,
    /// Whether the schedule's `fired` count disagrees with its jobs.
    pub slots_miscounted: bool,
    /// A few of the jobs counted as lost, duplicated or inconsistent.
    pub examples: Vec<String>,
}

impl Audit {
    /// Nothing lost, nothing twice, nothing contradicting itself.
    pub fn clean(&self) -> bool {
        self.lost == 0
            && self.duplicated == 0
            && self.fallback_twice == 0
            && self.inconsistent == 0
            && self.callback_missing == 0
            && self.callback_twice == 0
            && self.event_gaps == 0
            && self.events_out_of_order == 0
            && self.webhook_missing == 0
            && self.deliveries_unfinished == 0
            && self.slots > 0
            && self.slots_twice == 0
            && self.slots_missing == 0
            && self.slots_skipped == 0
            && !self.slots_miscounted
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

/// How many event rows are not yet put in order, and deliveries not yet
/// made or tried (for the wait before the audit).
pub async fn outbox_behind(pool: &sqlx::PgPool) -> anyhow::Result<u64> {
    let n: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM events WHERE gseq IS NULL) \
         + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') \
         + (SELECT count(*) FROM events e WHERE e.gseq > \
             coalesce((SELECT gseq FROM event_cursors WHERE name = 'webhooks'), 0))",
    )
    .fetch_one(pool)
    .await?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Reads the records and judges the acknowledged jobs `ids`; `delivered`
/// is how often the webhook endpoint got each job's end.
pub async fn audit(
    pool: &sqlx::PgPool,
    ids: &[String],
    delivered: &HashMap<String, u64>,
) -> anyhow::Result<Audit> {
    let mut a = Audit::default();
    let mut status: HashMap<String, String> = HashMap::new();
    let mut task_of: HashMap<String, String> = HashMap::new();
    let mut callback_of: HashMap<String, usize> = HashMap::new();
    // Where an unfinished job stands, for the examples: whose lease it is
    // under and for how long yet says which process keeps it.
    let mut standing: HashMap<String, String> = HashMap::new();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    for r in sqlx::query(
        "SELECT id, status, task, input, lease_owner, lease_expires_at, attempts, \
         fallback_depth, begun FROM jobs",
    )
    .fetch_all(pool)
    .await
    .context("cannot read the jobs")?
    {
        let id: String = r.try_get("id")?;
        let task: String = r.try_get("task")?;
        let owner: Option<String> = r.try_get("lease_owner")?;
        if let Some(owner) = owner {
            let expires: Option<i64> = r.try_get("lease_expires_at")?;
            let attempts: i32 = r.try_get("attempts")?;
            let depth: i32 = r.try_get("fallback_depth")?;
            let begun: bool = r.try_get("begun")?;
            standing.insert(
                id.clone(),
                format!(
                    " (lease of {owner}, ending in {} ms; {attempts} attempts, fallback depth {depth}, begun {begun})",
                    expires.map_or(0, |e| e - now_ms)
                ),
            );
        }
        if task == AFTER {
            let input: String = r.try_get("input")?;
            let v: serde_json::Value = serde_json::from_str(&input).unwrap_or_default();
            if let Some(of) = v["job"]["id"].as_str() {
                *callback_of.entry(of.to_owned()).or_default() += 1;
            }
            a.callbacks += 1;
        }
        status.insert(id.clone(), r.try_get("status")?);
        task_of.insert(id, task);
    }
    a.stored = status.len();
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    // A job's attempts: its rows of `attempts` and the one that ended it,
    // which its own row keeps (and which wins over a row of its number).
    for r in sqlx::query(
        "SELECT a.job_id, a.task, a.outcome, coalesce(a.error, '') LIKE '%runner_lost%' AS lost \
         FROM attempts a LEFT JOIN jobs j ON j.id = a.job_id \
         WHERE j.last_attempt IS NULL OR a.attempt <> j.last_attempt \
         UNION ALL \
         SELECT id, last_task, last_outcome, coalesce(last_error, '') LIKE '%runner_lost%' \
         FROM jobs WHERE last_attempt IS NOT NULL",
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
            Some(other) => bad(
                &format!(
                    "still {other}{}",
                    standing.get(id).map_or("", String::as_str)
                ),
                &mut a.lost,
                &mut a.examples,
            ),
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
        let ended = matches!(
            status.get(id).map(String::as_str),
            Some("completed" | "failed")
        );
        if task_of.get(id).map(String::as_str) == Some(PLAIN) {
            match (ended, callback_of.get(id).copied().unwrap_or(0)) {
                (true, 0) => bad(
                    "ended without its callback",
                    &mut a.callback_missing,
                    &mut a.examples,
                ),
                (_, n) if n > 1 => bad(
                    &format!("{n} callbacks"),
                    &mut a.callback_twice,
                    &mut a.examples,
                ),
                (false, 1) => bad(
                    "a callback before its end",
                    &mut a.callback_twice,
                    &mut a.examples,
                ),
                _ => {}
            }
        }
        if status.get(id).map(String::as_str) == Some("completed")
            && delivered.get(id).copied().unwrap_or(0) == 0
        {
            bad(
                "its end never reached the webhook",
                &mut a.webhook_missing,
                &mut a.examples,
            );
        }
    }
    audit_events(pool, &status, &mut a).await?;
    let unfinished: i64 =
        sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries WHERE status <> 'delivered'")
            .fetch_one(pool)
            .await?;
    a.deliveries_unfinished = u64::try_from(unfinished).unwrap_or(0);
    audit_schedule(pool, &mut a).await?;
    Ok(a)
}

/// The schedule: every slot from its first job's to its last one's made
/// exactly one job (its key `schedule:{name}:{slot}`), and its counts say so.
async fn audit_schedule(pool: &sqlx::PgPool, a: &mut Audit) -> anyhow::Result<()> {
    let prefix = format!("schedule:{SCHEDULE}:");
    let keys: Vec<(String, i64)> = sqlx::query_as(
        "SELECT unique_key, count(*) FROM jobs WHERE unique_key LIKE $1 || '%' GROUP BY unique_key",
    )
    .bind(&prefix)
    .fetch_all(pool)
    .await
    .context("cannot read the schedule's jobs")?;
    let mut slots: Vec<i64> = Vec::with_capacity(keys.len());
    for (key, n) in keys {
        let slot: i64 = key[prefix.len()..].parse().unwrap_or(-1);
        if n > 1 {
            a.slots_twice += 1;
            if a.examples.len() < 10 {
                a.examples.push(format!("slot {slot}: {n} jobs"));
            }
        }
        slots.push(slot);
    }
    slots.sort_unstable();
    a.slots = slots.len();
    if let (Some(first), Some(last)) = (slots.first(), slots.last()) {
        let span = usize::try_from((last - first) / 1_000 + 1).unwrap_or(0);
        a.slots_missing = span.saturating_sub(slots.len());
        if a.slots_missing > 0 && a.examples.len() < 10 {
            a.examples.push(format!(
                "{} of the schedule's {span} slots made no job",
                a.slots_missing
            ));
        }
    }
    let (fired, skipped): (i64, i64) =
        sqlx::query_as("SELECT fired, skipped FROM schedules WHERE name = $1")
            .bind(SCHEDULE)
            .fetch_one(pool)
            .await
            .context("cannot read the schedule")?;
    a.slots_skipped = u64::try_from(skipped).unwrap_or(0);
    a.slots_miscounted = usize::try_from(fired).ok() != Some(a.slots);
    Ok(())
}

/// The outbox: each tenant numbered 1, 2, 3, … and each job's events in
/// the order of its life, its end once.
async fn audit_events(
    pool: &sqlx::PgPool,
    status: &HashMap<String, String>,
    a: &mut Audit,
) -> anyhow::Result<()> {
    let rows: Vec<EventColumns> = sqlx::query_as(
        "SELECT gseq, tenant, seq, n::int8, at, body FROM events WHERE gseq IS NOT NULL ORDER BY gseq",
    )
    .fetch_all(pool)
    .await
    .context("cannot read the events")?;
    let rows: Vec<EventRow> = rows.into_iter().map(EventRow::from).collect();
    let mut next_seq: HashMap<String, u64> = HashMap::new();
    let mut lives: HashMap<String, Vec<EventType>> = HashMap::new();
    for r in &rows {
        let events = decode(std::slice::from_ref(r)).map_err(anyhow::Error::msg)?;
        for e in events {
            a.events += 1;
            let want = next_seq.entry(r.tenant.clone()).or_insert(1);
            if e.seq != *want {
                a.event_gaps += 1;
                if a.examples.len() < 10 {
                    a.examples.push(format!(
                        "tenant {}: event {} where {want} was due",
                        r.tenant, e.seq
                    ));
                }
            }
            *want = e.seq + 1;
            lives.entry(e.job).or_default().push(e.kind);
        }
    }
    for (job, st) in status {
        if matches!(st.as_str(), "completed" | "failed") && !lives.contains_key(job) {
            a.events_out_of_order += 1;
            if a.examples.len() < 10 {
                a.examples.push(format!("{job}: {st}, and no events"));
            }
        }
    }
    for (job, life) in &lives {
        let ends = life
            .iter()
            .filter(|k| matches!(k, EventType::Completed | EventType::Cancelled))
            .count();
        let st = status.get(job).map(String::as_str);
        let ok = life.first() == Some(&EventType::Queued)
            && match st {
                Some("completed") => ends == 1 && life.last() == Some(&EventType::Completed),
                Some("failed") => ends == 0 && life.last() == Some(&EventType::Failed),
                _ => true,
            };
        if !ok {
            a.events_out_of_order += 1;
            if a.examples.len() < 10 {
                a.examples.push(format!("{job}: events {life:?}"));
            }
        }
    }
    Ok(())
}
