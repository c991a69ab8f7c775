//! Claims on PostgreSQL: due jobs shared among tenants by weight
//! (`Fairness`, this process's own), each tenant's taken with
//! `FOR UPDATE SKIP LOCKED` in its own order, so that many claimers on
//! one database never wait for each other's rows and never take a job
//! twice.

use super::pg;
use super::rows::claimed_row;
use super::tally;
use super::tenants::claim_views;
use crate::job::{JobStatus, Transition};
use crate::quota::Quotas;
use crate::store::begun::Begun;
use crate::store::dialect::Dialect;
use crate::store::ending_sql::PG_STATUS;
use crate::store::fair::{given, Fairness};
use crate::store::fair_keys::{self, Group, KEY, MAX_KEYS_PER_CLAIM};
use crate::store::job_sql::{self, CLAIM_COLUMNS};
use crate::store::records::*;
use crate::store::tally::Tally;
use crate::store::throttle::{self, ClaimKeys, Decision, KeyState, Throttle};
use crate::store::{Millis, StoreResult};
use sqlx::{Postgres, Row, Transaction};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

type Tx = Transaction<'static, Postgres>;

/// Most tenants one claim looks at; past it, claims go round them in turn.
pub(super) const MAX_TENANTS_PER_CLAIM: i64 = 256;
/// Rounds of picking in one claim (a tenant with fewer jobs than it was
/// given leaves its picks to the others).
pub(super) const CLAIM_ROUNDS: usize = 3;

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

pub(super) fn fairness(fair: &Mutex<Fairness>) -> std::sync::MutexGuard<'_, Fairness> {
    fair.lock().unwrap_or_else(|p| p.into_inner())
}

/// Claims due jobs, shared among tenants by weight: each tenant's jobs in
/// its own order, run-now first. Tenants at their `max_running` or out of
/// fuel for the window are passed over; so are jobs whose concurrency key
/// is running, and a second job of a key taken in the same claim. A
/// throttled job whose key has started its limit for the period is parked
/// until its turn. It always says it may have passed some over: its keyed
/// jobs are left out by its query, unseen.
pub async fn claim(
    tx: &mut Tx,
    now: Millis,
    p: ClaimParams,
    fair: Arc<Mutex<Fairness>>,
    defaults: Quotas,
) -> StoreResult<Claim> {
    let passed_over = |jobs| Claim {
        jobs,
        passed_over: true,
    };
    if p.limit == 0 {
        return Ok(passed_over(Vec::new()));
    }
    let cursor = fairness(&fair).cursor.take().unwrap_or_default();
    let tenants = active_tenants(tx, &cursor).await?;
    if tenants.len() as i64 >= MAX_TENANTS_PER_CLAIM {
        fairness(&fair).cursor = tenants.last().cloned();
    }
    let tenants: Vec<String> = tenants
        .into_iter()
        .filter(|t| p.only_tenants.as_ref().is_none_or(|o| o.contains(t)))
        .collect();
    let views = claim_views(tx, &tenants, now, &defaults).await?;
    let (mut contenders, budgets, _) = crate::store::tenants::contenders(views, &p.caps, now);
    // Set after the reads above, which are planned once and kept. A
    // generic plan of the claim's query (PostgreSQL's choice after five
    // runs of a prepared statement) sorts every due job of the tenant and
    // stalled claims for 150-230 ms; planned with its values, it reads the
    // claim index in order. Only here: planning every statement costs the
    // enqueues ~15 %.
    sqlx::query("SET LOCAL plan_cache_mode = force_custom_plan")
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    let queues: Option<Vec<String>> = p.queues.clone();
    let token = crate::store::transition::random_token();
    let expires = crate::time::after(now, p.lease_ms);
    let mut tally = Tally::new(now);
    let mut claimed = Vec::new();
    let mut keys = HashMap::new();
    let mut throttled = ClaimKeys::default();
    let mut begun = Begun::new(p.begin_each);
    for _ in 0..CLAIM_ROUNDS {
        let want = (p.limit as usize).saturating_sub(claimed.len());
        let picks = fairness(&fair).pick_for(&contenders, want, p.only_tenants.is_some(), now);
        if picks.is_empty() {
            break;
        }
        let given = given(&picks, contenders.len());
        let mut rows = Vec::with_capacity(contenders.len());
        for (c, &n) in contenders.iter().zip(&given) {
            rows.push(if n == 0 {
                Vec::new()
            } else {
                let mut held = Held {
                    keys: &mut keys,
                    throttled: &mut throttled,
                };
                let found =
                    fair_rows(tx, now, &c.tenant, queues.as_deref(), n, &mut held, &fair).await?;
                begun.mark(&c.tenant, found)
            });
        }
        let ordered = fairness(&fair).settle(&mut contenders, &picks, &given, rows);
        if ordered.is_empty() {
            break;
        }
        for mut job in take(tx, now, &ordered, &p.owner, &token, expires, &mut tally).await? {
            budgets.stamp(&mut job);
            claimed.push(job);
        }
    }
    write_keys(tx, &throttled).await?;
    tally::apply(tx, tally).await?;
    Ok(passed_over(claimed))
}

