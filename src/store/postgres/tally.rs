//! Writes a write's per-tenant counts and events (`store::tally`) on
//! PostgreSQL, in its transaction and in one statement whatever the number
//! of tenants: each tenant's rows in name order, each into the shard of
//! the connection (`SHARD`: migration 0002 says why), and one event row
//! per tenant, put in order later by the sequencer (`events.rs`). The
//! writes are CTEs that another statement can carry too (a finalize's
//! attempt rows), a round trip less.

use super::pg;
use crate::store::tally::Tally;
use crate::store::StoreResult;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{Postgres, Transaction};

/// The shard a connection adds to: the same for a whole transaction, so
/// that it never holds two shards of one tenant.
pub const SHARD: &str = "(pg_backend_pid() % 16)::int2";

/// The counts of one write, as the arrays `ctes` reads.
pub struct Counts<'a> {
    tenants: Vec<&'a str>,
    queued: Vec<i64>,
    running: Vec<i64>,
    waiting: Vec<i64>,
    window: i64,
    charged: Vec<&'a str>,
    fuel: Vec<i64>,
    wall_ms: Vec<i64>,
    attempts: Vec<i64>,
    completed: Vec<i64>,
    failed: Vec<i64>,
    cancelled: Vec<i64>,
    http_requests: Vec<i64>,
    http_bytes: Vec<i64>,
    cache_hits: Vec<i64>,
    fuel_saved: Vec<i64>,
    at: i64,
    ev_tenants: Vec<&'a str>,
    ev_n: Vec<i32>,
    ev_bodies: Vec<String>,
}

impl<'a> Counts<'a> {
    pub fn of(tally: &'a Tally) -> Counts<'a> {
        let mut c = Counts {
            tenants: Vec::new(),
            queued: Vec::new(),
            running: Vec::new(),
            waiting: Vec::new(),
            window: tally.window(),
            charged: Vec::new(),
            fuel: Vec::new(),
            wall_ms: Vec::new(),
            attempts: Vec::new(),
            completed: Vec::new(),
            failed: Vec::new(),
            cancelled: Vec::new(),
            http_requests: Vec::new(),
            http_bytes: Vec::new(),
            cache_hits: Vec::new(),
            fuel_saved: Vec::new(),
            at: tally.now(),
            ev_tenants: Vec::new(),
            ev_n: Vec::new(),
            ev_bodies: Vec::new(),
        };
        for (tenant, chunk) in tally.outbox.chunks() {
            c.ev_tenants.push(tenant);
            c.ev_n.push(i32::try_from(chunk.n).unwrap_or(i32::MAX));
            c.ev_bodies.push(chunk.body());
        }
        for (tenant, g) in tally.gauges() {
            c.tenants.push(tenant);
            c.queued.push(g.queued);
            c.running.push(g.running);
            c.waiting.push(g.waiting);
        }
        for (tenant, s) in tally.spent() {
            c.charged.push(tenant);
            c.fuel.push(s.fuel);
            c.wall_ms.push(s.wall_ms);
            c.attempts.push(s.attempts);
            c.completed.push(s.completed);
            c.failed.push(s.failed);
            c.cancelled.push(s.cancelled);
            c.http_requests.push(s.http_requests);
            c.http_bytes.push(s.http_bytes);
            c.cache_hits.push(s.cache_hits);
            c.fuel_saved.push(s.fuel_saved);
        }
        c
    }

    pub fn is_empty(&self) -> bool {
        self.tenants.is_empty() && self.charged.is_empty() && self.ev_tenants.is_empty()
    }

    /// Binds the arguments of `ctes`, after those already bound.
    pub fn bind<'q>(
        &'q self,
        q: Query<'q, Postgres, PgArguments>,
    ) -> Query<'q, Postgres, PgArguments> {
        q.bind(&self.tenants)
            .bind(&self.queued)
            .bind(&self.running)
            .bind(&self.waiting)
            .bind(self.window)
            .bind(&self.charged)
            .bind(&self.fuel)
            .bind(&self.wall_ms)
            .bind(&self.attempts)
            .bind(&self.completed)
            .bind(&self.failed)
            .bind(&self.cancelled)
            .bind(&self.http_requests)
            .bind(&self.http_bytes)
            .bind(&self.cache_hits)
            .bind(&self.fuel_saved)
            .bind(self.at)
            .bind(&self.ev_tenants)
            .bind(&self.ev_n)
            .bind(&self.ev_bodies)
    }
}

