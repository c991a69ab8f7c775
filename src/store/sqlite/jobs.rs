//! The SQL of jobs on SQLite (claims are in `claim.rs`): writes run on the
//! writer's connection inside its batch transaction; every update of a job
//! is guarded by the status it moves from (the transition table in
//! `job.rs`) and, for a runner's writes, by the lease token. Each statement
//! is prepared once and run per job: on the writer's own thread that costs
//! less than any batching trick.

use super::rows::JobRow;
use super::tally::{Apply, Tally};
use super::tenants::{self, policy, within};
use super::writer::exec;
use super::{constraint, wdb, Constraint};
use crate::events::EventType;
use crate::job::{ErrorKind, JobError, JobStatus};
use crate::quota::Quotas;
use crate::store::debounce;
use crate::store::dialect::Dialect;
use crate::store::insert_sql;
use crate::store::job_sql;
use crate::store::outbox::{self, About};
use crate::store::records::*;
use crate::store::rows::idempotent_repeat;
use crate::store::rows::to_json;
use crate::store::transition::Move;
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

/// A job as the writer sees it, inside its transaction.
pub fn get(conn: &Connection, tenant: &str, id: &str) -> StoreResult<Option<JobRecord>> {
    let row = conn
        .prepare_cached(&job_sql::get(Dialect::Sqlite, true))
        .and_then(|mut s| s.query_row(params![id, tenant], JobRow::read).optional())
        .map_err(wdb)?;
    row.map(JobRecord::try_from).transpose()
}

/// Inserts jobs, each under its own rules: one refused does not undo the
/// others, nor is anything it changed kept (a superseding job that is
/// refused cancels nothing). Only a job that writes more than its own row
/// (a superseding one) needs a savepoint: a plain insert is one
/// `INSERT OR FAIL`, which writes nothing when it fails.
pub fn insert(
    conn: &Connection,
    now: Millis,
    jobs: Vec<NewJob>,
    defaults: &Quotas,
) -> StoreResult<Vec<StoreResult<Inserted>>> {
    let mut out = Vec::with_capacity(jobs.len());
    let step = |sql: &str| exec(conn, sql).map_err(wdb);
    let mut tally = Tally::new(now);
    let mut tenants = Tenants::default();
    for job in jobs {
        let r = if (job.supersedes && job.concurrency_key.is_some()) || job.debounce.is_some() {
            step("SAVEPOINT job")?;
            // A refused job's counts go with it.
            let mut own = Tally::new(now);
            let r = insert_one(
                conn,
                now,
                job,
                Some(defaults),
                &mut own,
                &mut tenants,
                &tally,
            );
            match &r {
                Ok(_) => tally.absorb(own),
                Err(_) => step("ROLLBACK TO job")?,
            }
            step("RELEASE job")?;
            r
        } else {
            let mut own = Tally::new(now);
            let r = insert_one(
                conn,
                now,
                job,
                Some(defaults),
                &mut own,
                &mut tenants,
                &tally,
            );
            if r.is_ok() {
                tally.absorb(own);
            }
            r
        };
        out.push(r);
    }
    tally.apply(conn)?;
    Ok(out)
}

/// What a batch of inserts reads once per tenant: its quotas and its jobs
/// queued before the batch (the batch's own are in its tally).
#[derive(Default)]
pub(super) struct Tenants(std::collections::HashMap<String, (Quotas, i64)>);

impl Tenants {
    pub(super) fn of(
        &mut self,
        conn: &Connection,
        tenant: &str,
        defaults: &Quotas,
    ) -> StoreResult<(Quotas, i64)> {
        if let Some(t) = self.0.get(tenant) {
            return Ok(*t);
        }
        let t = (
            policy(conn, tenant, defaults)?.quotas,
            tenants::queued(conn, tenant)?,
        );
        self.0.insert(tenant.to_owned(), t);
        Ok(t)
    }
}

