//! Claims on SQLite: which available jobs a claim takes, shared among
//! tenants by weight (`Fairness`), and the update that leases each one.

use super::rows::ClaimRow;
use super::tally::{Apply, Tally};
use super::tenants::{self, policy};
use super::wdb;
use crate::job::{JobStatus, Transition};
use crate::quota::Quotas;
use crate::store::begun::Begun;
use crate::store::dialect::Dialect;
use crate::store::fair::{given, Fairness};
use crate::store::fair_keys::{self, Group, KEY, MAX_KEYS_PER_CLAIM};
use crate::store::job_sql::{self, CLAIM_COLUMNS};
use crate::store::records::*;
use crate::store::throttle::{self, ClaimKeys, Decision, KeyState, Throttle};
use crate::store::transition::random_token;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Most tenants one claim looks at; past it, claims go round them in turn.
const MAX_TENANTS_PER_CLAIM: usize = 256;
/// Most scheduled jobs one claim makes available.
const STAGE_BATCH: i64 = 1000;
/// Rounds of picking in one claim (a tenant with fewer jobs than it was
/// given leaves its picks to the others).
const CLAIM_ROUNDS: usize = 3;

/// Claims available jobs, shared among tenants by weight (`Fairness`):
/// each tenant's jobs in its own order, run-now first. Tenants at their
/// `max_running` or out of fuel for the window are passed over; so are
/// jobs whose concurrency key is running, and a second job of a key taken
/// in the same claim. A throttled job whose key has started its limit for
/// the period is parked until its turn.
pub fn claim(
    conn: &Connection,
    now: Millis,
    p: ClaimParams,
    fair: &mut Fairness,
    defaults: &Quotas,
) -> StoreResult<Claim> {
    if p.limit == 0 {
        return Ok(Claim {
            jobs: Vec::new(),
            passed_over: true,
        });
    }
    stage(conn, now)?;
    let mut views = Vec::new();
    for tenant in active_tenants(conn, fair)? {
        if p.only_tenants
            .as_ref()
            .is_some_and(|o| !o.contains(&tenant))
        {
            continue;
        }
        let policy = policy(conn, &tenant, defaults)?;
        let (running, fuel_used) = tenants::running_and_fuel(conn, &tenant, now)?;
        views.push((tenant, policy, running, fuel_used));
    }
    let (mut contenders, budgets, left_out) =
        crate::store::tenants::contenders(views, &p.caps, now);
    // Claims go round the tenants: some were not looked at, or had no room.
    let mut passed_over = fair.cursor.is_some() || left_out;
    let queues: Option<HashSet<String>> = p.queues.map(|q| q.into_iter().collect());
    let token = random_token();
    let expires = crate::time::after(now, p.lease_ms);
    let mut tally = Tally::new(now);
    let mut claimed = Vec::new();
    let mut begun = Begun::new(p.begin_each);
    let mut throttled = ClaimKeys::default();
    for _ in 0..CLAIM_ROUNDS {
        let want = (p.limit as usize).saturating_sub(claimed.len());
        let picks = fair.pick_for(&contenders, want, p.only_tenants.is_some(), now);
        if picks.is_empty() {
            break;
        }
        let given = given(&picks, contenders.len());
        let mut rows = Vec::with_capacity(contenders.len());
        for (c, &n) in contenders.iter().zip(&given) {
            rows.push(if n == 0 {
                Vec::new()
            } else {
                let (got, skipped) = fair_rows(
                    conn,
                    now,
                    &c.tenant,
                    queues.as_ref(),
                    n,
                    &mut throttled,
                    fair,
                )?;
                passed_over |= skipped;
                begun.mark(&c.tenant, got)
            });
        }
        let ordered = fair.settle(&mut contenders, &picks, &given, rows);
        if ordered.is_empty() {
            break;
        }
        for mut job in take(conn, now, &ordered, &p.owner, &token, expires, &mut tally)? {
            budgets.stamp(&mut job);
            claimed.push(job);
        }
    }
    write_keys(conn, &throttled)?;
    tally.apply(conn)?;
    Ok(Claim {
        jobs: claimed,
        passed_over: passed_over || !contenders.iter().all(|c| c.ran_out),
    })
}

