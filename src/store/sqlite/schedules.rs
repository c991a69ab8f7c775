//! Cron schedules on SQLite: puts and deletes on the writer's connection
//! (a put is a `Write`, so a slot's job is written with it), reads on a
//! reader's.

use super::{shared, wdb};
use crate::store::schedule_rows::{self as sql, PutParams};
use crate::store::{Millis, SchedulePut, ScheduleRecord, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

fn q(i: usize) -> String {
    format!("?{i}")
}

/// Creates or replaces a schedule (`SchedulePut`).
pub fn put(conn: &Connection, now: Millis, w: SchedulePut) -> StoreResult<ScheduleRecord> {
    let p = PutParams::from(&w);
    let values = params![
        p.tenant,
        p.name,
        p.spec,
        p.enabled,
        p.due_at,
        p.next_at,
        p.last_slot,
        p.last_job,
        p.pending,
        p.pending_slot,
        p.buffered,
        p.fired,
        p.skipped,
        p.last_error,
        now
    ];
    match w.rev {
        None => {
            let have: i64 = shared(conn, sql::COUNT)?
                .query_row([&w.tenant], |r| r.get(0))
                .map_err(wdb)?;
            sql::check_room(have)?;
            let n = conn
                .prepare_cached(&sql::insert(q))
                .and_then(|mut s| s.execute(values))
                .map_err(wdb)?;
            if n == 0 {
                return Err(sql::conflict(&w));
            }
            Ok(w.into_record(1, now, now))
        }
        Some(rev) => {
            let mut all: Vec<&dyn rusqlite::ToSql> = values.to_vec();
            all.push(&rev);
            let row: Option<(i64, i64)> = conn
                .prepare_cached(&sql::update(q))
                .and_then(|mut s| {
                    s.query_row(all.as_slice(), |r| Ok((r.get(0)?, r.get(1)?)))
                        .optional()
                })
                .map_err(wdb)?;
            match row {
                Some((rev, created_at)) => Ok(w.into_record(rev, created_at, now)),
                None => Err(sql::conflict(&w)),
            }
        }
    }
}
