//! Writes a write's per-tenant counts and events (`store::tally`) on
//! SQLite, in its transaction: one row update per tenant per write, and
//! one event row per tenant, numbered as it is written (the one writer
//! commits rows in the order it writes them).

use super::wdb;
pub use crate::store::tally::Tally;
use crate::store::StoreResult;
use rusqlite::{params, Connection};
use std::cell::Cell;

thread_local! {
    /// The writer's batch wrote event rows: once committed, and synced, they
    /// may be read (`writer` moves the readable mark).
    static WROTE_EVENTS: Cell<bool> = const { Cell::new(false) };
}

/// Whether the batch running on this thread wrote events; resets it.
pub(super) fn take_wrote_events() -> bool {
    WROTE_EVENTS.with(|w| w.replace(false))
}

/// A tally written on the writer's connection.
pub trait Apply {
    /// Writes the counts; part of the write, so undone with it.
    fn apply(self, conn: &Connection) -> StoreResult<()>;
}

impl Apply for Tally {
    fn apply(self, conn: &Connection) -> StoreResult<()> {
        let (gauges, spent) = (self.gauges(), self.spent());
        if !gauges.is_empty() {
            let mut stmt = conn
                .prepare_cached(
                    "INSERT INTO tenant_jobs (tenant, queued, running, waiting) VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT (tenant) DO UPDATE SET queued = queued + excluded.queued, \
                     running = running + excluded.running, waiting = waiting + excluded.waiting",
                )
                .map_err(wdb)?;
            for (tenant, g) in &gauges {
                stmt.execute(params![tenant, g.queued, g.running, g.waiting])
                    .map_err(wdb)?;
            }
        }
        if !spent.is_empty() {
            let mut stmt = conn
                .prepare_cached(
                    "INSERT INTO tenant_usage (tenant, window_start, fuel, wall_ms, attempts, \
                     completed, failed, cancelled, http_requests, http_bytes, cache_hits, fuel_saved) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) \
                     ON CONFLICT (tenant, window_start) DO UPDATE SET fuel = fuel + excluded.fuel, \
                     wall_ms = wall_ms + excluded.wall_ms, attempts = attempts + excluded.attempts, \
                     completed = completed + excluded.completed, failed = failed + excluded.failed, \
                     cancelled = cancelled + excluded.cancelled, \
                     http_requests = http_requests + excluded.http_requests, \
                     http_bytes = http_bytes + excluded.http_bytes, \
                     cache_hits = cache_hits + excluded.cache_hits, \
                     fuel_saved = fuel_saved + excluded.fuel_saved",
                )
                .map_err(wdb)?;
            for (tenant, s) in &spent {
                stmt.execute(params![
                    tenant,
                    self.window(),
                    s.fuel,
                    s.wall_ms,
                    s.attempts,
                    s.completed,
                    s.failed,
                    s.cancelled,
                    s.http_requests,
                    s.http_bytes,
                    s.cache_hits,
                    s.fuel_saved
                ])
                .map_err(wdb)?;
            }
        }
        let chunks = self.outbox.chunks();
        if !chunks.is_empty() {
            let mut head = conn
                .prepare_cached(
                    "INSERT INTO event_heads (tenant, seq) VALUES (?1, ?2) \
                     ON CONFLICT (tenant) DO UPDATE SET seq = seq + excluded.seq RETURNING seq",
                )
                .map_err(wdb)?;
            let mut row = conn
                .prepare_cached(
                    "INSERT INTO events (tenant, seq, n, at, body) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(wdb)?;
            for (tenant, c) in chunks {
                let seq: i64 = head
                    .query_row(params![tenant, c.n], |r| r.get(0))
                    .map_err(wdb)?;
                row.execute(params![tenant, seq, c.n, self.now(), c.body()])
                    .map_err(wdb)?;
            }
            WROTE_EVENTS.with(|w| w.set(true));
        }
        Ok(())
    }
}