/// Makes scheduled jobs whose time has come available, oldest first, a
/// bounded number per claim.
fn stage(conn: &Connection, now: Millis) -> StoreResult<()> {
    conn.prepare_cached(
        "UPDATE jobs SET available = 1 WHERE rowid IN (SELECT rowid FROM jobs \
         WHERE status = 'queued' AND available = 0 AND run_at <= ?1 ORDER BY run_at LIMIT ?2)",
    )
    .and_then(|mut s| s.execute(params![now, STAGE_BATCH]))
    .map_err(wdb)?;
    Ok(())
}

/// Tenants with available jobs: all of them, or the next
/// `MAX_TENANTS_PER_CLAIM` after where the last claim stopped. Each is one
/// index seek (a skip scan of `jobs_available`).
fn active_tenants(conn: &Connection, fair: &mut Fairness) -> StoreResult<Vec<String>> {
    let scan = |after: &str, limit: usize| -> StoreResult<Vec<String>> {
        conn.prepare_cached(
            "WITH RECURSIVE t(name) AS ( \
               SELECT (SELECT MIN(tenant) FROM jobs WHERE status = 'queued' AND available = 1 \
                       AND tenant > ?1) \
               UNION ALL \
               SELECT (SELECT MIN(tenant) FROM jobs WHERE status = 'queued' AND available = 1 \
                       AND tenant > t.name) \
               FROM t WHERE t.name IS NOT NULL LIMIT ?2) \
             SELECT name FROM t WHERE name IS NOT NULL",
        )
        .and_then(|mut s| {
            s.query_map(params![after, limit as i64], |r| r.get(0))?
                .collect()
        })
        .map_err(wdb)
    };
    let after = fair.cursor.take().unwrap_or_default();
    let mut names = scan(&after, MAX_TENANTS_PER_CLAIM)?;
    if names.len() < MAX_TENANTS_PER_CLAIM && !after.is_empty() {
        // Round again from the start, up to where this scan began.
        let more = scan("", MAX_TENANTS_PER_CLAIM - names.len())?;
        names.extend(
            more.into_iter()
                .take_while(|n| n.as_str() <= after.as_str()),
        );
    }
    if names.len() >= MAX_TENANTS_PER_CLAIM {
        fair.cursor = names.last().cloned();
    }
    Ok(names)
}

