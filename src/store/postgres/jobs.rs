//! The SQL of jobs on PostgreSQL (claims are in `claim.rs`). Every update
//! of a job is one of `store::transition`'s moves, guarded by its
//! from-statuses and, for a runner's writes, by the lease token.

use super::tally;
use super::tenants::{hold, policy, queued_now, within};
use super::{pg, violated, Violation};
use crate::events::EventType;
use crate::job::{ErrorKind, JobError, JobStatus};
use crate::quota::Quotas;
use crate::store::debounce;
use crate::store::ending_sql::{Dialect, PG_STATUS};
use crate::store::insert_sql;
use crate::store::job_sql;
use crate::store::outbox;
use crate::store::records::*;
use crate::store::rows::to_json;
use crate::store::rows::{idempotent_repeat, JobRow};
use crate::store::tally::Tally;
use crate::store::transition::Move;
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::{PgPool, Row};

use super::db::Tx;

/// A job as the transaction sees it.
pub(super) async fn get_in(tx: &mut Tx, tenant: &str, id: &str) -> StoreResult<Option<JobRecord>> {
    let row: Option<JobRow> = sqlx::query_as(&job_sql::get(Dialect::Postgres, false))
        .bind(id)
        .bind(tenant)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    row.map(JobRecord::try_from).transpose()
}

pub(super) async fn reread(tx: &mut Tx, tenant: &str, id: &str) -> StoreResult<JobRecord> {
    get_in(tx, tenant, id).await?.ok_or(StoreError::NotFound)
}

/// Marks claimed jobs begun, each under its lease token, in one statement.
pub async fn begin(pool: &PgPool, begun: Vec<(String, String)>) -> StoreResult<()> {
    let (ids, tokens): (Vec<String>, Vec<String>) = begun.into_iter().unzip();
    sqlx::query(&format!(
        "UPDATE jobs SET begun = TRUE FROM unnest($1::text[], $2::text[]) AS b(id, token) \
         WHERE jobs.id = b.id AND jobs.lease_token = b.token AND {PG_STATUS} = 'running'"
    ))
    .bind(ids)
    .bind(tokens)
    .execute(pool)
    .await
    .map_err(pg)?;
    Ok(())
}

/// Inserts each job under its own savepoint, so one refused does not undo
/// the others (nor is anything it changed kept).
pub async fn insert(
    tx: &mut Tx,
    now: Millis,
    jobs: Vec<NewJob>,
    defaults: Quotas,
) -> StoreResult<Vec<StoreResult<Inserted>>> {
    if let Some(out) = super::bulk::insert_plain(tx, now, &jobs, &defaults).await? {
        return Ok(out);
    }
    let mut out = Vec::with_capacity(jobs.len());
    for job in jobs {
        sqlx::query("SAVEPOINT job")
            .execute(&mut **tx)
            .await
            .map_err(pg)?;
        let mut tally = Tally::new(now);
        let mut r = insert_one(tx, now, job, Some(&defaults), &mut tally).await;
        if r.is_ok() {
            if let Err(e) = tally::apply(tx, tally).await {
                r = Err(e);
            }
        }
        let end = if r.is_ok() {
            "RELEASE job"
        } else {
            "ROLLBACK TO job"
        };
        sqlx::query(end).execute(&mut **tx).await.map_err(pg)?;
        out.push(r);
    }
    Ok(out)
}

/// One job in a transaction of its own.
pub async fn insert_alone(
    tx: &mut Tx,
    now: Millis,
    job: NewJob,
    defaults: Quotas,
) -> StoreResult<Inserted> {
    let mut tally = Tally::new(now);
    let inserted = insert_one(tx, now, job, Some(&defaults), &mut tally).await?;
    tally::apply(tx, tally).await?;
    Ok(inserted)
}

