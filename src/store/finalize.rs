//! Attempts' ends, written once for both backends: each job's move
//! (`ending_sql`) fenced by its lease token, its attempt (on the job's row
//! or one of its own, `ending`), its callbacks and workflow stages, and
//! what it cost its tenant. PostgreSQL writes a batch of one shape in one
//! statement first (`postgres::finalize::many`); this is the rest.

use super::attempt_sql;
use super::ending::Ending;
use super::ending_sql::{self, ending};
use super::exec::{args, Arg, Exec};
use super::records::landing;
use super::records::{AttemptRecord, Finalize, Finalized};
use super::rows::to_json;
use super::tally::Tally;
use super::transition::Move;
use super::{insert, stages, Millis, StoreError, StoreResult};
use crate::job::JobStatus;

/// Writes each attempt's end and their counts; the first that cannot be
/// written fails them all (the caller writes them again on their own).
pub async fn all(
    tx: &mut dyn Exec,
    now: Millis,
    batch: &[Finalize],
) -> StoreResult<Vec<Finalized>> {
    let mut tally = Tally::new(now);
    let mut out = Vec::with_capacity(batch.len());
    for f in batch {
        out.push(item(tx, now, f, &mut tally, true).await?);
    }
    tx.tally(tally).await?;
    Ok(out)
}

/// One attempt's end with its counts, with its log or without.
pub async fn alone(
    tx: &mut dyn Exec,
    now: Millis,
    f: &Finalize,
    with_log: bool,
) -> StoreResult<Finalized> {
    let mut tally = Tally::new(now);
    let r = item(tx, now, f, &mut tally, with_log).await?;
    tx.tally(tally).await?;
    Ok(r)
}

/// Writes the batch in a savepoint; if it fails as a whole, each end in a
/// savepoint of its own, as it is, else without its log; if even that
/// fails, nothing of it is written (the lease runs out and the rescuer
/// decides the attempt). For a backend that runs several writes in one
/// transaction (SQLite's group commit).
pub async fn in_savepoints(
    tx: &mut dyn Exec,
    now: Millis,
    batch: &[Finalize],
) -> StoreResult<Vec<Finalized>> {
    tx.execute("SAVEPOINT finalize", &[]).await?;
    let e = match all(tx, now, batch).await {
        Ok(out) => {
            tx.execute("RELEASE SAVEPOINT finalize", &[]).await?;
            return Ok(out);
        }
        Err(e) => e,
    };
    tx.execute("ROLLBACK TO SAVEPOINT finalize", &[]).await?;
    tx.execute("RELEASE SAVEPOINT finalize", &[]).await?;
    tracing::warn!(error = %e, jobs = batch.len(), "a finalize batch failed; writing its jobs one by one");
    let mut out = Vec::with_capacity(batch.len());
    'job: for f in batch {
        for with_log in [true, false] {
            tx.execute("SAVEPOINT one", &[]).await?;
            match alone(tx, now, f, with_log).await {
                Ok(r) => {
                    tx.execute("RELEASE SAVEPOINT one", &[]).await?;
                    out.push(r);
                    continue 'job;
                }
                Err(e) => {
                    tx.execute("ROLLBACK TO SAVEPOINT one", &[]).await?;
                    tx.execute("RELEASE SAVEPOINT one", &[]).await?;
                    tracing::warn!(job = %f.id, with_log, error = %e, "an attempt's end could not be written");
                }
            }
        }
        out.push(Finalized::Fenced);
    }
    Ok(out)
}

/// One attempt's end, its counts into `tally`.
pub async fn item(
    tx: &mut dyn Exec,
    now: Millis,
    f: &Finalize,
    tally: &mut Tally,
    with_log: bool,
) -> StoreResult<Finalized> {
    if let Some(u) = &f.usage {
        tally.charge(&f.tenant, u);
    }
    let end = Ending::of(f, with_log)?;
    let mv = end.job_move();
    let Some(status) = move_job(tx, now, f, &mv).await? else {
        return Ok(Finalized::Fenced);
    };
    if !f.steps.is_empty() {
        stages::write(tx, now, &f.id, &landing(&f.steps, status)).await?;
    }
    tally.landed(f, status);
    if let Some(cb) = f.callbacks.as_ref().and_then(|c| c.landing(status)) {
        insert::callback(tx, now, &f.id, status, cb, tally).await?;
    }
    if let Some((a, log)) = end.attempt_row(&mv) {
        attempt(tx, &f.id, a, log).await?;
    }
    Ok(Finalized::Done(status))
}

/// An attempt's row of its own.
async fn attempt(
    tx: &mut dyn Exec,
    job_id: &str,
    a: &AttemptRecord,
    log: Option<&str>,
) -> StoreResult<()> {
    let (error, network) = (
        a.error.as_ref().map(to_json),
        a.network.as_ref().map(to_json),
    );
    let args = args![
        job_id,
        a.attempt,
        &a.task.name,
        a.task.version,
        &a.task.digest,
        a.started_at,
        a.finished_at,
        &a.outcome,
        &error,
        i64::try_from(a.fuel_used).unwrap_or(i64::MAX),
        i64::try_from(a.peak_memory_bytes).unwrap_or(i64::MAX),
        log,
        &network
    ];
    tx.execute(&attempt_sql::INSERT, args).await?;
    Ok(())
}

/// An argument of `ending_sql` as `Exec` binds it.
fn bound<'a>(a: &'a ending_sql::Arg<'_>) -> Arg<'a> {
    match a {
        ending_sql::Arg::Text(t) => Arg::Text(Some(t)),
        ending_sql::Arg::Owned(t) => Arg::Text(Some(t)),
        ending_sql::Arg::Int(i) => Arg::Int(Some(*i)),
        ending_sql::Arg::Bool(b) => Arg::Bool(Some(*b)),
        ending_sql::Arg::OptText(t) => Arg::Text(t.as_deref()),
    }
}

/// Writes an attempt's end as its move says (`ending_sql`): the job's new
/// status, or `None` when the lease or its status fenced it out.
async fn move_job(
    tx: &mut dyn Exec,
    now: Millis,
    f: &Finalize,
    mv: &Move<'_>,
) -> StoreResult<Option<JobStatus>> {
    let (sql, args) = ending(mv, tx.dialect(), now, &f.id, &f.lease_token);
    let args: Vec<_> = args.iter().map(bound).collect();
    if !mv.cancel_wins {
        let n = tx.execute(&sql, &args).await?;
        return Ok((n == 1).then_some(mv.to));
    }
    let status: Option<String> = tx.scalar(&sql, &args).await?;
    status
        .map(|s| s.parse::<JobStatus>().map_err(StoreError::Internal))
        .transpose()
}
