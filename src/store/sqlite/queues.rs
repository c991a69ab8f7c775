//! Paused queues as SQLite's claim reads them (the pause itself is
//! written once for both backends, `store::queues`).

use super::wdb;
use crate::store::{queues, StoreResult};
use rusqlite::Connection;

/// A tenant's paused queues, by name.
pub fn paused(conn: &Connection, tenant: &str) -> StoreResult<Vec<String>> {
    super::shared(conn, queues::PAUSED)?
        .query_map([tenant], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(wdb)
}
