//! Many plain jobs (no idempotency key, unique key or superseding key) in
//! one INSERT: a batch enqueue costs a few statements, not six per job.
//! Each job is still decided on its own: those past their tenant's
//! `max_queued` are refused, the others inserted.
//!
//! Outside a caller's transaction (`insert_now`, what API enqueues and
//! batch enqueues take) it is one round trip: one statement that reads the
//! clock and the tenants' room, inserts the jobs that fit and counts them,
//! committed by itself. The server's CPU for a flood of API enqueues went
//! mostly to sending and receiving the eight statements a batch took
//! before (BEGIN, clock, policy, count, INSERT, counters, COMMIT), and an
//! enqueue's latency is mostly its round trips and its commit.

use super::db::Db;
use super::tally::SHARD;
use super::{pg, tally, violated};
use crate::events::EventType;
use crate::job::JobStatus;
use crate::quota::Quotas;
use crate::store::dialect::Dialect;
use crate::store::job_sql;
use crate::store::outbox;
use crate::store::records::{Inserted, JobRecord, NewJob, RunAt};
use crate::store::rows::JobRow;
use crate::store::tally::Tally;
use crate::store::tenants::{policy_from, within};
use crate::store::{Millis, StoreResult};
use sqlx::postgres::PgArguments;
use sqlx::query::QueryAs;
use sqlx::{PgConnection, Postgres, Transaction};
use std::collections::{HashMap, HashSet};

type Tx = Transaction<'static, Postgres>;

/// A tenant, its weight and quotas as set, and its queued and waiting jobs.
type RoomRow = (String, Option<i64>, Option<String>, i64);

/// Each tenant's `max_queued` and its queued and waiting jobs.
type Rooms<'a> = HashMap<&'a str, (Option<u64>, i64)>;

fn plain(jobs: &[NewJob]) -> bool {
    let ids: HashSet<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    ids.len() == jobs.len()
        && jobs.iter().all(|j| {
            j.idempotency.is_none()
                && j.unique_key.is_none()
                && !j.supersedes
                && j.concurrency_limit.is_none()
                && j.callback_depth == 0
                && j.cache.is_none()
                && j.throttle.is_none()
                && j.debounce.is_none()
                && j.fairness_key.is_none()
                && j.fairness_weight.is_none()
        })
}

/// Inserts `jobs` in the caller's transaction if there are several and
/// they are all plain, with distinct ids; `None` when they are not, or the
/// INSERT failed (a taken id): nothing was written, and the caller inserts
/// them one by one.
pub async fn insert_plain(
    tx: &mut Tx,
    now: Millis,
    jobs: &[NewJob],
    defaults: &Quotas,
) -> StoreResult<Option<Vec<StoreResult<Inserted>>>> {
    if jobs.len() < 2 || !plain(jobs) {
        return Ok(None);
    }
    let rooms = read_rooms(tx, jobs, defaults).await?;
    let verdicts = verdicts(jobs, rooms);
    let take = admitted(jobs, &verdicts);
    sqlx::query("SAVEPOINT bulk")
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    let rows = bind(sqlx::query_as(&insert_sql()), &take, now)
        .fetch_all(&mut **tx)
        .await;
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => {
            tracing::debug!(error = %e, "a bulk insert failed; inserting one by one");
            sqlx::query("ROLLBACK TO bulk")
                .execute(&mut **tx)
                .await
                .map_err(pg)?;
            return Ok(None);
        }
    };
    sqlx::query("RELEASE bulk")
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    let out = answers(jobs, verdicts, rows)?;
    let mut tally = Tally::new(now);
    for job in out.iter().flatten() {
        let job = job.job();
        tally.moved(&job.tenant, None, Some(JobStatus::Queued), 1);
        tally.outbox.push(
            EventType::Queued,
            outbox::about(job),
            outbox::enqueued(job.run_at, now).as_deref(),
        );
    }
    tally::apply(tx, tally).await?;
    Ok(Some(out))
}