/// One job under its rules; `defaults: None` for a callback, which comes
/// of a job already granted and is not held to `max_queued`.
pub(super) async fn insert_one(
    tx: &mut Tx,
    now: Millis,
    job: NewJob,
    defaults: Option<&Quotas>,
    tally: &mut Tally,
) -> StoreResult<Inserted> {
    // Enqueues of one idempotency key see each other's job: the second
    // waits for the first's commit, then finds it.
    if let Some(idem) = &job.idempotency {
        hold(tx, &job.tenant, &format!("idempotency/{}", idem.key)).await?;
    }
    if let (true, Some(key)) = (job.supersedes, &job.concurrency_key) {
        hold(tx, &job.tenant, &format!("supersedes/{key}")).await?;
    }
    // Enqueues of one debounce key each see the job the one before made.
    if let Some(d) = &job.debounce {
        hold(tx, &job.tenant, &format!("debounce/{}", d.spec.key)).await?;
    }
    // Enqueues of one unique key see each other's job (`use_existing`
    // answers it rather than a unique index's refusal).
    if let Some(key) = &job.unique_key {
        hold(tx, &job.tenant, &format!("unique/{key}")).await?;
    }
    let queued = match defaults {
        Some(_) => queued_now(tx, &job.tenant).await?,
        None => 0,
    };
    if let Some(idem) = &job.idempotency {
        let seen: Option<JobRow> = sqlx::query_as(&insert_sql::idempotent(Dialect::Postgres))
            .bind(&job.tenant)
            .bind(&idem.key)
            .fetch_optional(&mut **tx)
            .await
            .map_err(pg)?;
        if let Some(row) = seen {
            return idempotent_repeat(row, idem);
        }
    }
    if let Some(key) = &job.unique_key {
        let holder: Option<JobRow> = sqlx::query_as(&insert_sql::unique_holder(Dialect::Postgres))
            .bind(&job.tenant)
            .bind(key)
            .fetch_optional(&mut **tx)
            .await
            .map_err(pg)?;
        let holder = holder.map(JobRecord::try_from).transpose()?;
        let finished = if holder.is_none() && job.reuse != Reuse::Allow {
            let (any, completed): (bool, bool) =
                sqlx::query_as(&insert_sql::unique_finished(Dialect::Postgres))
                    .bind(&job.tenant)
                    .bind(key)
                    .fetch_one(&mut **tx)
                    .await
                    .map_err(pg)?;
            FinishedWithKey { any, completed }
        } else {
            FinishedWithKey::default()
        };
        if let Some(existing) = job.unique_verdict(holder, finished)? {
            return Ok(existing);
        }
    }
    if let (true, Some(key)) = (job.supersedes, &job.concurrency_key) {
        let error = JobError::with_code(
            ErrorKind::TaskFailed,
            "superseded",
            format!("superseded by job {}", job.id),
        );
        let mv = Move::cancel();
        for from in mv.from {
            let gone: Vec<(String, String, String, i64)> =
                sqlx::query_as(&insert_sql::supersede(Dialect::Postgres))
                    .bind(mv.to.as_str())
                    .bind(now)
                    .bind(to_json(&error))
                    .bind(&job.tenant)
                    .bind(key)
                    .bind(from.as_str())
                    .fetch_all(&mut **tx)
                    .await
                    .map_err(pg)?;
            tally.moved(
                &job.tenant,
                Some(*from),
                Some(mv.to),
                i64::try_from(gone.len()).unwrap_or(0),
            );
            tally.outbox.superseded(&job.tenant, &job.id, &gone);
        }
    }
    let mut job = job;
    let run_at = settle_debounce(tx, now, &mut job, tally).await?;
    if let Some(source) = cache_source(tx, now, run_at, &job).await? {
        // A hit is never a source: without a key it stays out of the
        // cache's index, so a hot key's lookups do not step over its hits.
        let job = NewJob { cache: None, ..job };
        let sql = insert_sql::insert_cached(Dialect::Postgres);
        let row: JobRow = bind_new_job(sqlx::query_as(&sql), now, run_at, &job)
            .bind(&source.output)
            .bind(&source.id)
            .bind(i64::try_from(source.fuel).unwrap_or(i64::MAX))
            .fetch_one(&mut **tx)
            .await
            .map_err(|e| insert_error(e, &job))?;
        let record = JobRecord::try_from(row)?;
        tally.cached(&record, source.fuel);
        return Ok(Inserted::Created(record));
    }
    if let Some(defaults) = defaults {
        let quotas = policy(tx, &job.tenant, defaults).await?.quotas;
        within(
            "max_queued",
            quotas.max_queued,
            queued + tally.pending_queued(&job.tenant),
            1,
        )?;
    }
    let row: JobRow = bind_new_job(
        sqlx::query_as(insert_sql::insert_one(Dialect::Postgres)),
        now,
        run_at,
        &job,
    )
    .fetch_one(&mut **tx)
    .await
    .map_err(|e| insert_error(e, &job))?;
    tally.moved(&job.tenant, None, Some(JobStatus::Queued), 1);
    let job = JobRecord::try_from(row)?;
    tally.outbox.push(
        EventType::Queued,
        outbox::about(&job),
        outbox::enqueued(job.run_at, now).as_deref(),
    );
    Ok(Inserted::Created(job))
}

