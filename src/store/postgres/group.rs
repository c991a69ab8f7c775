//! Enqueues of one plain job each (no key to lock), from many requests at
//! once, committed together: each caller leaves its job in a shared line; whoever holds one
//! of a few leads takes the whole line into one transaction (`bulk.rs`
//! makes plain jobs one INSERT), and every caller gets its own job's
//! answer. One transaction per request cost a pool's worth of round trips
//! per commit; a flood of API enqueues now costs a few per batch.

use super::db::Db;
use super::exec::PgExec;
use super::{bulk, jobs};
use crate::store::insert;
use crate::store::records::{Inserted, NewJob};
use crate::store::{StoreError, StoreResult};
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, Semaphore};

/// Batches written at once: each holds a connection while it runs. On this
/// 2-core machine 2 took ~12,200 enqueues/s, 4 ~11,400, 8 ~9,800.
const LEADS: usize = 2;
/// Most jobs in one batch.
const MAX_BATCH: usize = 1024;

type Waiting = (NewJob, oneshot::Sender<StoreResult<Inserted>>);

pub struct Group {
    line: Mutex<Vec<Waiting>>,
    leads: Arc<Semaphore>,
}

impl Default for Group {
    fn default() -> Self {
        Group {
            line: Mutex::new(Vec::new()),
            leads: Arc::new(Semaphore::new(LEADS)),
        }
    }
}

impl Group {
    /// Inserts one job, with whatever others are waiting.
    pub async fn insert(&self, db: &Db, job: NewJob) -> StoreResult<Inserted> {
        let (tx, mut rx) = oneshot::channel();
        self.lock().push((job, tx));
        loop {
            tokio::select! {
                biased;
                r = &mut rx => return answered(r),
                lead = self.leads.clone().acquire_owned() => {
                    let Ok(lead) = lead else {
                        return Err(StoreError::Unavailable("the store is closed".into()));
                    };
                    let batch: Vec<Waiting> = {
                        let mut line = self.lock();
                        let n = line.len().min(MAX_BATCH);
                        line.drain(..n).collect()
                    };
                    if batch.is_empty() {
                        // Another lead took this job: its answer comes.
                        drop(lead);
                        return answered(rx.await);
                    }
                    // Its own task: a caller that goes away (a client that
                    // hung up) must not cancel the others' commit.
                    let db = db.clone();
                    tokio::spawn(async move {
                        let _lead = lead;
                        write(&db, batch).await;
                    });
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Waiting>> {
        self.line.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn answered(r: Result<StoreResult<Inserted>, oneshot::error::RecvError>) -> StoreResult<Inserted> {
    r.unwrap_or_else(|_| {
        Err(StoreError::Unavailable(
            "the enqueue's batch was lost".into(),
        ))
    })
}

/// One transaction for the batch; each job's answer to its caller. A
/// failed transaction fails every job in it (none was written).
async fn write(db: &Db, batch: Vec<Waiting>) {
    let (jobs, callers): (Vec<NewJob>, Vec<_>) = batch.into_iter().unzip();
    let n = jobs.len();
    let t0 = std::time::Instant::now();
    let result = async {
        // One round trip, when no id is taken.
        if let Some(answers) = bulk::insert_now(db, &jobs).await? {
            return Ok(answers);
        }
        let (mut tx, now) = db.begin().await?;
        let r = if n == 1 {
            let job = jobs.into_iter().next().ok_or(StoreError::NotFound)?;
            let alone = insert::alone(&mut PgExec(&mut tx), now, job, &db.defaults).await;
            match alone {
                Ok(i) => vec![Ok(i)],
                Err(e) => {
                    let _ = tx.rollback().await;
                    return Ok(vec![Err(e)]);
                }
            }
        } else {
            jobs::insert(&mut tx, now, jobs, db.defaults).await?
        };
        tx.commit().await.map_err(super::pg)?;
        Ok::<_, StoreError>(r)
    }
    .await;
    match result {
        Ok(answers) => {
            crate::metrics::get().committed("postgres", "insert", n, t0.elapsed());
            for (caller, a) in callers.into_iter().zip(answers) {
                let _ = caller.send(a);
            }
        }
        Err(e) => {
            for caller in callers {
                let _ = caller.send(Err(e.clone()));
            }
        }
    }
}
