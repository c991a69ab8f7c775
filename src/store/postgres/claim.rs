//! Claims on PostgreSQL, as the one claim (`store::claim`) asks its
//! driver: each tenant's due jobs taken with `FOR UPDATE SKIP LOCKED` in
//! its own order, so that many claimers on one database never wait for
//! each other's rows and never take a job twice; a concurrency or
//! throttle key held by an advisory lock while a claim decides its jobs.

use super::exec::PgExec;
use super::pg;
use super::rows::claimed_row;
use crate::job::{JobStatus, Transition};
use crate::store::claim::{self as shared, ClaimDriver, Held, Lease};
use crate::store::ending_sql::PG_STATUS;
use crate::store::fair_keys::{self, Group, KEY};
use crate::store::job_sql::{self, CLAIM_COLUMNS};
use crate::store::records::*;
use crate::store::tally::Tally;
use crate::store::throttle::{self, Decision, KeyState, Throttle};
use crate::store::{Millis, StoreResult};
use async_trait::async_trait;
use sqlx::{PgConnection, Postgres, Row, Transaction};
use std::collections::{HashMap, HashSet};

pub(super) use crate::store::claim::{fairness, CLAIM_ROUNDS};
/// Most tenants one claim looks at, as its statements bind it.
pub(super) const MAX_TENANTS_PER_CLAIM: i64 = shared::MAX_TENANTS_PER_CLAIM as i64;

/// What else a due, unparked job (row `t`) must be for a claim at `now`
/// (a parameter): not expired (the queue keeper fails it; till then this
/// keeps it), and not of a paused queue (a job queued by a transaction
/// concurrent with its queue's pause may miss the pause's sweep and stay
/// unparked: this keeps it till the resume).
pub(super) fn claimable(t: &str, now: &str) -> String {
    format!(
        "({t}.expire_after_ms IS NULL OR {t}.run_at + {t}.expire_after_ms > {now}) \
         AND NOT EXISTS (SELECT 1 FROM paused_queues pq \
           WHERE pq.tenant = {t}.tenant AND pq.queue = {t}.queue)"
    )
}

#[async_trait]
impl<'t> ClaimDriver for PgExec<&mut Transaction<'t, Postgres>> {
    type Row = (String, Option<i64>);

    /// A generic plan of the claim's query (PostgreSQL's choice after five
    /// runs of a prepared statement) sorts every due job of the tenant and
    /// stalled claims for 150-230 ms; planned with its values, it reads the
    /// claim index in order. Only in a claim: planning every statement
    /// costs the enqueues ~15 %.
    async fn ready(&mut self, _now: Millis) -> StoreResult<()> {
        sqlx::query("SET LOCAL plan_cache_mode = force_custom_plan")
            .execute(&mut **self.0)
            .await
            .map_err(pg)?;
        Ok(())
    }

