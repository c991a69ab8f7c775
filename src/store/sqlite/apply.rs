//! A transaction of writes as data (`JobStore::apply`) on SQLite: each
//! write by the code that makes it alone, in one savepoint of the writer's
//! batch, counted and reported together.

use super::finalize::finalize_item;
use super::jobs::{cancel, insert_one, resume, run_now, Tenants};
use super::tally::{Apply, Tally};
use crate::quota::Quotas;
use crate::store::records::*;
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::Connection;

/// The writes of one transaction, in order; the first that fails fails
/// them all (the caller's savepoint undoes what went before).
pub fn apply(
    conn: &Connection,
    now: Millis,
    writes: Vec<Write>,
    defaults: &Quotas,
) -> StoreResult<Vec<Written>> {
    let mut tally = Tally::new(now);
    let mut out = Vec::with_capacity(writes.len());
    for w in writes {
        out.push(match w {
            Write::JobInsert(job) => {
                let (mut tenants, none) = (Tenants::default(), Tally::new(now));
                Written::JobInserted(insert_one(
                    conn,
                    now,
                    job,
                    Some(defaults),
                    &mut tally,
                    &mut tenants,
                    &none,
                )?)
            }
            Write::JobFinalize(f) => match finalize_item(conn, now, &f, &mut tally, true)? {
                Finalized::Done(status) => Written::JobFinalized(status),
                Finalized::Fenced => return Err(StoreError::Fenced),
            },
            Write::JobCancel { tenant, id } => {
                Written::JobCancelled(cancel(conn, now, &tenant, &id)?)
            }
            Write::JobResume { tenant, id, input } => {
                Written::JobResumed(resume(conn, now, &tenant, &id, input)?)
            }
            Write::JobRunNow { tenant, id } => {
                Written::JobRanNow(run_now(conn, now, &tenant, &id)?)
            }
            Write::SchedulePut(w) => Written::SchedulePut(super::schedules::put(conn, now, w)?),
            Write::WorkflowStart(w) => {
                Written::WorkflowStarted(super::steps::start(conn, now, &w, &mut tally.outbox)?)
            }
            Write::JobCancelStages(c) => {
                Written::JobCancelled(super::steps::cancel(conn, now, &c)?)
            }
            Write::JobCall(c) => Written::JobCallRecorded(super::calls::insert(conn, &c)?),
        });
    }
    tally.apply(conn)?;
    Ok(out)
}
