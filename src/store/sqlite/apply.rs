//! A transaction of writes as data (`JobStore::apply`) on SQLite: each
//! write by the code that makes it alone, in one savepoint of the writer's
//! batch, counted and reported together.

use super::exec::{block, WriterExec};
use super::finalize::finalize_item;
use super::jobs::{insert_one, Tenants};
use super::tally::{Apply, Tally};
use crate::quota::Quotas;
use crate::store::job_control::{cancel, resume, run_now};
use crate::store::records::*;
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::Connection;

/// The writes of one transaction, in order; the first that fails fails
/// them all (the caller's savepoint undoes what went before).
pub fn apply(
    conn: &mut Connection,
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
                let tx = &mut WriterExec { conn };
                Written::JobCancelled(block(cancel(tx, now, &tenant, &id))?)
            }
            Write::JobResume { tenant, id, input } => {
                let tx = &mut WriterExec { conn };
                Written::JobResumed(block(resume(tx, now, &tenant, &id, input))?)
            }
            Write::JobRunNow { tenant, id } => {
                let tx = &mut WriterExec { conn };
                Written::JobRanNow(block(run_now(tx, now, &tenant, &id))?)
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