/// The rowids of up to `n` of a tenant's available jobs that can run now,
/// in its order, each with its concurrency key's slot: not on another
/// queue than those served, not of a paused queue (those are parked), not
/// expired, not of a key whose slots are all taken; a throttled one whose
/// key must wait is parked till its turn (`throttle`). At most a bounded
/// number of its jobs are looked at, so a tenant whose first jobs all wait
/// for one key costs a claim little (and waits behind itself). Also
/// answers whether it passed over any it may take later (one of a key, or
/// any past the rows it looked at).
fn tenant_rows(
    conn: &Connection,
    now: Millis,
    (tenant, group): (&str, Group<'_>),
    queues: Option<&HashSet<String>>,
    n: usize,
    held: &mut Held<'_>,
) -> StoreResult<(Vec<Found>, bool)> {
    let scan_limit = fair_keys::head_of_line(n) as i64;
    let sql = match group {
        Group::Key(_) => &*ROWS_OF_KEY,
        Group::All | Group::Unkeyed => &*ROWS,
    };
    let mut stmt = conn.prepare_cached(sql).map_err(wdb)?;
    let paused: HashSet<String> = super::queues::paused(conn, tenant)?.into_iter().collect();
    let mut parked = Vec::new();
    let mut waits = Vec::new();
    let mut busy = super::shared(conn, job_sql::KEY_SLOTS)?;
    let mut rows = match group {
        Group::Key(key) => stmt.query(params![tenant, scan_limit, now, key]),
        Group::All | Group::Unkeyed => stmt.query(params![tenant, scan_limit, now]),
    }
    .map_err(wdb)?;
    let keys = &mut *held.keys;
    let throttled = &mut *held.throttled;
    let mut out = Vec::with_capacity(n);
    let (mut seen, mut skipped) = (0i64, false);
    while out.len() < n {
        let Some(r) = rows.next().map_err(wdb)? else {
            break;
        };
        seen += 1;
        if group == Group::Unkeyed && r.get::<_, bool>(6).map_err(wdb)? {
            continue;
        }
        let rowid: i64 = r.get(0).map_err(wdb)?;
        if queues.is_some() || !paused.is_empty() {
            let queue: String = r.get(1).map_err(wdb)?;
            if paused.contains(&queue) {
                parked.push(rowid);
                continue;
            }
            if queues.is_some_and(|q| !q.contains(&queue)) {
                continue;
            }
        }
        let key: Option<String> = r.get(2).map_err(wdb)?;
        let mut slot = None;
        if let Some(k) = key {
            let limit: Option<i64> = r.get(3).map_err(wdb)?;
            // The slots taken: by running jobs, read once per key a claim.
            let taken = match keys.entry(k) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let running: Vec<Option<i64>> = busy
                        .query_map(params![tenant, e.key()], |r| r.get(0))
                        .and_then(|rows| rows.collect())
                        .map_err(wdb)?;
                    e.insert(running.into_iter().map(|s| s.unwrap_or(0)).collect())
                }
            };
            match free_slot(taken, limit.unwrap_or(1)) {
                Some(s) => slot = Some((s, taken)),
                None => {
                    skipped = true;
                    continue;
                }
            }
        }
        let throttle: Option<String> = r.get(4).map_err(wdb)?;
        if let Some(t) = throttle.as_deref().and_then(Throttle::from_text) {
            let held: Option<i64> = r.get(5).map_err(wdb)?;
            let held = held.and_then(|h| u32::try_from(h).ok());
            let state = match throttled.get(tenant, &t.key) {
                Some(s) => s,
                None => {
                    let s = read_key(conn, tenant, &t.key)?;
                    throttled.insert(tenant, &t.key, s)
                }
            };
            if let Decision::Wait { until, slot } = state.decide(&t, now, held) {
                waits.push((rowid, until, slot));
                // Looked at again at its turn, not before.
                skipped = true;
                continue;
            }
        }
        let slot = slot.map(|(s, taken)| {
            taken.push(s);
            s
        });
        out.push((rowid, slot));
    }
    drop(rows);
    park_rows(conn, &parked)?;
    park_throttled(conn, &waits)?;
    let more = out.len() < n && seen >= scan_limit;
    Ok((out, skipped || more))
}

/// A tenant's claimable jobs in its order (?1 tenant, ?2 most, ?3 now),
/// and whether each has a fairness key. Expired jobs are left for the
/// expiry service to fail.
static ROWS: LazyLock<String> = LazyLock::new(|| rows_sql("jobs", ""));
/// The same of one key's (?4), read from `jobs_fair`.
static ROWS_OF_KEY: LazyLock<String> = LazyLock::new(|| {
    rows_sql(
        fair_keys::by_key_index(Dialect::Sqlite),
        &format!("AND {KEY} IS NOT NULL AND {KEY} = ?4"),
    )
});

fn rows_sql(jobs: &str, of_key: &str) -> String {
    format!(
        "SELECT rowid, queue, concurrency_key, concurrency_limit, throttle, throttle_slot, \
           {KEY} IS NOT NULL \
         FROM {jobs} \
         WHERE tenant = ?1 AND status = 'queued' AND available = 1 {of_key} \
           AND (expire_after_ms IS NULL OR run_at + expire_after_ms > ?3) \
         ORDER BY urgent DESC, priority, run_at, id LIMIT ?2"
    )
}

