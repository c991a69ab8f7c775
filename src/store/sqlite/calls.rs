//! A job's orchestration calls on SQLite: read on a reader, recorded on
//! the writer.

use super::wdb;
use crate::store::call_rows::{self as sql, CallRecord};
use crate::store::StoreResult;
use rusqlite::{params, Connection};

pub fn insert(conn: &Connection, c: &CallRecord) -> StoreResult<bool> {
    let n = conn
        .prepare_cached(&sql::insert(["?1", "?2", "?3", "?4", "?5", "?6"]))
        .and_then(|mut s| {
            s.execute(params![
                c.job_id,
                c.call,
                c.kind.as_str(),
                c.task,
                c.result,
                c.created_at
            ])
        })
        .map_err(wdb)?;
    Ok(n == 1)
}
