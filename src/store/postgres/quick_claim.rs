//! The common claim on PostgreSQL in two statements and no transaction:
//! one read of the clock and of the contending tenants (settings, running
//! jobs, fuel in the window, and whether any has a queued job with a
//! concurrency key, a throttle or a fairness key), then for each round of
//! picks one statement that takes every picked tenant's jobs with
//! `FOR UPDATE SKIP LOCKED`, moves them to running and counts them,
//! committed by itself. The general claim (`claim.rs`) takes nine round
//! trips in a transaction; it is still the one taken when a contender has
//! keyed or throttled jobs (shared among their fairness keys; a key is held
//! by an advisory lock between its statements), or when tenants are many
//! enough that claims go round them in turn.
//!
//! Nothing is lost by leaving the transaction: under READ COMMITTED each of
//! the general claim's statements read its own snapshot anyway, and the
//! reads lock nothing. The take is one statement, so its rows and its
//! counts commit together. It commits on the claims' own connections
//! (`PgStore::claims`), without waiting for its WAL flush, as SQLite's
//! claims commit without a sync: a claim lost in a crash only runs its job
//! again (the runner's end is refused by the fence), and the end's own
//! synchronous commit flushes the claim's record before it.

use super::claim::{claimable, fairness, CLAIM_ROUNDS, MAX_TENANTS_PER_CLAIM};
use super::db::{Db, DB_CLOCK};
use super::pg;
use super::rows::claimed_row;
use super::tally::SHARD;
use crate::events::EventType;
use crate::job::{JobStatus, Transition};
use crate::quota::WINDOW_MS;
use crate::store::ending_sql::PG_STATUS;
use crate::store::fair::{given, Fairness};
use crate::store::job_sql::CLAIM_COLUMNS;
use crate::store::outbox;
use crate::store::records::*;
use crate::store::tenants::policy_from;
use crate::store::transition::random_token;
use crate::store::{Millis, StoreResult};
use sqlx::{PgPool, Row};
use std::collections::HashMap;
use std::sync::Mutex;

/// now, tenant, weight, quotas, running, fuel used, has keyed or
/// throttled jobs,
/// tenants with queued jobs in all.
type ViewRow = (
    Millis,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<i64>,
    Option<bool>,
    i64,
);