/// Inserts plain `jobs` (one or more, distinct ids) in a statement of
/// their own, one round trip; `None` when they are not all plain or a
/// constraint refused the INSERT (a taken id): nothing was written, and
/// the caller takes the path that decides job by job.
///
/// The room under `max_queued` is read unlocked, as `insert_plain` reads
/// it: a tenant may overshoot by the enqueues it has in
/// flight (DESIGN §9).
pub async fn insert_now(
    db: &Db,
    jobs: &[NewJob],
) -> StoreResult<Option<Vec<StoreResult<Inserted>>>> {
    if jobs.is_empty() || !plain(jobs) {
        return Ok(None);
    }
    let test_now = db.clock.as_ref().map(|c| c.now());
    let rows = match bind_now(
        sqlx::query_as(&insert_now_sql()),
        jobs,
        test_now,
        &db.defaults,
    )
    .fetch_all(&db.enqueues)
    .await
    {
        Ok(rows) => rows,
        Err(e) if violated(&e).is_some() => {
            tracing::debug!(error = %e, "a bulk insert failed; inserting one by one");
            return Ok(None);
        }
        Err(e) => return Err(pg(e)),
    };
    // Those the statement left out were past their tenant's `max_queued`:
    // read it again to say so (rare, so not worth a column of every row).
    let verdicts = if rows.len() < jobs.len() {
        let mut conn = db.pool.acquire().await.map_err(pg)?;
        let rooms = read_rooms(&mut conn, jobs, &db.defaults).await?;
        let written: HashSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        jobs.iter()
            .map(|j| {
                if written.contains(j.id.as_str()) {
                    return Ok(());
                }
                let limit = rooms.get(j.tenant.as_str()).and_then(|r| r.0);
                within("max_queued", limit, i64::MAX, 1)?;
                Err(crate::store::StoreError::Internal(format!(
                    "the bulk insert did not answer job {}",
                    j.id
                )))
            })
            .collect()
    } else {
        jobs.iter().map(|_| Ok(())).collect()
    };
    // The statement counted them.
    answers(jobs, verdicts, rows).map(Some)
}

/// Plain jobs inserted and counted in one statement that reads the clock
/// and each tenant's room under `max_queued` itself: each tenant's jobs
/// are taken in order while its queued and waiting jobs, with those before
/// them in the batch, stay within it (`verdicts` decides the same way).
/// Times relative to now are resolved by the database's clock (`$14`, a
/// test's clock, instead when given). `room` is `MATERIALIZED`: inlined
/// into the join, its sum over the counters' shards ran once per job, not
/// once per tenant (a tenth of a batch of 32's time). Run on connections
/// that plan it once: with its values, materialized, it was planned anew
/// every time (~0.35 ms). `least` ignores NULLs, so a deadline or quota
/// that is not set is kept NULL by a `CASE`, not capped into a value.
fn insert_now_sql() -> String {
    format!(
        "WITH clock AS (SELECT coalesce($14::int8, {clock}) AS now), \
         v AS (SELECT u.*, row_number() OVER (PARTITION BY u.tenant ORDER BY u.ord) AS k \
           FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[], $5::text[], $6::text[], \
             $7::int4[], $8::text[], $9::int4[], $10::int8[], $11::int8[], $12::int8[], \
             $13::text[], $16::int8[], $17::text[]) WITH ORDINALITY \
           AS u(id, tenant, task, task_version, digest, queue, priority, input, max_attempts, \
             run_at_abs, run_at_rel, deadline_rel, concurrency_key, expire_after_ms, \
             traceparent, ord)), \
         room AS MATERIALIZED (SELECT t.tenant, \
             CASE WHEN s.quotas::jsonb ->> 'max_queued' IS NOT NULL \
               THEN least((s.quotas::jsonb ->> 'max_queued')::numeric, {max})::int8 END AS lim, \
             (SELECT coalesce(sum(queued + waiting), 0)::int8 FROM tenant_jobs \
               WHERE tenant = t.tenant) AS used \
           FROM (SELECT DISTINCT tenant FROM v) t LEFT JOIN tenants s ON s.name = t.tenant), \
         ins AS (INSERT INTO jobs (id, tenant, task, task_version, digest, status, queue, \
             priority, input, max_attempts, run_at, created_at, deadline_at, concurrency_key, \
             expire_after_ms, traceparent, paused) \
           SELECT v.id, v.tenant, v.task, v.task_version, v.digest, 'queued', v.queue, \
             v.priority, v.input, v.max_attempts, \
             greatest(coalesce(v.run_at_abs, least(c.now::numeric + v.run_at_rel, {max})::int8), \
               c.now), \
             c.now, CASE WHEN v.deadline_rel IS NOT NULL \
               THEN least(c.now::numeric + v.deadline_rel, {max})::int8 END, v.concurrency_key, \
             v.expire_after_ms, v.traceparent, {paused} \
           FROM v CROSS JOIN clock c JOIN room ON room.tenant = v.tenant \
           WHERE coalesce(room.lim, $15::int8) IS NULL OR room.used + v.k <= coalesce(room.lim, $15::int8) \
           ORDER BY v.ord \
           RETURNING {cols}), \
         counted AS (INSERT INTO tenant_jobs (tenant, shard, queued, running, waiting) \
            SELECT tenant, {SHARD}, count(*), 0, 0 FROM ins GROUP BY tenant ORDER BY tenant \
            ON CONFLICT (tenant, shard) DO UPDATE SET queued = tenant_jobs.queued + excluded.queued), \
         evs AS (INSERT INTO events (tenant, n, at, body) \
            SELECT tenant, count(*), (SELECT now FROM clock), \
              {events} \
            FROM ins GROUP BY tenant) \
         SELECT * FROM ins",
        clock = super::db::DB_CLOCK,
        max = i64::MAX,
        paused = PAUSED,
        cols = job_sql::job_columns(Dialect::Postgres),
        // `outbox::enqueued`'s detail: the due time when later than now.
        events = outbox::pg_events(
            EventType::Queued,
            "0",
            "CASE WHEN run_at > created_at THEN json_build_object('run_at', run_at) END"
        ),
    )
}

