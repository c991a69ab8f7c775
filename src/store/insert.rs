//! An enqueue, written once for both backends: each job under its rules
//! (idempotency key, unique key, superseding key, debounce, result cache,
//! its tenant's `max_queued`), the statements from `insert_sql`, the
//! counts and events in one `Tally` for the batch.

use super::exec::{args, Arg, DbError, Exec};
use super::insert_sql;
use super::outbox::{self, About};
use super::records::*;
use super::rows::{to_json, JobRow};
use super::tally::Tally;
use super::tenants::{hold, policy_from, within};
use super::transition::Move;
use super::{call_rows, debounce, Millis, StoreError, StoreResult};
use crate::events::EventType;
use crate::job::{ErrorKind, JobError, JobStatus};
use crate::quota::Quotas;
use std::collections::HashMap;

/// Inserts jobs, each under its own rules: one refused does not undo the
/// others, nor is anything it changed kept (a superseding job that is
/// refused cancels nothing). A job whose refusal could leave a write
/// behind, or any job where a failed statement spoils the transaction
/// (PostgreSQL), goes under a savepoint; elsewhere a plain insert is one
/// statement that writes nothing when it fails.
pub async fn insert(
    tx: &mut dyn Exec,
    now: Millis,
    jobs: Vec<NewJob>,
    defaults: &Quotas,
) -> StoreResult<Vec<StoreResult<Inserted>>> {
    let mut out = Vec::with_capacity(jobs.len());
    let mut batch = Tally::new(now);
    let mut room = Room::new(defaults);
    let aborts = tx.dialect().runs_writes_together();
    for job in jobs {
        let savepoint =
            aborts || (job.supersedes && job.concurrency_key.is_some()) || job.debounce.is_some();
        if savepoint {
            tx.execute("SAVEPOINT job", &[]).await?;
        }
        // A refused job's counts go with it.
        let mut own = Tally::new(now);
        let r = one(tx, now, job, Some((&mut room, &batch)), &mut own).await;
        match (&r, savepoint) {
            (Ok(_), true) => {
                tx.execute("RELEASE SAVEPOINT job", &[]).await?;
            }
            (Err(_), true) => {
                tx.execute("ROLLBACK TO SAVEPOINT job", &[]).await?;
                tx.execute("RELEASE SAVEPOINT job", &[]).await?;
            }
            _ => {}
        }
        if r.is_ok() {
            batch.absorb(own);
        }
        out.push(r);
    }
    tx.tally(batch).await?;
    Ok(out)
}

/// One job in a write of its own: its refusal is the write's error, so
/// that nothing of the write stands.
pub async fn alone(
    tx: &mut dyn Exec,
    now: Millis,
    job: NewJob,
    defaults: &Quotas,
) -> StoreResult<Inserted> {
    let mut tally = Tally::new(now);
    let before = Tally::new(now);
    let inserted = one(
        tx,
        now,
        job,
        Some((&mut Room::new(defaults), &before)),
        &mut tally,
    )
    .await?;
    tx.tally(tally).await?;
    Ok(inserted)
}

/// A job's callback for the status it landed in (`of` ended `status`),
/// with the call that says whose it is. Not held to `max_queued`: it
/// comes of a job already granted.
pub async fn callback(
    tx: &mut dyn Exec,
    now: Millis,
    of: &str,
    status: JobStatus,
    cb: &NewJob,
    tally: &mut Tally,
) -> StoreResult<()> {
    one(tx, now, cb.clone(), None, tally).await?;
    call_rows::record(tx, &call_rows::callback(of, status, cb, now)).await?;
    Ok(())
}

/// What a batch of inserts reads once per tenant: its quotas and its jobs
/// queued before the batch (the batch's own are in its tally). Read
/// unlocked on PostgreSQL: two enqueues of one tenant at once may both
/// pass `max_queued` by one, so a tenant overshoots it by at most as many
/// enqueues as it has in flight (bounded by the processes' pools).
pub struct Room<'a> {
    defaults: &'a Quotas,
    seen: HashMap<String, (Quotas, i64)>,
}

