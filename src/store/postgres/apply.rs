//! A transaction of writes as data (`JobStore::apply`) on PostgreSQL:
//! each write by the code that makes it alone, in the caller's
//! transaction, counted and reported together.

use super::db::Tx;
use super::exec::PgExec;
use super::finalize::finalize_item;
use super::jobs::insert_one;
use super::tally;
use crate::quota::Quotas;
use crate::store::job_control::{cancel, resume, run_now};
use crate::store::records::*;
use crate::store::tally::Tally;
use crate::store::{Millis, StoreError, StoreResult};

/// The writes of one transaction, in order; the first that fails fails
/// them all.
pub async fn apply(
    tx: &mut Tx,
    now: Millis,
    writes: Vec<Write>,
    defaults: Quotas,
) -> StoreResult<Vec<Written>> {
    let mut tally = Tally::new(now);
    let mut out = Vec::with_capacity(writes.len());
    for w in writes {
        out.push(match w {
            Write::JobInsert(job) => {
                Written::JobInserted(insert_one(tx, now, job, Some(&defaults), &mut tally).await?)
            }
            Write::JobFinalize(f) => match finalize_item(tx, now, &f, &mut tally, true).await? {
                Finalized::Done(status) => Written::JobFinalized(status),
                Finalized::Fenced => return Err(StoreError::Fenced),
            },
            Write::JobCancel { tenant, id } => {
                Written::JobCancelled(cancel(&mut PgExec(&mut *tx), now, &tenant, &id).await?)
            }
            Write::JobResume { tenant, id, input } => {
                Written::JobResumed(resume(&mut PgExec(&mut *tx), now, &tenant, &id, input).await?)
            }
            Write::JobRunNow { tenant, id } => {
                Written::JobRanNow(run_now(&mut PgExec(&mut *tx), now, &tenant, &id).await?)
            }
            Write::SchedulePut(w) => Written::SchedulePut(super::schedules::put(tx, now, w).await?),
            Write::WorkflowStart(w) => {
                Written::WorkflowStarted(super::steps::start(tx, now, &w, &mut tally.outbox).await?)
            }
            Write::JobCancelStages(c) => {
                Written::JobCancelled(super::steps::cancel(tx, now, &c).await?)
            }
            Write::JobCall(c) => Written::JobCallRecorded(super::calls::insert(tx, &c).await?),
        });
    }
    tally::apply(tx, tally).await?;
    Ok(out)
}
