//! A claim, written once for both backends: which tenants contend, how
//! the claim's jobs are shared among them by weight (`Fairness`) and,
//! inside a tenant, among its fairness keys (`fair_keys`), the throttle
//! keys it decided, and its counts and events. How a backend finds a
//! tenant's claimable rows and takes them is its own (`ClaimDriver`):
//! SQLite reads its line on its one writer and decides each row in Rust;
//! PostgreSQL filters in SQL and skips the rows other claimers hold.

use super::begun::Begun;
use super::dialect::Dialect;
use super::exec::{args, Exec};
use super::fair::{given, Fairness};
use super::fair_keys::{self, Group, MAX_KEYS_PER_CLAIM};
use super::records::{Claim, ClaimParams, ClaimedJob};
use super::tally::Tally;
use super::tenants::{contenders, policy_from, TenantView};
use super::throttle::{self, ClaimKeys};
use super::transition::random_token;
use super::{Millis, StoreError, StoreResult};
use crate::quota::{window_start, Quotas};
use async_trait::async_trait;
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

/// Most tenants one claim looks at; past it, claims go round them in turn.
pub const MAX_TENANTS_PER_CLAIM: usize = 256;
/// Rounds of picking in one claim (a tenant with fewer jobs than it was
/// given leaves its picks to the others).
pub const CLAIM_ROUNDS: usize = 3;

/// What a claim holds of the keys it met: each concurrency key's taken
/// slots (by running jobs, then by this claim as it takes them), and each
/// throttle key's state.
#[derive(Default)]
pub struct Held {
    pub keys: HashMap<(String, String), Vec<i64>>,
    pub throttled: ClaimKeys,
}

/// The lease a claim takes its jobs under.
pub struct Lease<'a> {
    pub owner: &'a str,
    pub token: &'a str,
    pub expires: Millis,
}

/// What a backend's connection does its own way in a claim.
#[async_trait]
pub trait ClaimDriver: Exec {
    /// A row a claim picked: the backend's handle of it and its
    /// concurrency key's slot.
    type Row: Send;

    /// Readies the claim's reads: makes due jobs claimable where the
    /// backend keeps them apart (SQLite's `available`), or plans them.
    async fn ready(&mut self, now: Millis) -> StoreResult<()>;

    /// Up to `n` of a tenant's claimable jobs of `group` that can run now,
    /// in its order, each in a free slot of its concurrency key; a
    /// throttled one whose key must wait is parked till its turn. Also
    /// answers whether it passed over any it may take later.
    async fn rows(
        &mut self,
        now: Millis,
        group: (&str, Group<'_>),
        queues: Option<&HashSet<String>>,
        n: usize,
        held: &mut Held,
    ) -> StoreResult<(Vec<Self::Row>, bool)>;

    /// Moves the picked rows to running under the lease, each with whether
    /// it is taken begun, in the order given; counts and reports each.
    async fn take(
        &mut self,
        now: Millis,
        picks: &[(Self::Row, bool)],
        lease: &Lease<'_>,
        tally: &mut Tally,
    ) -> StoreResult<Vec<ClaimedJob>>;
}

fn exec<D: Exec>(tx: &mut D) -> &mut dyn Exec {
    tx
}

pub fn fairness(fair: &Mutex<Fairness>) -> MutexGuard<'_, Fairness> {
    fair.lock().unwrap_or_else(|p| p.into_inner())
}

