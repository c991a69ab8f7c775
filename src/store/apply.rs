//! A transaction of writes as data (`Write`), written once for both
//! backends: each write by the code that makes it alone, counted and
//! reported together, all of them or none.

use super::exec::{Commit, Exec};
use super::insert::{self, Room};
use super::job_control::{cancel, resume, run_now};
use super::records::{Finalized, Write, Written};
use super::tally::Tally;
use super::{call_rows, finalize, schedule_rows, stages};
use super::{JobStore, Millis, StoreError, StoreResult};
use crate::quota::Quotas;

/// The writes of one transaction, in order; the first that fails fails
/// them all.
pub async fn run(
    tx: &mut dyn Exec,
    now: Millis,
    writes: Vec<Write>,
    defaults: &Quotas,
) -> StoreResult<Vec<Written>> {
    let mut tally = Tally::new(now);
    let mut out = Vec::with_capacity(writes.len());
    for w in writes {
        out.push(match w {
            Write::JobInsert(job) => {
                let (mut room, none) = (Room::new(defaults), Tally::new(now));
                let room = Some((&mut room, &none));
                Written::JobInserted(insert::one(tx, now, job, room, &mut tally).await?)
            }
            Write::JobFinalize(f) => match finalize::item(tx, now, &f, &mut tally, true).await? {
                Finalized::Done(status) => Written::JobFinalized(status),
                Finalized::Fenced => return Err(StoreError::Fenced),
            },
            Write::JobCancel { tenant, id } => {
                Written::JobCancelled(cancel(tx, now, &tenant, &id).await?)
            }
            Write::JobResume { tenant, id, input } => {
                Written::JobResumed(resume(tx, now, &tenant, &id, input).await?)
            }
            Write::JobRunNow { tenant, id } => {
                Written::JobRanNow(run_now(tx, now, &tenant, &id).await?)
            }
            Write::SchedulePut(w) => Written::SchedulePut(schedule_rows::put(tx, now, w).await?),
            Write::WorkflowStart(w) => {
                Written::WorkflowStarted(stages::start(tx, now, &w, &mut tally.outbox).await?)
            }
            Write::JobCancelStages(c) => Written::JobCancelled(stages::cancel(tx, now, &c).await?),
            Write::JobCall(c) => Written::JobCallRecorded(call_rows::record(tx, &c).await?),
        });
    }
    tx.tally(tally).await?;
    Ok(out)
}

impl dyn JobStore {
    /// Applies the writes in order, in one transaction: all of them, or
    /// none when one fails (its error is the answer). What needs "these
    /// changes together" (a callback enqueued with the state it reports, a
    /// workflow step's result with its child jobs) is a list of writes.
    /// Unlike the batch calls, nothing here is partial: an insert refused,
    /// or a finalize fenced out (`StoreError::Fenced`), undoes every write
    /// before it.
    pub async fn apply(&self, writes: Vec<Write>) -> StoreResult<Vec<Written>> {
        let defaults = self.defaults();
        let out = self
            .write(Commit::PROMPT, move |tx, now| {
                Box::pin(async move { run(tx, now, writes, &defaults).await })
            })
            .await;
        self.jobs_changed();
        out
    }

    /// Creates or replaces a schedule (`SchedulePut`, against its rev),
    /// within the tenant's `MAX_SCHEDULES`; a slot's job goes with the
    /// put through `apply`.
    pub async fn schedule_put(
        &self,
        w: super::records::SchedulePut,
    ) -> StoreResult<super::records::ScheduleRecord> {
        match self.apply(vec![Write::SchedulePut(w)]).await?.pop() {
            Some(Written::SchedulePut(r)) => Ok(r),
            _ => Err(StoreError::Internal(
                "a schedule put answered no schedule".into(),
            )),
        }
    }
}