/// What a claim holds of the keys it met, across a tenant's groups: each
/// concurrency key's taken slots (a key's jobs may be in several groups),
/// and each throttle key's state.
struct Held<'a> {
    keys: &'a mut HashMap<String, Vec<i64>>,
    throttled: &'a mut ClaimKeys,
}

/// Up to `n` of a tenant's jobs that can run now: shared among its
/// fairness keys, and its jobs without one, when it has keyed jobs
/// (`fair_keys`), else in its order. Answers as `tenant_rows` does.
fn fair_rows(
    conn: &Connection,
    now: Millis,
    tenant: &str,
    queues: Option<&HashSet<String>>,
    n: usize,
    throttled: &mut ClaimKeys,
    fair: &mut Fairness,
) -> StoreResult<(Vec<Found>, bool)> {
    let mut keys = HashMap::new();
    let mut held = Held {
        keys: &mut keys,
        throttled,
    };
    let within = fair.within(tenant);
    let active = active_keys(conn, tenant, within)?;
    if active.is_empty() {
        return tenant_rows(conn, now, (tenant, Group::All), queues, n, &mut held);
    }
    let unkeyed: bool = conn
        .prepare_cached(fair_keys::has_unkeyed(Dialect::Sqlite))
        .and_then(|mut s| {
            s.query_row(params![tenant, fair_keys::head_of_line(n) as i64], |r| {
                r.get(0)
            })
        })
        .map_err(wdb)?;
    let mut groups = fair_keys::contenders(active, unkeyed, n as u64);
    // Keys past those looked at are passed over.
    let (mut out, mut skipped) = (Vec::with_capacity(n), within.cursor.is_some());
    // Each round fills the claim or finds a group out of jobs, which the
    // next leaves out: at most one round more than there are groups.
    while out.len() < n {
        let picks = within.pick(&groups, n - out.len());
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
                let (got, passed) = tenant_rows(conn, now, group, queues, k, &mut held)?;
                skipped |= passed;
                got
            });
        }
        out.extend(within.settle(&mut groups, &picks, &given, rows));
    }
    Ok((out, skipped))
}