/// Claims as `claim::claim` does, or answers `None` (having written
/// nothing) when the general claim must do it. It says it passed jobs
/// over when a tenant was at its quotas or did not run out of due jobs.
pub async fn claim(
    db: &Db,
    claims: &PgPool,
    p: &ClaimParams,
    fair: &Mutex<Fairness>,
) -> StoreResult<Option<Claim>> {
    if p.limit == 0 {
        return Ok(Some(Claim {
            jobs: Vec::new(),
            passed_over: true,
        }));
    }
    if fairness(fair).cursor.is_some() {
        return Ok(None);
    }
    let test_now = db.clock.as_ref().map(|c| c.now());
    let rows: Vec<ViewRow> = sqlx::query_as(&format!(
        "WITH RECURSIVE t(name) AS ( \
           SELECT (SELECT MIN(tenant) FROM jobs WHERE status = 'queued' AND NOT paused) \
           UNION ALL \
           SELECT (SELECT MIN(tenant) FROM jobs WHERE status = 'queued' AND NOT paused \
                   AND tenant > t.name) \
           FROM t WHERE t.name IS NOT NULL), \
         names AS (SELECT name FROM t WHERE name IS NOT NULL LIMIT $1), \
         clock AS (SELECT coalesce($2::int8, {DB_CLOCK}) AS now) \
         SELECT clock.now, n.name, s.weight::int8, s.quotas, \
           (SELECT sum(running)::int8 FROM tenant_jobs WHERE tenant = n.name), \
           (SELECT sum(fuel)::int8 FROM tenant_usage WHERE tenant = n.name \
              AND window_start = clock.now - mod(clock.now, {WINDOW_MS})), \
           EXISTS (SELECT 1 FROM jobs k WHERE k.tenant = n.name \
              AND k.concurrency_key IS NOT NULL AND k.status IN ('queued', 'waiting')) \
           OR EXISTS (SELECT 1 FROM jobs k WHERE k.tenant = n.name \
              AND k.throttle IS NOT NULL AND k.status = 'queued') \
           OR (SELECT min(coalesce(k.fairness_key, k.concurrency_key)) FROM jobs k \
              WHERE k.tenant = n.name AND k.status = 'queued' AND NOT k.paused \
              AND coalesce(k.fairness_key, k.concurrency_key) IS NOT NULL) IS NOT NULL, \
           (SELECT count(*) FROM names)::int8 \
         FROM clock LEFT JOIN names n ON ($3::text[] IS NULL OR n.name = ANY($3)) \
         LEFT JOIN tenants s ON s.name = n.name COLLATE \"default\" \
         ORDER BY n.name"
    ))
    .bind(MAX_TENANTS_PER_CLAIM)
    .bind(test_now)
    .bind(p.only_tenants.as_deref())
    // On the claims' connections, planned once (`TAKE_PLAN`): left to
    // choose, a connection that planned it with its values on its first
    // runs kept doing so, ~0.7 ms of planning for ~0.1 ms of work, one
    // connection in five in a run, and as many as four in five in some
    // (an enqueue's claim at p50 2.4 ms against 1.8; `bench queue --only
    // latency` on PostgreSQL, 2026-12-07). `jobs.tenant` is collated "C"
    // and `tenants.name` is not: compared under the latter's collation
    // (equal for equal bytes either way), the join can use its key, where
    // a plan made once would otherwise scan every tenant.
    .fetch_all(claims)
    .await
    .map_err(pg)?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let now = test_now.unwrap_or(first.0);
    if first.7 >= MAX_TENANTS_PER_CLAIM || rows.iter().any(|r| r.6 == Some(true)) {
        return Ok(None);
    }
    let mut views = Vec::new();
    for (_, name, weight, quotas, running, fuel, _, _) in rows {
        let Some(name) = name else { continue };
        let policy = policy_from(&name, Some((weight, quotas)), &db.defaults)?;
        views.push((name, policy, running.unwrap_or(0), fuel.unwrap_or(0)));
    }
    let (mut contenders, budgets, passed_over) =
        crate::store::tenants::contenders(views, &p.caps, now);
    let token = random_token();
    let expires = crate::time::after(now, p.lease_ms);
    let mut claimed = Vec::new();
    for _ in 0..CLAIM_ROUNDS {
        let want = (p.limit as usize).saturating_sub(claimed.len());
        let picks = fairness(fair).pick_for(&contenders, want, p.only_tenants.is_some(), now);
        if picks.is_empty() {
            break;
        }
        let given = given(&picks, contenders.len());
        let (names, counts): (Vec<&str>, Vec<i64>) = contenders
            .iter()
            .zip(&given)
            .filter(|(_, n)| **n > 0)
            .map(|(c, n)| (c.tenant.as_str(), *n as i64))
            .unzip();
        let mut got = take(claims, now, p, &token, expires, &names, &counts).await?;
        let rows = contenders
            .iter()
            .map(|c| got.remove(&c.tenant).unwrap_or_default())
            .collect();
        let before = claimed.len();
        let ordered = fairness(fair).settle(&mut contenders, &picks, &given, rows);
        for mut job in ordered {
            budgets.stamp(&mut job);
            claimed.push(job);
        }
        if claimed.len() == before {
            break;
        }
    }
    Ok(Some(Claim {
        jobs: claimed,
        passed_over: passed_over || !contenders.iter().all(|c| c.ran_out),
    }))
}