/// The job's `run_at`: as it asked, or, for a debounced job, as its chain
/// settles once it replaced its key's pending job (if one is still
/// pending: a claim may have taken it since it was read).
async fn settle_debounce(
    tx: &mut Tx,
    now: Millis,
    job: &mut NewJob,
    tally: &mut Tally,
) -> StoreResult<Millis> {
    let asked = job.run_at.resolve(now);
    let Some(mut d) = job.debounce.take() else {
        return Ok(asked);
    };
    let pending: Option<(String, Option<String>)> = sqlx::query_as(&debounce::PENDING)
        .bind(&job.tenant)
        .bind(&d.spec.key)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    let mut replaced = None;
    if let Some(p) = pending {
        let r = d.replace(&job.id, &p);
        let (to, from) = debounce::Replace::statuses();
        let gone: Vec<(String, String, String, i64)> = sqlx::query_as(debounce::END_PENDING)
            .bind(to.as_str())
            .bind(now)
            .bind(to_json(&r.error))
            .bind(&r.ended)
            .bind(&r.id)
            .bind(from.as_str())
            .fetch_all(&mut **tx)
            .await
            .map_err(pg)?;
        if !gone.is_empty() {
            let n = i64::try_from(gone.len()).unwrap_or(0);
            tally.moved(&job.tenant, Some(from), Some(to), n);
            tally.outbox.debounced(&job.tenant, &job.id, &gone);
            replaced = Some(p);
        }
    }
    let run_at = d.settle(now, asked, replaced);
    job.debounce = Some(d);
    Ok(run_at)
}

type NewJobQuery<'q> =
    sqlx::query::QueryAs<'q, sqlx::Postgres, JobRow, sqlx::postgres::PgArguments>;

/// Binds `insert_sql::insert_one`'s ?1 to ?26 from the job.
fn bind_new_job<'q>(
    q: NewJobQuery<'q>,
    now: Millis,
    run_at: Millis,
    job: &'q NewJob,
) -> NewJobQuery<'q> {
    let int4 = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    q.bind(&job.id)
        .bind(&job.tenant)
        .bind(&job.task.name)
        .bind(int4(job.task.version))
        .bind(&job.task.digest)
        .bind(&job.queue)
        .bind(job.priority)
        .bind(&job.input)
        .bind(int4(job.max_attempts))
        .bind(run_at)
        .bind(now)
        .bind(job.deadline_ms.map(|d| crate::time::after(now, d)))
        .bind(&job.concurrency_key)
        .bind(&job.unique_key)
        .bind(job.idempotency.as_ref().map(|i| i.key.as_str()))
        .bind(job.idempotency.as_ref().map(|i| i.body_hash.as_str()))
        .bind(
            job.expire_after_ms
                .map(|v| i64::try_from(v).unwrap_or(i64::MAX)),
        )
        .bind(job.concurrency_limit.map(int4))
        .bind(int4(job.callback_depth))
        .bind(job.cache.as_ref().map(|c| c.key.as_str()))
        .bind(
            job.throttle
                .as_ref()
                .map(crate::store::throttle::Throttle::to_text),
        )
        .bind(job.debounce.as_ref().map(|d| d.spec.key.as_str()))
        .bind(job.debounce.as_ref().map(|d| d.to_text()))
        .bind(job.fairness_key.as_deref())
        .bind(job.fairness_weight.map(int4))
        .bind(job.traceparent.as_ref().map(|t| t.to_string()))
}

/// What a refused insert of `job` means.
fn insert_error(e: sqlx::Error, job: &NewJob) -> StoreError {
    match violated(&e) {
        Some((Violation::Unique, c)) if c == "jobs_pkey" => {
            StoreError::Conflict(format!("a job with id {} exists already", job.id))
        }
        Some((Violation::Unique, c)) if c == "jobs_unique_key" => {
            unique_taken("another", job.unique_key.as_deref().unwrap_or_default())
        }
        Some((Violation::Unique, _)) => StoreError::Conflict(
            "another request made the same job at the same moment; send it again".into(),
        ),
        _ => pg(e),
    }
}