/// The two upserts and the events as CTEs (`gauges`, `usage`, `evs`) whose
/// `CTE_ARGS` arguments are numbered from `$first`. Rows go in the tenants' byte order (`COLLATE
/// "C"`, as the tenant columns and Rust compare), the order every other
/// write of the counters takes, so that two never wait in a cycle; every
/// statement that writes both tables is built here, so all take them in
/// one order.
pub fn ctes(first: usize) -> String {
    let p: Vec<String> = (first..first + CTE_ARGS).map(|i| format!("${i}")).collect();
    format!(
        "gauges AS (INSERT INTO tenant_jobs (tenant, shard, queued, running, waiting) \
           SELECT t, {SHARD}, q, r, w \
           FROM unnest({}::text[], {}::int8[], {}::int8[], {}::int8[]) AS g(t, q, r, w) \
           ORDER BY t COLLATE \"C\" \
           ON CONFLICT (tenant, shard) DO UPDATE SET queued = tenant_jobs.queued + excluded.queued, \
           running = tenant_jobs.running + excluded.running, \
           waiting = tenant_jobs.waiting + excluded.waiting), \
         usage AS (INSERT INTO tenant_usage (tenant, window_start, shard, fuel, wall_ms, \
           attempts, completed, failed, cancelled, http_requests, http_bytes, cache_hits, \
           fuel_saved) \
           SELECT t, {}::int8, {SHARD}, f, wm, a, c, fl, cn, hr, hb, ch, fs \
           FROM unnest({}::text[], {}::int8[], {}::int8[], {}::int8[], {}::int8[], {}::int8[], \
             {}::int8[], {}::int8[], {}::int8[], {}::int8[], {}::int8[]) \
             AS s(t, f, wm, a, c, fl, cn, hr, hb, ch, fs) \
           ORDER BY t COLLATE \"C\" \
           ON CONFLICT (tenant, window_start, shard) DO UPDATE SET \
           fuel = tenant_usage.fuel + excluded.fuel, \
           wall_ms = tenant_usage.wall_ms + excluded.wall_ms, \
           attempts = tenant_usage.attempts + excluded.attempts, \
           completed = tenant_usage.completed + excluded.completed, \
           failed = tenant_usage.failed + excluded.failed, \
           cancelled = tenant_usage.cancelled + excluded.cancelled, \
           http_requests = tenant_usage.http_requests + excluded.http_requests, \
           http_bytes = tenant_usage.http_bytes + excluded.http_bytes, \
           cache_hits = tenant_usage.cache_hits + excluded.cache_hits, \
           fuel_saved = tenant_usage.fuel_saved + excluded.fuel_saved), \
         evs AS (INSERT INTO events (tenant, n, at, body) \
           SELECT t, n, {}::int8, b FROM unnest({}::text[], {}::int4[], {}::text[]) AS e(t, n, b))",
        p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13],
        p[14], p[15], p[16], p[17], p[18], p[19]
    )
}

/// How many arguments `ctes` numbers.
pub const CTE_ARGS: usize = 20;

pub async fn apply(tx: &mut Transaction<'static, Postgres>, tally: Tally) -> StoreResult<()> {
    apply_on(tx, tally).await
}

/// `apply`, on a transaction's connection.
pub async fn apply_on(conn: &mut sqlx::PgConnection, tally: Tally) -> StoreResult<()> {
    let counts = Counts::of(&tally);
    if counts.is_empty() {
        return Ok(());
    }
    let sql = format!("WITH {} SELECT 1", ctes(1));
    counts
        .bind(sqlx::query(&sql))
        .execute(conn)
        .await
        .map_err(pg)?;
    Ok(())
}
