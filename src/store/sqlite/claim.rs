//! Claims on SQLite, as the one claim (`store::claim`) asks its driver:
//! a tenant's available jobs read from its line on the writer's connection
//! and decided in Rust, parked when their queue is paused or their
//! throttle must wait, and leased by rowid.

use super::exec::WriterExec;
use super::rows::ClaimRow;
use super::wdb;
use crate::job::{JobStatus, Transition};
use crate::store::claim::{ClaimDriver, Held, Lease};
use crate::store::dialect::Dialect;
use crate::store::fair_keys::{self, Group, KEY};
use crate::store::job_sql::{self, CLAIM_COLUMNS};
use crate::store::records::free_slot;
use crate::store::records::*;
use crate::store::tally::Tally;
use crate::store::throttle::{self, Decision, KeyState, Throttle};
use crate::store::{Millis, StoreResult};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::hash_map::Entry;
use std::collections::HashSet;
use std::sync::LazyLock;

/// Most scheduled jobs one claim makes available.
const STAGE_BATCH: i64 = 1000;

#[async_trait]
impl ClaimDriver for WriterExec<'_> {
    type Row = Found;

    async fn ready(&mut self, now: Millis) -> StoreResult<()> {
        stage(self.conn, now)
    }

    async fn rows(
        &mut self,
        now: Millis,
        group: (&str, Group<'_>),
        queues: Option<&HashSet<String>>,
        n: usize,
        held: &mut Held,
    ) -> StoreResult<(Vec<Found>, bool)> {
        tenant_rows(self.conn, now, group, queues, n, held)
    }

    async fn take(
        &mut self,
        now: Millis,
        picks: &[(Found, bool)],
        lease: &Lease<'_>,
        tally: &mut Tally,
    ) -> StoreResult<Vec<ClaimedJob>> {
        take(self.conn, now, picks, lease, tally)
    }
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
    held: &mut Held,
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
    let keys = &mut held.keys;
    let throttled = &mut held.throttled;
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
            let taken = match keys.entry((tenant.to_owned(), k)) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let running: Vec<Option<i64>> = busy
                        .query_map(params![tenant, e.key().1], |r| r.get(0))
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
    lease: &Lease<'_>,
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
                    lease.owner,
                    lease.token,
                    lease.expires,
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