/// `insert_now_sql`'s arguments.
fn bind_now<'q>(
    q: QueryAs<'q, Postgres, JobRow, PgArguments>,
    jobs: &'q [NewJob],
    test_now: Option<Millis>,
    defaults: &Quotas,
) -> QueryAs<'q, Postgres, JobRow, PgArguments> {
    let int8 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let refs: Vec<&NewJob> = jobs.iter().collect();
    let (abs, rel): (Vec<Option<i64>>, Vec<Option<i64>>) = jobs
        .iter()
        .map(|j| match j.run_at {
            RunAt::Now => (None, Some(0)),
            RunAt::After(ms) => (None, Some(int8(ms))),
            RunAt::At(t) => (Some(t), None),
        })
        .unzip();
    bind_head(q, &refs)
        .bind(abs)
        .bind(rel)
        .bind(
            jobs.iter()
                .map(|j| j.deadline_ms.map(int8))
                .collect::<Vec<Option<i64>>>(),
        )
        .bind(
            jobs.iter()
                .map(|j| j.concurrency_key.as_deref())
                .collect::<Vec<Option<&str>>>(),
        )
        .bind(test_now)
        .bind(defaults.max_queued.map(int8))
        .bind(expiries(jobs.iter()))
        .bind(traceparents(jobs.iter()))
}

/// Each job's `traceparent` (the trace it continues), as the INSERTs bind
/// it.
fn traceparents<'a>(jobs: impl Iterator<Item = &'a NewJob>) -> Vec<Option<String>> {
    jobs.map(|j| j.traceparent.as_ref().map(|t| t.to_string()))
        .collect()
}

/// Each job's `expire_after_ms`, as the INSERTs bind it.
fn expiries<'a>(jobs: impl Iterator<Item = &'a NewJob>) -> Vec<Option<i64>> {
    jobs.map(|j| {
        j.expire_after_ms
            .map(|v| i64::try_from(v).unwrap_or(i64::MAX))
    })
    .collect()
}

/// Whether a job row `v` (tenant, queue) goes in parked: its queue is paused.
const PAUSED: &str = "EXISTS (SELECT 1 FROM paused_queues pq \
    WHERE pq.tenant = v.tenant AND pq.queue = v.queue)";

/// Each of the jobs' tenants' room under `max_queued` (read once; jobs
/// take it in order), in one statement.
async fn read_rooms<'a>(
    conn: &mut PgConnection,
    jobs: &'a [NewJob],
    defaults: &Quotas,
) -> StoreResult<Rooms<'a>> {
    let mut tenants: Vec<&'a str> = jobs.iter().map(|j| j.tenant.as_str()).collect();
    tenants.sort_unstable();
    tenants.dedup();
    let read: Vec<RoomRow> = sqlx::query_as(
        "SELECT t.name, s.weight::int8, s.quotas, \
         (SELECT coalesce(sum(queued + waiting), 0)::int8 FROM tenant_jobs WHERE tenant = t.name) \
         FROM unnest($1::text[]) AS t(name) LEFT JOIN tenants s ON s.name = t.name",
    )
    .bind(&tenants)
    .fetch_all(&mut *conn)
    .await
    .map_err(pg)?;
    let mut rooms: Rooms<'a> = HashMap::new();
    for (name, weight, quotas, queued) in read {
        let limit = policy_from(&name, Some((weight, quotas)), defaults)?
            .quotas
            .max_queued;
        if let Some(t) = tenants.iter().find(|t| **t == name) {
            rooms.insert(t, (limit, queued));
        }
    }
    Ok(rooms)
}

/// Each job's verdict under its tenant's `max_queued`, in order.
fn verdicts(jobs: &[NewJob], mut rooms: Rooms<'_>) -> Vec<StoreResult<()>> {
    jobs.iter()
        .map(|j| {
            let (limit, queued) = rooms.get_mut(j.tenant.as_str()).ok_or_else(|| {
                crate::store::StoreError::Internal(format!("no room read for tenant {}", j.tenant))
            })?;
            within("max_queued", *limit, *queued, 1)?;
            *queued += 1;
            Ok(())
        })
        .collect()
}