impl<'a> Room<'a> {
    pub fn new(defaults: &'a Quotas) -> Room<'a> {
        Room {
            defaults,
            seen: HashMap::new(),
        }
    }

    /// Whether one more of `tenant`'s jobs fits under its `max_queued`,
    /// with the jobs these tallies (of this write, not yet written) add.
    pub async fn admit(
        &mut self,
        tx: &mut dyn Exec,
        tenant: &str,
        pending: &[&Tally],
    ) -> StoreResult<()> {
        let (quotas, queued) = self.of(tx, tenant).await?;
        let pending: i64 = pending.iter().map(|t| t.pending_queued(tenant)).sum();
        within("max_queued", quotas.max_queued, queued + pending, 1)
    }

    async fn of(&mut self, tx: &mut dyn Exec, tenant: &str) -> StoreResult<(Quotas, i64)> {
        if let Some(t) = self.seen.get(tenant) {
            return Ok(*t);
        }
        let (weight, quotas, queued): (Option<i64>, Option<String>, Option<i64>) =
            tx.optional(ROOM, args![tenant]).await?.unwrap_or_default();
        let quotas = policy_from(tenant, Some((weight, quotas)), self.defaults)?.quotas;
        let t = (quotas, queued.unwrap_or(0));
        self.seen.insert(tenant.to_owned(), t);
        Ok(t)
    }
}

/// A tenant's settings (`tenants::POLICY`'s columns, NULL where it has
/// none) and its queued and waiting jobs, its counters' stripes summed, in
/// one statement.
const ROOM: &str = "SELECT CAST(t.weight AS BIGINT), t.quotas, \
       (SELECT CAST(coalesce(sum(queued + waiting), 0) AS BIGINT) \
        FROM tenant_jobs WHERE tenant = $1) \
     FROM (SELECT 1 AS one) o LEFT JOIN tenants t ON t.name = $1";

/// One job under its rules, its counts and events into `tally`. `room`
/// holds it to its tenant's `max_queued` (with the batch's counts so far);
/// `None` for a callback, which comes of a job already granted.
pub async fn one(
    tx: &mut dyn Exec,
    now: Millis,
    mut job: NewJob,
    room: Option<(&mut Room<'_>, &Tally)>,
    tally: &mut Tally,
) -> StoreResult<Inserted> {
    let d = tx.dialect();
    hold_keys(tx, &job).await?;
    if let Some(idem) = &job.idempotency {
        let seen: Option<JobRow> = tx
            .optional(&insert_sql::idempotent(d), args![&job.tenant, &idem.key])
            .await?;
        if let Some(row) = seen {
            let hash = row.idempotency_hash.clone();
            return idem.repeat(hash.as_deref(), row.try_into()?);
        }
    }
    if let Some(key) = &job.unique_key {
        let holder: Option<JobRow> = tx
            .optional(&insert_sql::unique_holder(d), args![&job.tenant, key])
            .await?;
        let holder = holder.map(JobRecord::try_from).transpose()?;
        let finished = if holder.is_none() && job.reuse != Reuse::Allow {
            let (any, completed): (bool, bool) = tx
                .optional(&insert_sql::unique_finished(d), args![&job.tenant, key])
                .await?
                .unwrap_or_default();
            FinishedWithKey { any, completed }
        } else {
            FinishedWithKey::default()
        };
        if let Some(existing) = job.unique_verdict(holder, finished)? {
            return Ok(existing);
        }
    }
    supersede(tx, now, &job, tally).await?;
    let run_at = settle_debounce(tx, now, &mut job, tally).await?;
    if let Some(source) = cache_source(tx, now, run_at, &job).await? {
        return insert_cached(tx, now, run_at, job, source, tally).await;
    }
    if let Some((room, before)) = room {
        room.admit(tx, &job.tenant, &[before, tally]).await?;
    }
    insert_row(tx, now, run_at, &job, insert_sql::insert_one(d), &[]).await?;
    tally.moved(&job.tenant, None, Some(JobStatus::Queued), 1);
    tally.outbox.push(
        EventType::Queued,
        About {
            id: &job.id,
            tenant: &job.tenant,
            task: &job.task.name,
            queue: &job.queue,
            attempt: 0,
        },
        outbox::enqueued(run_at, now).as_deref(),
    );
    Ok(Inserted::Created(job.into_record(now, run_at)))
}

/// Holds the job's keys (`tenants::hold`), so that enqueues of one key see
/// each other's job: the second waits for the first's commit, then finds
/// it (`use_existing` answers it rather than a unique index's refusal).
async fn hold_keys(tx: &mut dyn Exec, job: &NewJob) -> StoreResult<()> {
    if !tx.dialect().runs_writes_together() {
        return Ok(());
    }
    if let Some(idem) = &job.idempotency {
        hold(tx, &job.tenant, &format!("idempotency/{}", idem.key)).await?;
    }
    if let (true, Some(key)) = (job.supersedes, &job.concurrency_key) {
        hold(tx, &job.tenant, &format!("supersedes/{key}")).await?;
    }
    if let Some(d) = &job.debounce {
        hold(tx, &job.tenant, &format!("debounce/{}", d.spec.key)).await?;
    }
    if let Some(key) = &job.unique_key {
        hold(tx, &job.tenant, &format!("unique/{key}")).await?;
    }
    Ok(())
}

/// Cancels the unfinished jobs of a superseding job's concurrency key.
async fn supersede(
    tx: &mut dyn Exec,
    now: Millis,
    job: &NewJob,
    tally: &mut Tally,
) -> StoreResult<()> {
    let (true, Some(key)) = (job.supersedes, &job.concurrency_key) else {
        return Ok(());
    };
    let error = to_json(&JobError::with_code(
        ErrorKind::TaskFailed,
        "superseded",
        format!("superseded by job {}", job.id),
    ));
    let sql = insert_sql::supersede(tx.dialect());
    let mv = Move::cancel();
    for &from in mv.from {
        let gone: Vec<(String, String, String, i64)> = tx
            .all(
                &sql,
                args![mv.to.as_str(), now, &error, &job.tenant, key, from.as_str()],
            )
            .await?;
        tally.moved(&job.tenant, Some(from), Some(mv.to), count(&gone));
        tally.outbox.superseded(&job.tenant, &job.id, &gone);
    }
    Ok(())
}

fn count<T>(rows: &[T]) -> i64 {
    i64::try_from(rows.len()).unwrap_or(i64::MAX)
}

/// The job's `run_at`: as it asked, or, for a debounced job, as its chain
/// settles once it replaced its key's pending job (if one is still
/// pending: a claim may have taken it since it was read).
async fn settle_debounce(
    tx: &mut dyn Exec,
    now: Millis,
    job: &mut NewJob,
    tally: &mut Tally,
) -> StoreResult<Millis> {
    let asked = job.run_at.resolve(now);
    let Some(mut d) = job.debounce.take() else {
        return Ok(asked);
    };
    let pending: Option<(String, Option<String>)> = tx
        .optional(&debounce::PENDING, args![&job.tenant, &d.spec.key])
        .await?;
    let mut replaced = None;
    if let Some(p) = pending {
        let r = d.replace(&job.id, &p);
        let (to, from) = debounce::Replace::statuses();
        let error = to_json(&r.error);
        let gone: Vec<(String, String, String, i64)> = tx
            .all(
                debounce::END_PENDING,
                args![to.as_str(), now, &error, &r.ended, &r.id, from.as_str()],
            )
            .await?;
        if !gone.is_empty() {
            tally.moved(&job.tenant, Some(from), Some(to), count(&gone));
            tally.outbox.debounced(&job.tenant, &job.id, &gone);
            replaced = Some(p);
        }
    }
    let run_at = d.settle(now, asked, replaced);
    job.debounce = Some(d);
    Ok(run_at)
}

/// Writes a new job's row by `sql`: `insert_sql::insert_one`'s ?1 to ?26
/// from the job, then `more`.
async fn insert_row(
    tx: &mut dyn Exec,
    now: Millis,
    run_at: Millis,
    job: &NewJob,
    sql: &str,
    more: &[Arg<'_>],
) -> StoreResult<()> {
    let deadline_at = job.deadline_ms.map(|d| crate::time::after(now, d));
    let (idem_key, idem_hash) = match &job.idempotency {
        Some(i) => (Some(i.key.as_str()), Some(i.body_hash.as_str())),
        None => (None, None),
    };
    let expire = job
        .expire_after_ms
        .map(|ms| i64::try_from(ms).unwrap_or(i64::MAX));
    let throttle = job
        .throttle
        .as_ref()
        .map(super::throttle::Throttle::to_text);
    let debounce = job.debounce.as_ref().map(|d| d.to_text());
    let traceparent = job.traceparent.as_ref().map(|t| t.to_string());
    let mut values: Vec<Arg<'_>> = vec![
        Arg::from(&job.id),
        Arg::from(&job.tenant),
        Arg::from(&job.task.name),
        Arg::from(job.task.version),
        Arg::from(&job.task.digest),
        Arg::from(&job.queue),
        Arg::from(job.priority),
        Arg::from(&job.input),
        Arg::from(job.max_attempts),
        Arg::from(run_at),
        Arg::from(now),
        Arg::from(deadline_at),
        Arg::from(&job.concurrency_key),
        Arg::from(&job.unique_key),
        Arg::from(idem_key),
        Arg::from(idem_hash),
        Arg::from(expire),
        Arg::from(job.concurrency_limit),
        Arg::from(job.callback_depth),
        Arg::from(job.cache.as_ref().map(|c| c.key.as_str())),
        Arg::from(throttle.as_deref()),
        Arg::from(job.debounce.as_ref().map(|d| d.spec.key.as_str())),
        Arg::from(debounce.as_deref()),
        Arg::from(&job.fairness_key),
        Arg::from(job.fairness_weight),
        Arg::from(traceparent.as_deref()),
    ];
    values.extend_from_slice(more);
    tx.execute(sql, &values)
        .await
        .map_err(|e| insert_error(e, job))?;
    Ok(())
}

/// What a refused insert of `job` means. SQLite names a constraint by its
/// columns, PostgreSQL by its name.
fn insert_error(e: DbError, job: &NewJob) -> StoreError {
    match e {
        DbError::Unique(c) if c == "jobs_pkey" || c.ends_with("jobs.id") => {
            StoreError::Conflict(format!("a job with id {} exists already", job.id))
        }
        DbError::Unique(c) if c == "jobs_unique_key" => StoreError::Conflict(format!(
            "job another with unique_key {:?} has not finished yet; a unique key admits one unfinished job at a time",
            job.unique_key.as_deref().unwrap_or_default()
        )),
        DbError::Unique(_) => StoreError::Conflict(
            "another request made the same job at the same moment; send it again".into(),
        ),
        e => e.into(),
    }
}

/// The completed job whose output a job due now takes from its task's
/// result cache, if any (`NewJob::cache`).
async fn cache_source(
    tx: &mut dyn Exec,
    now: Millis,
    run_at: Millis,
    job: &NewJob,
) -> StoreResult<Option<CacheSource>> {
    let Some((key, since)) = job.cache_lookup(now, run_at) else {
        return Ok(None);
    };
    let found: Option<(String, Option<String>, i64)> = tx
        .optional(
            &insert_sql::cache_source(tx.dialect()),
            args![&job.tenant, key, since],
        )
        .await?;
    Ok(found.map(|(id, output, fuel)| CacheSource {
        id,
        output,
        fuel: u64::try_from(fuel).unwrap_or(0),
    }))
}

/// A job the result cache completes at once with `source`'s output: it
/// goes in completed, is counted and reported so, and its tenant is
/// credited the fuel it saved.
async fn insert_cached(
    tx: &mut dyn Exec,
    now: Millis,
    run_at: Millis,
    mut job: NewJob,
    source: CacheSource,
    tally: &mut Tally,
) -> StoreResult<Inserted> {
    // A hit is never a source: without a key it stays out of the cache's
    // index, so a hot key's lookups do not step over its hits.
    job.cache = None;
    let fuel = i64::try_from(source.fuel).unwrap_or(i64::MAX);
    let sql = insert_sql::insert_cached(tx.dialect());
    let more = [
        Arg::from(&source.output),
        Arg::from(&source.id),
        Arg::from(fuel),
    ];
    insert_row(tx, now, run_at, &job, &sql, &more).await?;
    let record = job.into_cached(now, run_at, &source);
    tally.cached(&record, source.fuel);
    Ok(Inserted::Created(record))
}