pub(super) fn insert_one(
    conn: &Connection,
    now: Millis,
    job: NewJob,
    defaults: Option<&Quotas>,
    tally: &mut Tally,
    tenants: &mut Tenants,
    before: &Tally,
) -> StoreResult<Inserted> {
    if let Some(idem) = &job.idempotency {
        let seen = conn
            .prepare_cached(&insert_sql::idempotent(Dialect::Sqlite))
            .and_then(|mut s| {
                s.query_row(params![job.tenant, idem.key], JobRow::read)
                    .optional()
            })
            .map_err(wdb)?;
        if let Some(row) = seen {
            return idempotent_repeat(row, idem);
        }
    }
    if let Some(key) = &job.unique_key {
        let holder = conn
            .prepare_cached(&insert_sql::unique_holder(Dialect::Sqlite))
            .and_then(|mut s| {
                s.query_row(params![job.tenant, key], JobRow::read)
                    .optional()
            })
            .map_err(wdb)?
            .map(JobRecord::try_from)
            .transpose()?;
        let finished = if holder.is_none() && job.reuse != Reuse::Allow {
            conn.prepare_cached(&insert_sql::unique_finished(Dialect::Sqlite))
                .and_then(|mut s| {
                    s.query_row(params![job.tenant, key], |r| {
                        Ok(FinishedWithKey {
                            any: r.get(0)?,
                            completed: r.get(1)?,
                        })
                    })
                })
                .map_err(wdb)?
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
        let mut stmt = conn
            .prepare_cached(&insert_sql::supersede(Dialect::Sqlite))
            .map_err(wdb)?;
        let mv = Move::cancel();
        for &from in mv.from {
            let gone: Vec<(String, String, String, i64)> = stmt
                .query_map(
                    params![
                        mv.to.as_str(),
                        now,
                        to_json(&error),
                        job.tenant,
                        key,
                        from.as_str()
                    ],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .and_then(|rows| rows.collect())
                .map_err(wdb)?;
            tally.moved(&job.tenant, Some(from), Some(mv.to), gone.len() as i64);
            tally.outbox.superseded(&job.tenant, &job.id, &gone);
        }
    }
    let mut job = job;
    let run_at = settle_debounce(conn, now, &mut job, tally)?;
    if let Some(source) = cache_source(conn, now, run_at, &job)? {
        return insert_cached(conn, now, run_at, job, source, tally);
    }
    // A callback (`defaults: None`) comes of a job already granted.
    if let Some(defaults) = defaults {
        let (quotas, queued) = tenants.of(conn, &job.tenant, defaults)?;
        let queued =
            queued + before.pending_queued(&job.tenant) + tally.pending_queued(&job.tenant);
        within("max_queued", quotas.max_queued, queued, 1)?;
    }
    let due = run_at <= now;
    insert_row(
        conn,
        now,
        run_at,
        &job,
        insert_sql::insert_one(Dialect::Sqlite),
        &[&due],
    )?;
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

/// The job's `run_at`: as it asked, or, for a debounced job, as its chain
/// settles once it replaced its key's pending job (if one is still
/// pending).
fn settle_debounce(
    conn: &Connection,
    now: Millis,
    job: &mut NewJob,
    tally: &mut Tally,
) -> StoreResult<Millis> {
    let asked = job.run_at.resolve(now);
    let Some(mut d) = job.debounce.take() else {
        return Ok(asked);
    };
    let pending: Option<(String, Option<String>)> = super::shared(conn, &debounce::PENDING)?
        .query_row(params![job.tenant, d.spec.key], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map_err(wdb)?;
    let mut replaced = None;
    if let Some(p) = pending {
        let r = d.replace(&job.id, &p);
        let (to, from) = debounce::Replace::statuses();
        let gone: Vec<(String, String, String, i64)> = super::shared(conn, debounce::END_PENDING)?
            .query_map(
                params![
                    to.as_str(),
                    now,
                    to_json(&r.error),
                    r.ended,
                    r.id,
                    from.as_str()
                ],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .and_then(|rows| rows.collect())
            .map_err(wdb)?;
        if !gone.is_empty() {
            tally.moved(&job.tenant, Some(from), Some(to), gone.len() as i64);
            tally.outbox.debounced(&job.tenant, &job.id, &gone);
            replaced = Some(p);
        }
    }
    let run_at = d.settle(now, asked, replaced);
    job.debounce = Some(d);
    Ok(run_at)
}

/// Writes a new job's row by `sql`: `insert_one`'s ?1 to ?23 from the job,
/// then `more`.
fn insert_row(
    conn: &Connection,
    now: Millis,
    run_at: Millis,
    job: &NewJob,
    sql: &str,
    more: &[&dyn rusqlite::ToSql],
) -> StoreResult<()> {
    let deadline_at = job.deadline_ms.map(|d| crate::time::after(now, d));
    let (idem_key, idem_hash) = match &job.idempotency {
        Some(i) => (Some(i.key.as_str()), Some(i.body_hash.as_str())),
        None => (None, None),
    };
    let expire = job
        .expire_after_ms
        .map(|ms| i64::try_from(ms).unwrap_or(i64::MAX));
    let cache_key = job.cache.as_ref().map(|c| c.key.as_str());
    let throttle = job
        .throttle
        .as_ref()
        .map(crate::store::throttle::Throttle::to_text);
    let debounce_key = job.debounce.as_ref().map(|d| d.spec.key.as_str());
    let debounce = job.debounce.as_ref().map(|d| d.to_text());
    let traceparent = job.traceparent.as_ref().map(|t| t.to_string());
    let mut values: Vec<&dyn rusqlite::ToSql> = vec![
        &job.id,
        &job.tenant,
        &job.task.name,
        &job.task.version,
        &job.task.digest,
        &job.queue,
        &job.priority,
        &job.input,
        &job.max_attempts,
        &run_at,
        &now,
        &deadline_at,
        &job.concurrency_key,
        &job.unique_key,
        &idem_key,
        &idem_hash,
        &expire,
        &job.concurrency_limit,
        &job.callback_depth,
        &cache_key,
        &throttle,
        &debounce_key,
        &debounce,
        &job.fairness_key,
        &job.fairness_weight,
        &traceparent,
    ];
    values.extend_from_slice(more);
    conn.prepare_cached(sql)
        .and_then(|mut s| s.execute(values.as_slice()))
        .map_err(|e| match constraint(&e) {
            Some(Constraint::Unique) => {
                StoreError::Conflict(format!("a job with id {} exists already", job.id))
            }
            _ => wdb(e),
        })?;
    Ok(())
}

/// The completed job whose output a job due now takes from its task's
/// result cache, if any (`NewJob::cache`).
fn cache_source(
    conn: &Connection,
    now: Millis,
    run_at: Millis,
    job: &NewJob,
) -> StoreResult<Option<CacheSource>> {
    let Some((key, since)) = job.cache_lookup(now, run_at) else {
        return Ok(None);
    };
    conn.prepare_cached(&insert_sql::cache_source(Dialect::Sqlite))
        .and_then(|mut s| {
            s.query_row(params![job.tenant, key, since], |r| {
                Ok(CacheSource {
                    id: r.get(0)?,
                    output: r.get(1)?,
                    fuel: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                })
            })
            .optional()
        })
        .map_err(wdb)
}

/// A job the result cache completes at once with `source`'s output: it
/// goes in completed, is counted and reported so, and its tenant is
/// credited the fuel it saved.
fn insert_cached(
    conn: &Connection,
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
    let sql = insert_sql::insert_cached(Dialect::Sqlite);
    insert_row(
        conn,
        now,
        run_at,
        &job,
        &sql,
        &[&source.output, &source.id, &fuel],
    )?;
    let record = job.into_cached(now, run_at, &source);
    tally.cached(&record, source.fuel);
    Ok(Inserted::Created(record))
}

pub fn heartbeat(
    conn: &Connection,
    now: Millis,
    p: HeartbeatParams,
) -> StoreResult<HeartbeatReply> {
    if !p.progress.is_empty() {
        let mut stmt = conn
            .prepare_cached(
                "UPDATE OR FAIL jobs SET progress = ?1 WHERE id = ?2 AND lease_token = ?3 AND status = 'running'",
            )
            .map_err(wdb)?;
        for (id, token, progress) in &p.progress {
            stmt.execute(params![to_json(progress), id, token])
                .map_err(wdb)?;
        }
    }
    let mut reply = HeartbeatReply::default();
    if p.leases.is_empty() {
        return Ok(reply);
    }
    let mut stmt = conn
        .prepare_cached(
            "UPDATE OR FAIL jobs SET lease_expires_at = ?1 \
             WHERE id = ?2 AND lease_token = ?3 AND lease_owner = ?4 AND status = 'running' \
             RETURNING cancel_requested",
        )
        .map_err(wdb)?;
    let expires = crate::time::after(now, p.lease_ms);
    for (id, token) in &p.leases {
        let held: Option<i64> = stmt
            .query_row(params![expires, id, token, p.owner], |r| r.get(0))
            .optional()
            .map_err(wdb)?;
        match held {
            None => reply.lost.push(id.clone()),
            Some(0) => {}
            Some(_) => reply.cancel.push(id.clone()),
        }
    }
    Ok(reply)
}

pub(super) fn reread(conn: &Connection, tenant: &str, id: &str) -> StoreResult<JobRecord> {
    get(conn, tenant, id)?.ok_or(StoreError::NotFound)
}

/// Marks claimed jobs begun, each under its lease token.
pub fn begin(conn: &Connection, begun: &[(String, String)]) -> StoreResult<()> {
    let mut stmt = conn
        .prepare_cached(
            "UPDATE jobs SET begun = 1 \
             WHERE id = ?1 AND lease_token = ?2 AND status = 'running'",
        )
        .map_err(wdb)?;
    for (id, token) in begun {
        stmt.execute(params![id, token]).map_err(wdb)?;
    }
    Ok(())
}
