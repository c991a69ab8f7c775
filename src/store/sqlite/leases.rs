//! Named leases on SQLite: taken, renewed and dropped on the writer (read
//! by a reader, in `mod.rs`). Here the process owns the database alone, so it always
//! gets its leases; the rows keep the seam's one meaning for both backends.

use super::wdb;
use crate::store::lease_sql;
use crate::store::{Lease, LeaseRow, Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension, Row};

fn lease(r: &Row<'_>) -> rusqlite::Result<Lease> {
    let row: LeaseRow = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
    Ok(row.into())
}

/// Takes or renews the lease until `expires_at` (`JobStore::lease_take`).
pub fn take(
    conn: &Connection,
    now: Millis,
    name: &str,
    holder: &str,
    expires_at: Millis,
) -> StoreResult<Option<Lease>> {
    conn.prepare_cached(&lease_sql::take(["?1", "?2", "?3", "?4"]))
        .and_then(|mut s| {
            s.query_row(params![name, holder, now, expires_at], lease)
                .optional()
        })
        .map_err(wdb)
}

/// Expires the lease now if `holder` holds it.
pub fn drop(conn: &Connection, now: Millis, name: &str, holder: &str) -> StoreResult<bool> {
    conn.prepare_cached(&lease_sql::drop(["?1", "?2", "?3"]))
        .and_then(|mut s| s.execute(params![name, holder, now]))
        .map(|n| n == 1)
        .map_err(wdb)
}
