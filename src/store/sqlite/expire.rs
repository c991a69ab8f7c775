//! Expiry on SQLite: queued jobs past their `expire_after_ms` fail with
//! kind `expired`, each with its task's `on_fail` job.

use super::jobs::{insert_one, Tenants};
use super::tally::{Apply, Tally};
use super::wdb;
use crate::job::JobStatus;
use crate::store::call_rows;
use crate::store::dialect::Dialect;
use crate::store::expire_sql::{self, Gone};
use crate::store::records::Expire;
use crate::store::transition::Move;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

/// Fails each of `jobs` still queued past its time, with its `on_fail`
/// job; answers how many.
pub fn expire(conn: &Connection, now: Millis, jobs: Vec<Expire>) -> StoreResult<u64> {
    let to = Move::expire().to;
    let error = expire_sql::error()?;
    let mut stmt = conn
        .prepare_cached(&expire_sql::expire(Dialect::Sqlite))
        .map_err(wdb)?;
    let mut gone = Vec::with_capacity(jobs.len());
    let mut on_fail = Vec::new();
    for job in jobs {
        let row: Option<Gone> = stmt
            .query_row(params![to.as_str(), now, error, job.id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .optional()
            .map_err(wdb)?;
        if let Some(row) = row {
            gone.push(row);
            on_fail.extend(job.on_fail.map(|cb| (job.id, cb)));
        }
    }
    let mut tally = Tally::new(now);
    expire_sql::tally(&mut tally, &gone);
    let (mut tenants, none) = (Tenants::default(), Tally::new(now));
    for (of, cb) in on_fail {
        let call = call_rows::callback(&of, JobStatus::Failed, &cb, now);
        insert_one(conn, now, cb, None, &mut tally, &mut tenants, &none)?;
        super::calls::insert(conn, &call)?;
    }
    tally.apply(conn)?;
    Ok(gone.len() as u64)
}