/// The completed job whose output a job due now takes from its task's
/// result cache, if any (`NewJob::cache`).
async fn cache_source(
    tx: &mut Tx,
    now: Millis,
    run_at: Millis,
    job: &NewJob,
) -> StoreResult<Option<CacheSource>> {
    let Some((key, since)) = job.cache_lookup(now, run_at) else {
        return Ok(None);
    };
    let found: Option<(String, Option<String>, i64)> =
        sqlx::query_as(&insert_sql::cache_source(Dialect::Postgres))
            .bind(&job.tenant)
            .bind(key)
            .bind(since)
            .fetch_optional(&mut **tx)
            .await
            .map_err(pg)?;
    Ok(found.map(|(id, output, fuel)| CacheSource {
        id,
        output,
        fuel: u64::try_from(fuel).unwrap_or(0),
    }))
}

fn unique_taken(id: &str, key: &str) -> StoreError {
    StoreError::Conflict(format!(
        "job {id} with unique_key {key:?} has not finished yet; a unique key admits one unfinished job at a time"
    ))
}

pub async fn heartbeat(
    tx: &mut Tx,
    now: Millis,
    mut p: HeartbeatParams,
) -> StoreResult<HeartbeatReply> {
    // One statement for all of a runner's leases (it may hold thousands,
    // claimed ahead), rows locked in id order so that two writers of the
    // same rows never wait for each other in a cycle.
    p.progress.sort_by(|a, b| a.0.cmp(&b.0));
    if !p.progress.is_empty() {
        let (ids, tokens, values): (Vec<&str>, Vec<&str>, Vec<String>) = p
            .progress
            .iter()
            .map(|(id, token, progress)| (id.as_str(), token.as_str(), to_json(progress)))
            .fold(
                (vec![], vec![], vec![]),
                |(mut a, mut b, mut c), (x, y, z)| {
                    a.push(x);
                    b.push(y);
                    c.push(z);
                    (a, b, c)
                },
            );
        sqlx::query(
            "WITH h AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS h(id, token, progress)), \
             held AS (SELECT j.id, h.progress FROM jobs j JOIN h ON j.id = h.id AND j.lease_token = h.token \
                      WHERE (j.status || '') = 'running' ORDER BY j.id FOR UPDATE OF j) \
             UPDATE jobs SET progress = held.progress FROM held WHERE jobs.id = held.id",
        )
        .bind(&ids)
        .bind(&tokens)
        .bind(&values)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    }
    let mut reply = HeartbeatReply::default();
    if p.leases.is_empty() {
        return Ok(reply);
    }
    p.leases.sort();
    let (ids, tokens): (Vec<&str>, Vec<&str>) = p
        .leases
        .iter()
        .map(|(id, t)| (id.as_str(), t.as_str()))
        .unzip();
    let rows = sqlx::query(
        "WITH h AS (SELECT * FROM unnest($1::text[], $2::text[]) AS h(id, token)), \
         held AS (SELECT j.id FROM jobs j JOIN h ON j.id = h.id AND j.lease_token = h.token \
                  WHERE j.lease_owner = $3 AND (j.status || '') = 'running' ORDER BY j.id FOR UPDATE OF j) \
         UPDATE jobs SET lease_expires_at = $4 FROM held WHERE jobs.id = held.id \
         RETURNING jobs.id, jobs.cancel_requested",
    )
    .bind(&ids)
    .bind(&tokens)
    .bind(&p.owner)
    .bind(crate::time::after(now, p.lease_ms))
    .fetch_all(&mut **tx)
    .await
    .map_err(pg)?;
    let mut held = std::collections::HashSet::with_capacity(rows.len());
    for r in &rows {
        let id: String = r.try_get("id").map_err(pg)?;
        if r.try_get::<bool, _>("cancel_requested").map_err(pg)? {
            reply.cancel.push(id.clone());
        }
        held.insert(id);
    }
    reply.lost = p
        .leases
        .iter()
        .filter(|(id, _)| !held.contains(id))
        .map(|(id, _)| id.clone())
        .collect();
    Ok(reply)
}

/// The job, locked until the transaction ends: a runner's end of the same
/// job waits for this, or this for it.
pub(super) async fn get_for_update(tx: &mut Tx, tenant: &str, id: &str) -> StoreResult<JobRecord> {
    let job: Option<JobRow> = sqlx::query_as(&job_sql::get(Dialect::Postgres, true))
        .bind(id)
        .bind(tenant)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    JobRecord::try_from(job.ok_or(StoreError::NotFound)?)
}