/// Tenants with queued jobs: all of them, or the next
/// `MAX_TENANTS_PER_CLAIM` after `after`, going round from the start. Each
/// is one index seek (a skip scan of `jobs_claim`).
async fn active_tenants(tx: &mut Tx, after: &str) -> StoreResult<Vec<String>> {
    let scan = "WITH RECURSIVE t(name) AS ( \
           SELECT (SELECT MIN(tenant) FROM jobs WHERE status = 'queued' AND NOT paused \
                   AND tenant > $1) \
           UNION ALL \
           SELECT (SELECT MIN(tenant) FROM jobs WHERE status = 'queued' AND NOT paused \
                   AND tenant > t.name) \
           FROM t WHERE t.name IS NOT NULL) \
         SELECT name FROM t WHERE name IS NOT NULL LIMIT $2";
    let mut names: Vec<String> = sqlx::query_scalar(scan)
        .bind(after)
        .bind(MAX_TENANTS_PER_CLAIM)
        .fetch_all(&mut **tx)
        .await
        .map_err(pg)?;
    if (names.len() as i64) < MAX_TENANTS_PER_CLAIM && !after.is_empty() {
        let more: Vec<String> = sqlx::query_scalar(scan)
            .bind("")
            .bind(MAX_TENANTS_PER_CLAIM - names.len() as i64)
            .fetch_all(&mut **tx)
            .await
            .map_err(pg)?;
        names.extend(more.into_iter().take_while(|n| n.as_str() <= after));
    }
    Ok(names)
}

/// What a claim holds of the keys it met: each concurrency key's taken
/// slots, and each throttle key's state.
struct Held<'a> {
    keys: &'a mut HashMap<(String, String), Vec<i32>>,
    throttled: &'a mut ClaimKeys,
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
    tx: &mut Tx,
    now: Millis,
    (tenant, group): (&str, Group<'_>),
    queues: Option<&[String]>,
    n: usize,
    held: &mut Held<'_>,
) -> StoreResult<Vec<(String, Option<i32>)>> {
    let mut out = Vec::with_capacity(n);
    let mut more = 0;
    for _ in 0..PARK_ROUNDS {
        // Past the first read, some more: a parked key's jobs are many.
        let want = n - out.len() + more;
        let rows = due_rows(tx, now, (tenant, group), queues, want).await?;
        let read = rows.len();
        let parked = decide(tx, now, tenant, rows, n, held, &mut out).await?;
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
    tx: &mut Tx,
    now: Millis,
    (tenant, group): (&str, Group<'_>),
    queues: Option<&[String]>,
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
    q.fetch_all(&mut **tx).await.map_err(pg)
}

/// Up to `n` of a tenant's due jobs that can run now: shared among its
/// fairness keys, and its jobs without one, when it has keyed jobs
/// (`fair_keys`), else in its order.
async fn fair_rows(
    tx: &mut Tx,
    now: Millis,
    tenant: &str,
    queues: Option<&[String]>,
    n: usize,
    held: &mut Held<'_>,
    fair: &Mutex<Fairness>,
) -> StoreResult<Vec<(String, Option<i32>)>> {
    let active = active_keys(tx, tenant, fair).await?;
    if active.is_empty() {
        return tenant_rows(tx, now, (tenant, Group::All), queues, n, held).await;
    }
    let unkeyed: bool = sqlx::query_scalar(fair_keys::has_unkeyed(Dialect::Postgres))
        .bind(tenant)
        .bind(i64::try_from(fair_keys::head_of_line(n)).unwrap_or(i64::MAX))
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)?;
    let mut groups = fair_keys::contenders(active, unkeyed, n as u64);
    let mut out = Vec::with_capacity(n);
    // Each round fills the claim or finds a group out of jobs, which the
    // next leaves out: at most one round more than there are groups.
    while out.len() < n {
        let picks = fairness(fair).within(tenant).pick(&groups, n - out.len());
        if picks.is_empty() {
            break;
        }
        let given = given(&picks, groups.len());
        let mut rows = Vec::with_capacity(groups.len());
        for (g, &k) in groups.iter().zip(&given) {
            rows.push(if k == 0 {
                Vec::new()
            } else {
                let group = (tenant, Group::of(&g.tenant));
                tenant_rows(tx, now, group, queues, k, held).await?
            });
        }
        let ordered = fairness(fair)
            .within(tenant)
            .settle(&mut groups, &picks, &given, rows);
        out.extend(ordered);
    }
    Ok(out)
}

/// A tenant's keys with due jobs and their weights: all of them, or the
/// next `MAX_KEYS_PER_CLAIM` after where its last claim stopped.
async fn active_keys(
    tx: &mut Tx,
    tenant: &str,
    fair: &Mutex<Fairness>,
) -> StoreResult<Vec<(String, Option<i64>)>> {
    let sql = fair_keys::active_keys(Dialect::Postgres);
    let after = fairness(fair)
        .within(tenant)
        .cursor
        .take()
        .unwrap_or_default();
    let scan = |after: String, limit: usize| {
        sqlx::query_as::<_, (String, Option<i32>)>(sql)
            .bind(tenant.to_owned())
            .bind(after)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    };
    let mut keys = scan(after.clone(), MAX_KEYS_PER_CLAIM)
        .fetch_all(&mut **tx)
        .await
        .map_err(pg)?;
    if let Some(limit) = fair_keys::wrap_limit(keys.len(), &after) {
        let more = scan(String::new(), limit)
            .fetch_all(&mut **tx)
            .await
            .map_err(pg)?;
        keys = fair_keys::wrapped(keys, more, &after);
    }
    let keys: Vec<(String, Option<i64>)> = keys
        .into_iter()
        .map(|(k, w)| (k, w.map(i64::from)))
        .collect();
    fairness(fair).within(tenant).cursor = fair_keys::next_cursor(&keys);
    Ok(keys)
}

/// Which of `rows` start (added to `out` with their concurrency slots,
/// up to `n` in all), and which are parked by their throttle (written
/// here); answers how many were parked.
async fn decide(
    tx: &mut Tx,
    now: Millis,
    tenant: &str,
    rows: Vec<DueRow>,
    n: usize,
    held: &mut Held<'_>,
    out: &mut Vec<(String, Option<i32>)>,
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
                None => match hold_key(tx, &pair.0, &pair.1).await? {
                    Some(running) => held.keys.entry(pair.clone()).or_insert(running),
                    None => continue,
                },
            };
            match (0..limit.unwrap_or(1)).find(|s| !taken.contains(s)) {
                Some(s) => slot = Some((s, pair)),
                None => continue,
            }
        }
        if let Some(t) = throttle.as_deref().and_then(Throttle::from_text) {
            let state = match held.throttled.get(tenant, &t.key) {
                Some(s) => s,
                None => match hold_throttle(tx, tenant, &t.key).await? {
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
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    }
    Ok(waits.len())
}

/// Takes a throttle key for this transaction if no other claimer holds
/// it, and answers its state (read after the lock, so after the commit of
/// any claimer that held it before); `None` when another claimer holds it.
async fn hold_throttle(tx: &mut Tx, tenant: &str, key: &str) -> StoreResult<Option<KeyState>> {
    if !try_hold(tx, &format!("throttle/{tenant}"), key).await? {
        return Ok(None);
    }
    let text: Option<String> = sqlx::query_scalar(throttle::READ_KEY)
        .bind(tenant)
        .bind(key)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    Ok(Some(
        text.map(|t| KeyState::from_text(&t)).unwrap_or_default(),
    ))
}

/// Takes the advisory lock of `space`/`key` for this transaction unless
/// another transaction holds it: a concurrency key's space is its tenant,
/// a throttle key's `throttle/<tenant>`.
async fn try_hold(tx: &mut Tx, space: &str, key: &str) -> StoreResult<bool> {
    sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))")
        .bind(space)
        .bind(key)
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)
}

