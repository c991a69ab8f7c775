//! Claimed jobs marked begun on SQLite: one prepared statement run per
//! job on the writer's own thread, which costs less there than any
//! batching trick (PostgreSQL marks a batch in one statement).

use super::wdb;
use crate::store::StoreResult;
use rusqlite::{params, Connection};

/// Marks claimed jobs begun, each under its lease token.
pub fn begin(conn: &Connection, begun: &[(String, String)]) -> StoreResult<()> {
    let mut stmt = conn
        .prepare_cached(
            "UPDATE jobs SET begun = 1 \
             WHERE id = ?1 AND lease_token = ?2 AND status = 'running'",
        )
        .map_err(wdb)?;
    for (id, token) in begun {
        stmt.execute(params![id, token]).map_err(wdb)?;
    }
    Ok(())
}