/// A tenant's keys with jobs to claim and their weights: all of them, or
/// the next `MAX_KEYS_PER_CLAIM` after where its last claim stopped.
fn active_keys(
    conn: &Connection,
    tenant: &str,
    within: &mut Fairness,
) -> StoreResult<Vec<(String, Option<i64>)>> {
    let mut stmt = conn
        .prepare_cached(fair_keys::active_keys(Dialect::Sqlite))
        .map_err(wdb)?;
    let mut scan = |after: &str, limit: usize| -> StoreResult<Vec<(String, Option<i64>)>> {
        stmt.query_map(params![tenant, after, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(wdb)
    };
    let after = within.cursor.take().unwrap_or_default();
    let mut keys = scan(&after, MAX_KEYS_PER_CLAIM)?;
    if let Some(limit) = fair_keys::wrap_limit(keys.len(), &after) {
        keys = fair_keys::wrapped(keys, scan("", limit)?, &after);
    }
    within.cursor = fair_keys::next_cursor(&keys);
    Ok(keys)
}

/// The lowest of a key's `limit` slots not taken, if any is free.
fn free_slot(taken: &[i64], limit: i64) -> Option<i64> {
    (0..limit).find(|s| !taken.contains(s))
}

/// Parks jobs a claim found on a paused queue: one queued again while its
/// queue's pause was being written, in chunks, misses the pause's sweep.
fn park_rows(conn: &Connection, rows: &[i64]) -> StoreResult<()> {
    let mut stmt = conn
        .prepare_cached("UPDATE jobs SET available = 2 WHERE rowid = ?1 AND status = 'queued'")
        .map_err(wdb)?;
    for row in rows {
        stmt.execute([row]).map_err(wdb)?;
    }
    Ok(())
}

/// A throttle key's row as a claim first meets it (none yet: no slot used).
fn read_key(conn: &Connection, tenant: &str, key: &str) -> StoreResult<KeyState> {
    let text: Option<String> = super::shared(conn, throttle::READ_KEY)?
        .query_row(params![tenant, key], |r| r.get(0))
        .optional()
        .map_err(wdb)?;
    Ok(text.map(|t| KeyState::from_text(&t)).unwrap_or_default())
}

/// Writes back the throttle keys a claim decided jobs of.
fn write_keys(conn: &Connection, keys: &ClaimKeys) -> StoreResult<()> {
    let mut stmt = super::shared(conn, throttle::WRITE_KEY)?;
    for (tenant, key, slots, held_until) in keys.rows() {
        stmt.execute(params![tenant, key, slots, held_until])
            .map_err(wdb)?;
    }
    Ok(())
}

/// Parks throttled jobs till their turn, each holding its slot: out of
/// the claims' way, staged again when due.
fn park_throttled(conn: &Connection, waits: &[(i64, Millis, u32)]) -> StoreResult<()> {
    let mut stmt = conn
        .prepare_cached(
            "UPDATE jobs SET available = 0, run_at = ?1, throttle_slot = ?2 \
             WHERE rowid = ?3 AND status = 'queued'",
        )
        .map_err(wdb)?;
    for (row, until, slot) in waits {
        stmt.execute(params![until, slot, row]).map_err(wdb)?;
    }
    Ok(())
}

/// A job a claim found: its rowid, and its concurrency key's slot.
type Found = (i64, Option<i64>);
/// A job a claim picked, and whether it is taken begun.
type Pick = (Found, bool);

/// What a claim sets on each job it takes (?1 owner, ?2 token, ?3 lease
/// expiry, ?4 now, ?6 its concurrency key's slot, ?7 begun, ?8 the
/// status a claim moves a job to). A throttle slot it waited on is spent.
const TAKE: &str = "UPDATE OR FAIL jobs SET status = ?8, attempts = attempts + 1, \
    lease_owner = ?1, lease_token = ?2, lease_expires_at = ?3, attempt_started_at = ?4, \
    started_at = COALESCE(started_at, ?4), progress = NULL, urgent = 0, concurrency_slot = ?6, \
    begun = ?7, throttle_slot = NULL";

/// Moves the given queued jobs (by rowid: the claim found them on the
/// table itself) to running under one lease token, in the order given.
fn take(
    conn: &Connection,
    now: Millis,
    rows: &[Pick],
    owner: &str,
    token: &str,
    expires: Millis,
    tally: &mut Tally,
) -> StoreResult<Vec<ClaimedJob>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "{TAKE} WHERE rowid = ?5 AND status = 'queued' RETURNING {CLAIM_COLUMNS}"
        ))
        .map_err(wdb)?;
    let running = JobStatus::Queued
        .after(Transition::Claim)
        .unwrap_or(JobStatus::Running);
    let mut claimed = Vec::with_capacity(rows.len());
    for ((row, slot), begun) in rows {
        let taken = stmt
            .query_row(
                params![
                    owner,
                    token,
                    expires,
                    now,
                    row,
                    slot,
                    begun,
                    running.as_str()
                ],
                ClaimRow::read,
            )
            .optional()
            .map_err(wdb)?;
        if let Some(r) = taken {
            tally.moved(r.tenant(), Some(JobStatus::Queued), Some(running), 1);
            tally
                .outbox
                .push(crate::events::EventType::Started, r.about(), None);
            claimed.push(ClaimedJob::from(r));
        }
    }
    Ok(claimed)
}