/// Writes back the throttle keys a claim decided jobs of.
async fn write_keys(tx: &mut Tx, keys: &ClaimKeys) -> StoreResult<()> {
    for (tenant, key, slots, held_until) in keys.rows() {
        sqlx::query(throttle::WRITE_KEY)
            .bind(tenant)
            .bind(key)
            .bind(slots)
            .bind(held_until)
            .execute(&mut **tx)
            .await
            .map_err(pg)?;
    }
    Ok(())
}

/// Takes a concurrency key for this transaction if no other claimer holds
/// it, and answers the slots its running jobs hold (read after the lock,
/// so after the commit of any claimer that held it before); `None` when
/// another claimer holds it.
async fn hold_key(tx: &mut Tx, tenant: &str, key: &str) -> StoreResult<Option<Vec<i32>>> {
    if !try_hold(tx, tenant, key).await? {
        return Ok(None);
    }
    let running: Vec<Option<i32>> = sqlx::query_scalar(job_sql::KEY_SLOTS)
        .bind(tenant)
        .bind(key)
        .fetch_all(&mut **tx)
        .await
        .map_err(pg)?;
    Ok(Some(running.into_iter().map(|s| s.unwrap_or(0)).collect()))
}

/// Moves the given queued jobs to running under one lease token, each in
/// its concurrency key's slot, in the order given.
async fn take(
    tx: &mut Tx,
    now: Millis,
    picked: &[((String, Option<i32>), bool)],
    owner: &str,
    token: &str,
    expires: Millis,
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
    .bind(owner)
    .bind(token)
    .bind(expires)
    .bind(now)
    .bind(&ids)
    .bind(picked.iter().map(|p| p.0 .1).collect::<Vec<Option<i32>>>())
    .bind(picked.iter().map(|p| p.1).collect::<Vec<bool>>())
    .fetch_all(&mut **tx)
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