    /// It always says it may have passed some over: its keyed jobs are
    /// left out by its query, unseen.
    async fn rows(
        &mut self,
        now: Millis,
        group: (&str, Group<'_>),
        queues: Option<&HashSet<String>>,
        n: usize,
        held: &mut Held,
    ) -> StoreResult<(Vec<Self::Row>, bool)> {
        let queues: Option<Vec<&str>> = queues.map(|q| q.iter().map(String::as_str).collect());
        let rows = tenant_rows(self.0, now, group, queues.as_deref(), n, held).await?;
        Ok((rows, true))
    }

    async fn take(
        &mut self,
        now: Millis,
        picks: &[(Self::Row, bool)],
        lease: &Lease<'_>,
        tally: &mut Tally,
    ) -> StoreResult<Vec<ClaimedJob>> {
        take(self.0, now, picks, lease, tally).await
    }
}

/// Most times one tenant's rows are read again in a claim because the
/// ones read were parked by their throttle.
const PARK_ROUNDS: usize = 8;
/// How many rows past those it still wants a read after a park takes.
const PARK_READ_MORE: usize = 64;

/// A due job as a claim reads it: id, concurrency key and limit, throttle
/// and the throttle slot it waited on.
type DueRow = (
    String,
    Option<String>,
    Option<i32>,
    Option<String>,
    Option<i32>,
);

/// The ids of up to `n` of a tenant's due jobs that can run now, in its
/// order, locked for this claim (rows other claimers hold are skipped).
/// A job of a concurrency key whose slots (its `concurrency_limit`, 1 by
/// default) are all taken, by running jobs or by this claim, is passed
/// over; a key is held for the transaction by an advisory lock, and its
/// running slots read once held, so two claimers never take one slot. A
/// throttled job whose key must wait is parked till its turn (a throttle
/// key is held the same way), and the tenant's next rows are read in its
/// place, so a throttled key at the head of the line holds nothing up.
async fn tenant_rows(
    conn: &mut PgConnection,
    now: Millis,
    (tenant, group): (&str, Group<'_>),
    queues: Option<&[&str]>,
    n: usize,
    held: &mut Held,
) -> StoreResult<Vec<(String, Option<i64>)>> {
    let mut out = Vec::with_capacity(n);
    let mut more = 0;
    for _ in 0..PARK_ROUNDS {
        // Past the first read, some more: a parked key's jobs are many.
        let want = n - out.len() + more;
        let rows = due_rows(conn, now, (tenant, group), queues, want).await?;
        let read = rows.len();
        let parked = decide(conn, now, tenant, rows, n, held, &mut out).await?;
        if parked == 0 || read < want || out.len() >= n {
            break;
        }
        more = PARK_READ_MORE;
    }
    Ok(out)
}

/// Up to `n` of a tenant's due jobs of `group`, locked for this claim. A
/// key's are read from `jobs_fair`; the unkeyed ones are those without a
/// key among the first `$5` of the tenant's line.
async fn due_rows(
    conn: &mut PgConnection,
    now: Millis,
    (tenant, group): (&str, Group<'_>),
    queues: Option<&[&str]>,
    n: usize,
) -> StoreResult<Vec<DueRow>> {
    let of_group = match group {
        Group::All => String::new(),
        Group::Key(_) => format!("AND {KEY} IS NOT NULL AND {KEY} = $5"),
        Group::Unkeyed => "AND fairness_key IS NULL AND concurrency_key IS NULL \
            AND id IN (SELECT id FROM jobs WHERE tenant = $1 AND status = 'queued' \
              AND NOT paused ORDER BY urgent DESC, priority, run_at, id LIMIT $5)"
            .to_owned(),
    };
    let sql = format!(
        "SELECT id, concurrency_key, concurrency_limit, throttle, throttle_slot FROM jobs j \
         WHERE tenant = $1 AND status = 'queued' AND NOT paused AND run_at <= $2 \
           AND ($3::text[] IS NULL OR queue = ANY($3)) AND {} {of_group} \
           AND (concurrency_key IS NULL OR ( \
                SELECT count(*) FROM jobs r WHERE r.tenant = j.tenant \
                AND r.concurrency_key = j.concurrency_key AND r.status = 'running') \
                < coalesce(j.concurrency_limit, 1)) \
         ORDER BY urgent DESC, priority, run_at, id LIMIT $4 FOR UPDATE SKIP LOCKED",
        claimable("j", "$2")
    );
    let q = sqlx::query_as(&sql)
        .bind(tenant)
        .bind(now)
        .bind(queues)
        .bind(i64::try_from(n).unwrap_or(i64::MAX));
    let q = match group {
        Group::All => q,
        Group::Key(key) => q.bind(key),
        Group::Unkeyed => q.bind(i64::try_from(fair_keys::head_of_line(n)).unwrap_or(i64::MAX)),
    };
    q.fetch_all(&mut *conn).await.map_err(pg)
}

/// Which of `rows` start (added to `out` with their concurrency slots,
/// up to `n` in all), and which are parked by their throttle (written
/// here); answers how many were parked.
async fn decide(
    conn: &mut PgConnection,
    now: Millis,
    tenant: &str,
    rows: Vec<DueRow>,
    n: usize,
    held: &mut Held,
    out: &mut Vec<(String, Option<i64>)>,
) -> StoreResult<usize> {
    let mut waits: Vec<(String, Millis, i32)> = Vec::new();
    for (id, key, limit, throttle, throttle_slot) in rows {
        if out.len() >= n {
            break;
        }
        let mut slot = None;
        if let Some(k) = key {
            let pair = (tenant.to_owned(), k);
            // The slots taken: read once the key is held, then this
            // claim's own added as it takes them.
            let taken = match held.keys.get_mut(&pair) {
                Some(t) => t,
                None => match hold_key(conn, &pair.0, &pair.1).await? {
                    Some(running) => held.keys.entry(pair.clone()).or_insert(running),
                    None => continue,
                },
            };
            match crate::store::records::free_slot(taken, limit.map_or(1, i64::from)) {
                Some(s) => slot = Some((s, pair)),
                None => continue,
            }
        }
        if let Some(t) = throttle.as_deref().and_then(Throttle::from_text) {
            let state = match held.throttled.get(tenant, &t.key) {
                Some(s) => s,
                None => match hold_throttle(conn, tenant, &t.key).await? {
                    Some(s) => held.throttled.insert(tenant, &t.key, s),
                    // Another claimer decides the key's jobs now.
                    None => continue,
                },
            };
            let waited_on = throttle_slot.and_then(|s| u32::try_from(s).ok());
            if let Decision::Wait { until, slot } = state.decide(&t, now, waited_on) {
                waits.push((id, until, i32::try_from(slot).unwrap_or(0)));
                continue;
            }
        }
        let slot = match slot {
            Some((s, pair)) => {
                if let Some(taken) = held.keys.get_mut(&pair) {
                    taken.push(s);
                }
                Some(s)
            }
            None => None,
        };
        out.push((id, slot));
    }
    if !waits.is_empty() {
        sqlx::query(
            "UPDATE jobs SET run_at = w.until, throttle_slot = w.slot \
             FROM unnest($1::text[], $2::int8[], $3::int4[]) AS w(id, until, slot) \
             WHERE jobs.id = w.id",
        )
        .bind(waits.iter().map(|w| w.0.as_str()).collect::<Vec<_>>())
        .bind(waits.iter().map(|w| w.1).collect::<Vec<_>>())
        .bind(waits.iter().map(|w| w.2).collect::<Vec<_>>())
        .execute(&mut *conn)
        .await
        .map_err(pg)?;
    }
    Ok(waits.len())
}

/// Takes a throttle key for this transaction if no other claimer holds
/// it, and answers its state (read after the lock, so after the commit of
/// any claimer that held it before); `None` when another claimer holds it.
async fn hold_throttle(
    conn: &mut PgConnection,
    tenant: &str,
    key: &str,
) -> StoreResult<Option<KeyState>> {
    if !try_hold(conn, &format!("throttle/{tenant}"), key).await? {
        return Ok(None);
    }
    let text: Option<String> = sqlx::query_scalar(throttle::READ_KEY)
        .bind(tenant)
        .bind(key)
        .fetch_optional(&mut *conn)
        .await
        .map_err(pg)?;
    Ok(Some(
        text.map(|t| KeyState::from_text(&t)).unwrap_or_default(),
    ))
}

/// Takes the advisory lock of `space`/`key` for this transaction unless
/// another transaction holds it: a concurrency key's space is its tenant,
/// a throttle key's `throttle/<tenant>`.
async fn try_hold(conn: &mut PgConnection, space: &str, key: &str) -> StoreResult<bool> {
    sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))")
        .bind(space)
        .bind(key)
        .fetch_one(&mut *conn)
        .await
        .map_err(pg)
}

/// Takes a concurrency key for this transaction if no other claimer holds
/// it, and answers the slots its running jobs hold (read after the lock,
/// so after the commit of any claimer that held it before); `None` when
/// another claimer holds it.
async fn hold_key(
    conn: &mut PgConnection,
    tenant: &str,
    key: &str,
) -> StoreResult<Option<Vec<i64>>> {
    if !try_hold(conn, tenant, key).await? {
        return Ok(None);
    }
    let running: Vec<Option<i32>> = sqlx::query_scalar(job_sql::KEY_SLOTS)
        .bind(tenant)
        .bind(key)
        .fetch_all(&mut *conn)
        .await
        .map_err(pg)?;
    Ok(Some(
        running
            .into_iter()
            .map(|s| s.map_or(0, i64::from))
            .collect(),
    ))
}

/// Moves the given queued jobs to running under one lease token, each in
/// its concurrency key's slot, in the order given.
async fn take(
    conn: &mut PgConnection,
    now: Millis,
    picked: &[((String, Option<i64>), bool)],
    lease: &Lease<'_>,
    tally: &mut Tally,
) -> StoreResult<Vec<ClaimedJob>> {
    let running = JobStatus::Queued
        .after(Transition::Claim)
        .unwrap_or(JobStatus::Running);
    let ids: Vec<&str> = picked.iter().map(|p| p.0 .0.as_str()).collect();
    let rows = sqlx::query(&format!(
        "UPDATE jobs SET status = $1, attempts = attempts + 1, lease_owner = $2, \
         lease_token = $3, lease_expires_at = $4, attempt_started_at = $5, \
         started_at = COALESCE(started_at, $5), progress = NULL, urgent = FALSE, \
         concurrency_slot = s.slot, begun = s.pick_begun, throttle_slot = NULL \
         FROM unnest($6::text[], $7::int4[], $8::bool[]) AS s(pick_id, slot, pick_begun) \
         WHERE jobs.id = s.pick_id AND {PG_STATUS} = 'queued' RETURNING {CLAIM_COLUMNS}"
    ))
    .bind(running.as_str())
    .bind(lease.owner)
    .bind(lease.token)
    .bind(lease.expires)
    .bind(now)
    .bind(&ids)
    .bind(
        picked
            .iter()
            .map(|p| p.0 .1.and_then(|s| i32::try_from(s).ok()))
            .collect::<Vec<Option<i32>>>(),
    )
    .bind(picked.iter().map(|p| p.1).collect::<Vec<bool>>())
    .fetch_all(&mut *conn)
    .await
    .map_err(pg)?;
    let mut by_id = HashMap::with_capacity(rows.len());
    for r in &rows {
        let job = claimed_row(r).map_err(pg)?;
        let task: String = r.try_get("task").map_err(pg)?;
        tally.outbox.push(
            crate::events::EventType::Started,
            crate::store::outbox::About {
                id: &job.id,
                tenant: &job.tenant,
                task: &task,
                queue: &job.queue,
                attempt: job.attempts,
            },
            None,
        );
        by_id.insert(job.id.clone(), job);
    }
    let mut claimed = Vec::with_capacity(by_id.len());
    for id in ids {
        if let Some(job) = by_id.remove(id) {
            tally.moved(&job.tenant, Some(JobStatus::Queued), Some(running), 1);
            claimed.push(job);
        }
    }
    Ok(claimed)
}