fn admitted<'a>(jobs: &'a [NewJob], verdicts: &[StoreResult<()>]) -> Vec<&'a NewJob> {
    jobs.iter()
        .zip(verdicts)
        .filter(|(_, v)| v.is_ok())
        .map(|(j, _)| j)
        .collect()
}

/// The INSERT of many jobs from arrays, in a caller's transaction (which
/// counts them in its tally).
fn insert_sql() -> String {
    format!(
        "INSERT INTO jobs (id, tenant, task, task_version, digest, status, queue, priority, \
         input, max_attempts, run_at, created_at, deadline_at, concurrency_key, \
         expire_after_ms, traceparent, paused) \
         SELECT v.id, v.tenant, v.task, v.task_version, v.digest, 'queued', v.queue, v.priority, \
         v.input, v.max_attempts, v.run_at, $12, v.deadline_at, v.concurrency_key, \
         v.expire_after_ms, v.traceparent, {PAUSED} \
         FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[], $5::text[], $6::text[], \
         $7::int4[], $8::text[], $9::int4[], $10::int8[], $11::int8[], $13::text[], $14::int8[], \
         $15::text[]) \
         AS v(id, tenant, task, task_version, digest, queue, priority, input, max_attempts, \
         run_at, deadline_at, concurrency_key, expire_after_ms, traceparent) \
         RETURNING {cols}",
        cols = job_sql::job_columns(Dialect::Postgres)
    )
}

/// The columns both INSERTs take first ($1 to $9), from the jobs' fields.
fn bind_head<'q>(
    q: QueryAs<'q, Postgres, JobRow, PgArguments>,
    take: &[&'q NewJob],
) -> QueryAs<'q, Postgres, JobRow, PgArguments> {
    let int4 = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    q.bind(take.iter().map(|j| j.id.as_str()).collect::<Vec<_>>())
        .bind(take.iter().map(|j| j.tenant.as_str()).collect::<Vec<_>>())
        .bind(
            take.iter()
                .map(|j| j.task.name.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            take.iter()
                .map(|j| int4(j.task.version))
                .collect::<Vec<_>>(),
        )
        .bind(
            take.iter()
                .map(|j| j.task.digest.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(take.iter().map(|j| j.queue.as_str()).collect::<Vec<_>>())
        .bind(take.iter().map(|j| j.priority).collect::<Vec<i32>>())
        .bind(take.iter().map(|j| j.input.as_str()).collect::<Vec<_>>())
        .bind(
            take.iter()
                .map(|j| int4(j.max_attempts))
                .collect::<Vec<_>>(),
        )
}

fn bind<'q>(
    q: QueryAs<'q, Postgres, JobRow, PgArguments>,
    take: &[&'q NewJob],
    now: Millis,
) -> QueryAs<'q, Postgres, JobRow, PgArguments> {
    bind_head(q, take)
        .bind(
            take.iter()
                .map(|j| j.run_at.resolve(now))
                .collect::<Vec<i64>>(),
        )
        .bind(
            take.iter()
                .map(|j| j.deadline_ms.map(|d| crate::time::after(now, d)))
                .collect::<Vec<Option<i64>>>(),
        )
        .bind(now)
        .bind(
            take.iter()
                .map(|j| j.concurrency_key.as_deref())
                .collect::<Vec<Option<&str>>>(),
        )
        .bind(expiries(take.iter().copied()))
        .bind(traceparents(take.iter().copied()))
}

/// Each job's answer: its refusal, or its row as written.
fn answers(
    jobs: &[NewJob],
    verdicts: Vec<StoreResult<()>>,
    rows: Vec<JobRow>,
) -> StoreResult<Vec<StoreResult<Inserted>>> {
    let mut by_id: HashMap<String, JobRecord> = HashMap::with_capacity(rows.len());
    for row in rows {
        let job = JobRecord::try_from(row)?;
        by_id.insert(job.id.clone(), job);
    }
    let mut out = Vec::with_capacity(jobs.len());
    for (j, v) in jobs.iter().zip(verdicts) {
        out.push(match v {
            Err(e) => Err(e),
            Ok(()) => match by_id.remove(&j.id) {
                Some(job) => Ok(Inserted::Created(job)),
                None => Err(crate::store::StoreError::Internal(format!(
                    "the bulk insert did not answer job {}",
                    j.id
                ))),
            },
        });
    }
    Ok(out)
}