/// Takes up to `counts[i]` due jobs of each `names[i]` (none with a
/// concurrency key) in its order, moves them to running under one lease
/// token and counts them, in one statement; each tenant's jobs in its
/// order.
async fn take(
    claims: &PgPool,
    now: Millis,
    p: &ClaimParams,
    token: &str,
    expires: Millis,
    names: &[&str],
    counts: &[i64],
) -> StoreResult<HashMap<String, Vec<ClaimedJob>>> {
    let running = JobStatus::Queued
        .after(Transition::Claim)
        .unwrap_or(JobStatus::Running);
    // The picked rows' columns are named apart from the jobs' own, so
    // that the RETURNING list reads the jobs' unqualified.
    let claimable = claimable("jobs", "$3");
    let started = outbox::pg_events(EventType::Started, "attempts", "NULL");
    let rows = sqlx::query(&format!(
        "WITH want AS (SELECT * FROM unnest($1::text[], $2::int8[]) AS w(tenant, n)), \
         locked AS (SELECT j.*, w.tenant AS pick_tenant FROM want w CROSS JOIN LATERAL ( \
             SELECT id AS pick_id, urgent AS pick_urgent, priority AS pick_priority, \
               run_at AS pick_run_at FROM jobs \
             WHERE tenant = w.tenant AND status = 'queued' AND NOT paused AND run_at <= $3 \
               AND ($4::text[] IS NULL OR queue = ANY($4)) AND concurrency_key IS NULL \
               AND throttle IS NULL AND fairness_key IS NULL \
               AND {claimable} \
             ORDER BY urgent DESC, priority, run_at, id LIMIT w.n FOR UPDATE SKIP LOCKED) j), \
         picked AS (SELECT *, row_number() OVER (PARTITION BY pick_tenant \
             ORDER BY pick_urgent DESC, pick_priority, pick_run_at, pick_id) AS pick_rank \
           FROM locked), \
         taken AS (UPDATE jobs SET status = $5, attempts = attempts + 1, lease_owner = $6, \
             lease_token = $7, lease_expires_at = $8, attempt_started_at = $3, \
             started_at = COALESCE(started_at, $3), progress = NULL, urgent = FALSE, \
             begun = pick_rank <= $9 \
           FROM picked WHERE id = pick_id AND {PG_STATUS} = 'queued' \
           RETURNING {CLAIM_COLUMNS}, pick_urgent, pick_priority, pick_run_at), \
         counted AS (INSERT INTO tenant_jobs (tenant, shard, queued, running, waiting) \
             SELECT tenant, {SHARD}, -count(*), count(*), 0 FROM taken \
             GROUP BY tenant ORDER BY tenant \
           ON CONFLICT (tenant, shard) DO UPDATE SET \
             queued = tenant_jobs.queued + excluded.queued, \
             running = tenant_jobs.running + excluded.running), \
         evs AS (INSERT INTO events (tenant, n, at, body) \
             SELECT tenant, count(*), $3, {started} FROM taken GROUP BY tenant) \
         SELECT * FROM taken"
    ))
    .bind(names)
    .bind(counts)
    .bind(now)
    .bind(p.queues.as_deref())
    .bind(running.as_str())
    .bind(&p.owner)
    .bind(token)
    .bind(expires)
    .bind(i64::from(p.begin_each))
    .fetch_all(claims)
    .await
    .map_err(pg)?;
    let mut by_tenant: HashMap<String, Vec<(bool, i32, Millis, ClaimedJob)>> = HashMap::new();
    for r in &rows {
        let job = claimed_row(r).map_err(pg)?;
        let order = (
            r.try_get::<bool, _>("pick_urgent").map_err(pg)?,
            r.try_get::<i32, _>("pick_priority").map_err(pg)?,
            r.try_get::<i64, _>("pick_run_at").map_err(pg)?,
        );
        by_tenant
            .entry(job.tenant.clone())
            .or_default()
            .push((order.0, order.1, order.2, job));
    }
    Ok(by_tenant
        .into_iter()
        .map(|(tenant, mut jobs)| {
            jobs.sort_by(|a, b| {
                b.0.cmp(&a.0)
                    .then(a.1.cmp(&b.1))
                    .then(a.2.cmp(&b.2))
                    .then(a.3.id.cmp(&b.3.id))
            });
            (tenant, jobs.into_iter().map(|j| j.3).collect())
        })
        .collect())
}