/// Claims due jobs, shared among tenants by weight: each tenant's jobs in
/// its own order, run-now first. Tenants at their `max_running` or out of
/// fuel for the window are passed over; so are jobs whose concurrency key
/// is running, and a second job of a key taken in the same claim. A
/// throttled job whose key has started its limit for the period is parked
/// until its turn.
pub async fn claim<D: ClaimDriver>(
    tx: &mut D,
    now: Millis,
    p: ClaimParams,
    fair: &Mutex<Fairness>,
    defaults: &Quotas,
) -> StoreResult<Claim> {
    if p.limit == 0 {
        return Ok(Claim {
            jobs: Vec::new(),
            passed_over: true,
        });
    }
    tx.ready(now).await?;
    let tenants: Vec<String> = match &p.only_tenants {
        // An enqueue's claim names its tenants: no scan of every tenant's
        // line, and the other claims' place among the tenants (the
        // cursor) stays theirs; a tenant with nothing due just gets none.
        Some(only) => {
            let mut named = only.clone();
            named.sort_unstable();
            named.dedup();
            named
        }
        None => active_tenants(tx, fair).await?,
    };
    let views = views(tx, &tenants, now, defaults).await?;
    let (mut contenders, budgets, left_out) = contenders(views, &p.caps, now);
    // Claims go round the tenants: some were not looked at, or had no room.
    let mut passed_over = fairness(fair).cursor.is_some() || left_out;
    let queues: Option<HashSet<String>> = p.queues.map(|q| q.into_iter().collect());
    let token = random_token();
    let lease = Lease {
        owner: &p.owner,
        token: &token,
        expires: crate::time::after(now, p.lease_ms),
    };
    let mut tally = Tally::new(now);
    let mut claimed = Vec::new();
    let mut held = Held::default();
    let mut begun = Begun::new(p.begin_each);
    for _ in 0..CLAIM_ROUNDS {
        let want = (p.limit as usize).saturating_sub(claimed.len());
        let picks = fairness(fair).pick_for(&contenders, want, p.only_tenants.is_some(), now);
        if picks.is_empty() {
            break;
        }
        let given = given(&picks, contenders.len());
        let mut rows = Vec::with_capacity(contenders.len());
        for (c, &n) in contenders.iter().zip(&given) {
            rows.push(if n == 0 {
                Vec::new()
            } else {
                let (got, skipped) =
                    fair_rows(tx, now, &c.tenant, queues.as_ref(), n, &mut held, fair).await?;
                passed_over |= skipped;
                begun.mark(&c.tenant, got)
            });
        }
        let ordered = fairness(fair).settle(&mut contenders, &picks, &given, rows);
        if ordered.is_empty() {
            break;
        }
        for mut job in tx.take(now, &ordered, &lease, &mut tally).await? {
            budgets.stamp(&mut job);
            claimed.push(job);
        }
    }
    for (tenant, key, slots, held_until) in held.throttled.rows() {
        tx.execute(
            throttle::WRITE_KEY,
            args![tenant, key, slots.as_str(), held_until],
        )
        .await?;
    }
    tx.tally(tally).await?;
    Ok(Claim {
        jobs: claimed,
        passed_over: passed_over || !contenders.iter().all(|c| c.ran_out),
    })
}

/// What is claimable in the dialect's claim index.
pub fn claimable(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "status = 'queued' AND available = 1",
        Dialect::Postgres | Dialect::PostgresMany => "status = 'queued' AND NOT paused",
    }
}

/// Up to ?2 tenants with claimable jobs after tenant ?1: each is one index
/// seek (a skip scan of the claim index).
fn tenants_after(d: Dialect) -> String {
    let line = claimable(d);
    let next = |after: &str| {
        format!("SELECT (SELECT MIN(tenant) FROM jobs WHERE {line} AND tenant > {after})")
    };
    // SQLite stops its recursion at a LIMIT inside it; PostgreSQL evaluates
    // as many rows as the outer query takes.
    let (inner, outer) = match d {
        Dialect::Sqlite => (" LIMIT $2", ""),
        Dialect::Postgres | Dialect::PostgresMany => ("", " LIMIT $2"),
    };
    format!(
        "WITH RECURSIVE t(name) AS ({} UNION ALL {} FROM t WHERE t.name IS NOT NULL{inner}) \
         SELECT name FROM t WHERE name IS NOT NULL{outer}",
        next("$1"),
        next("t.name")
    )
}

/// Tenants with claimable jobs: all of them, or the next
/// `MAX_TENANTS_PER_CLAIM` after where the last claim stopped, going round
/// from the start.
async fn active_tenants(tx: &mut dyn Exec, fair: &Mutex<Fairness>) -> StoreResult<Vec<String>> {
    let sql = tenants_after(tx.dialect());
    let after = fairness(fair).cursor.take().unwrap_or_default();
    let most = MAX_TENANTS_PER_CLAIM as i64;
    let mut names: Vec<(String,)> = tx.all(&sql, args![after.as_str(), most]).await?;
    if names.len() < MAX_TENANTS_PER_CLAIM && !after.is_empty() {
        // Round again from the start, up to where this scan began.
        let left = (MAX_TENANTS_PER_CLAIM - names.len()) as i64;
        let more: Vec<(String,)> = tx.all(&sql, args!["", left]).await?;
        names.extend(
            more.into_iter()
                .take_while(|(n,)| n.as_str() <= after.as_str()),
        );
    }
    if names.len() >= MAX_TENANTS_PER_CLAIM {
        fairness(fair).cursor = names.last().map(|(n,)| n.clone());
    }
    Ok(names.into_iter().map(|(n,)| n).collect())
}

/// A claim's view of each tenant: its settings, its running jobs and the
/// fuel it used in the current window, in one statement for them all.
async fn views(
    tx: &mut dyn Exec,
    tenants: &[String],
    now: Millis,
    defaults: &Quotas,
) -> StoreResult<Vec<TenantView>> {
    if tenants.is_empty() {
        return Ok(Vec::new());
    }
    type Row = (
        String,
        Option<i64>,
        Option<String>,
        Option<i64>,
        Option<i64>,
    );
    let sql = format!(
        "SELECT t.name, CAST(s.weight AS BIGINT), s.quotas, \
           (SELECT CAST(sum(running) AS BIGINT) FROM tenant_jobs WHERE tenant = t.name), \
           (SELECT CAST(sum(fuel) AS BIGINT) FROM tenant_usage \
            WHERE tenant = t.name AND window_start = $2) \
         FROM {} LEFT JOIN tenants s ON s.name = t.name ORDER BY t.o",
        tx.dialect().json_rows(1, "t", &[("name", "text")])
    );
    let names: Vec<serde_json::Value> = tenants
        .iter()
        .map(|t| serde_json::json!({ "name": t }))
        .collect();
    let names = serde_json::to_string(&names).map_err(|e| StoreError::Internal(e.to_string()))?;
    let rows: Vec<Row> = tx.all(&sql, args![&names, window_start(now)]).await?;
    rows.into_iter()
        .map(|(name, weight, quotas, running, fuel)| {
            let policy = policy_from(&name, Some((weight, quotas)), defaults)?;
            Ok((name, policy, running.unwrap_or(0), fuel.unwrap_or(0)))
        })
        .collect()
}

/// Up to `n` of a tenant's jobs that can run now: shared among its
/// fairness keys, and its jobs without one, when it has keyed jobs
/// (`fair_keys`), else in its order. Answers as `ClaimDriver::rows` does.
async fn fair_rows<D: ClaimDriver>(
    tx: &mut D,
    now: Millis,
    tenant: &str,
    queues: Option<&HashSet<String>>,
    n: usize,
    held: &mut Held,
    fair: &Mutex<Fairness>,
) -> StoreResult<(Vec<D::Row>, bool)> {
    let active = active_keys(tx, tenant, fair).await?;
    if active.is_empty() {
        return tx.rows(now, (tenant, Group::All), queues, n, held).await;
    }
    let head = fair_keys::head_of_line(n) as i64;
    let sql = fair_keys::has_unkeyed(tx.dialect());
    let unkeyed: bool = exec(tx)
        .scalar(sql, args![tenant, head])
        .await?
        .unwrap_or(false);
    let mut groups = fair_keys::contenders(active, unkeyed, n as u64);
    // Keys past those looked at are passed over.
    let mut skipped = fairness(fair).within(tenant).cursor.is_some();
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
                let (got, passed) = tx.rows(now, group, queues, k, held).await?;
                skipped |= passed;
                got
            });
        }
        let ordered = fairness(fair)
            .within(tenant)
            .settle(&mut groups, &picks, &given, rows);
        out.extend(ordered);
    }
    Ok((out, skipped))
}

/// A tenant's keys with jobs to claim and their weights: all of them, or
/// the next `MAX_KEYS_PER_CLAIM` after where its last claim stopped.
async fn active_keys(
    tx: &mut dyn Exec,
    tenant: &str,
    fair: &Mutex<Fairness>,
) -> StoreResult<Vec<(String, Option<i64>)>> {
    let sql = fair_keys::active_keys(tx.dialect());
    let after = fairness(fair)
        .within(tenant)
        .cursor
        .take()
        .unwrap_or_default();
    let most = MAX_KEYS_PER_CLAIM as i64;
    let mut keys: Vec<(String, Option<i64>)> =
        tx.all(sql, args![tenant, after.as_str(), most]).await?;
    if let Some(limit) = fair_keys::wrap_limit(keys.len(), &after) {
        let more = tx.all(sql, args![tenant, "", limit as i64]).await?;
        keys = fair_keys::wrapped(keys, more, &after);
    }
    fairness(fair).within(tenant).cursor = fair_keys::next_cursor(&keys);
    Ok(keys)
}
