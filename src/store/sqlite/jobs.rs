//! The SQL of jobs on SQLite: writes run on the writer's connection inside
//! its batch transaction; every update of a job is guarded by the status it
//! moves from (the transition table in `job.rs`) and, for a runner's
//! writes, by the lease token.

use super::rows::{ClaimRow, JobRow, CLAIM_OBJECT, JOB_COLUMNS};
use super::{db, random_token};
use crate::job::{ErrorKind, JobError, JobStatus};
use crate::store::records::*;
use crate::store::{Millis, StoreError, StoreResult};
use serde_json::json;
use sqlx::SqliteConnection;
use std::collections::HashSet;

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

pub async fn get(
    conn: &mut SqliteConnection,
    tenant: &str,
    id: &str,
) -> StoreResult<Option<JobRecord>> {
    let row: Option<JobRow> = sqlx::query_as(&format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1 AND tenant = ?2"
    ))
    .bind(id)
    .bind(tenant)
    .fetch_optional(conn)
    .await
    .map_err(db)?;
    row.map(JobRecord::try_from).transpose()
}

/// Inserts each job under its own savepoint, so one refused does not undo
/// the others.
pub async fn insert(
    conn: &mut SqliteConnection,
    now: Millis,
    jobs: Vec<NewJob>,
) -> StoreResult<Vec<StoreResult<Inserted>>> {
    let mut out = Vec::with_capacity(jobs.len());
    if jobs.len() == 1 {
        // The writer rolls back a single failed write on its own.
        for job in jobs {
            out.push(insert_one(conn, now, job).await);
        }
        return Ok(out);
    }
    for job in jobs {
        sqlx::query("SAVEPOINT job")
            .execute(&mut *conn)
            .await
            .map_err(db)?;
        let r = insert_one(conn, now, job).await;
        if r.is_err() {
            sqlx::query("ROLLBACK TO job")
                .execute(&mut *conn)
                .await
                .map_err(db)?;
        }
        sqlx::query("RELEASE job")
            .execute(&mut *conn)
            .await
            .map_err(db)?;
        out.push(r);
    }
    Ok(out)
}

async fn insert_one(
    conn: &mut SqliteConnection,
    now: Millis,
    job: NewJob,
) -> StoreResult<Inserted> {
    if let Some(idem) = &job.idempotency {
        let seen: Option<JobRow> = sqlx::query_as(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE tenant = ?1 AND idempotency_key = ?2"
        ))
        .bind(&job.tenant)
        .bind(&idem.key)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db)?;
        if let Some(row) = seen {
            if row.idempotency_hash.as_deref() == Some(idem.body_hash.as_str()) {
                return Ok(Inserted::Existing(row.try_into()?));
            }
            return Err(StoreError::Conflict(format!(
                "Idempotency-Key {:?} was already used with a different request body; send the same body to get the same job, or use a new key",
                idem.key
            )));
        }
    }
    if let Some(key) = &job.unique_key {
        let holder: Option<(String,)> = sqlx::query_as(
            "SELECT id FROM jobs WHERE tenant = ?1 AND unique_key = ?2 \
             AND status IN ('queued', 'running', 'waiting')",
        )
        .bind(&job.tenant)
        .bind(key)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db)?;
        if let Some((id,)) = holder {
            return Err(StoreError::Conflict(format!(
                "job {id} with unique_key {key:?} has not finished yet; a unique key admits one unfinished job at a time"
            )));
        }
    }
    if let (true, Some(key)) = (job.supersedes, &job.concurrency_key) {
        let error = JobError::with_code(
            ErrorKind::TaskFailed,
            "superseded",
            format!("superseded by job {}", job.id),
        );
        sqlx::query(
            "UPDATE jobs SET status = 'cancelled', finished_at = ?1, error = ?2 \
             WHERE tenant = ?3 AND concurrency_key = ?4 AND status IN ('queued', 'waiting')",
        )
        .bind(now)
        .bind(to_json(&error))
        .bind(&job.tenant)
        .bind(key)
        .execute(&mut *conn)
        .await
        .map_err(db)?;
    }
    let deadline_at = job
        .deadline_ms
        .map(|d| now.saturating_add(i64::try_from(d).unwrap_or(i64::MAX)));
    let (idem_key, idem_hash) = match job.idempotency {
        Some(i) => (Some(i.key), Some(i.body_hash)),
        None => (None, None),
    };
    let row: JobRow = sqlx::query_as(&format!(
        "INSERT INTO jobs (id, tenant, task, task_version, digest, status, queue, priority, input, \
         max_attempts, run_at, created_at, deadline_at, concurrency_key, unique_key, \
         idempotency_key, idempotency_hash) \
         VALUES (?1, ?2, ?3, ?4, ?5, 'queued', ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) \
         RETURNING {JOB_COLUMNS}"
    ))
    .bind(&job.id)
    .bind(&job.tenant)
    .bind(&job.task.name)
    .bind(job.task.version)
    .bind(&job.task.digest)
    .bind(&job.queue)
    .bind(job.priority)
    .bind(&job.input)
    .bind(job.max_attempts)
    .bind(job.run_at.unwrap_or(now))
    .bind(now)
    .bind(deadline_at)
    .bind(&job.concurrency_key)
    .bind(&job.unique_key)
    .bind(idem_key)
    .bind(idem_hash)
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| match &e {
        sqlx::Error::Database(d) if d.is_unique_violation() => {
            StoreError::Conflict(format!("a job with id {} exists already", job.id))
        }
        _ => db(e),
    })?;
    Ok(Inserted::Created(row.try_into()?))
}

/// Claims due jobs in queue order. Jobs whose concurrency key is running
/// are skipped, and at most one job per key is taken.
pub async fn claim(
    conn: &mut SqliteConnection,
    now: Millis,
    p: ClaimParams,
) -> StoreResult<Vec<ClaimedJob>> {
    if p.limit == 0 {
        return Ok(Vec::new());
    }
    let queues = p.queues.as_ref().map(to_json);
    // One row of JSON rather than a row per job: sqlx hands each row across
    // threads on its own, which costs more than the query.
    let (candidates,): (String,) = sqlx::query_as(
        "SELECT json_group_array(json_array(id, tenant, concurrency_key) ORDER BY priority, run_at, id) \
         FROM (SELECT id, tenant, concurrency_key, priority, run_at FROM jobs j \
               WHERE status = 'queued' AND run_at <= ?1 \
                 AND (?2 IS NULL OR queue IN (SELECT value FROM json_each(?2))) \
                 AND (concurrency_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs r \
                      WHERE r.tenant = j.tenant AND r.concurrency_key = j.concurrency_key \
                        AND r.status = 'running')) \
               ORDER BY priority, run_at, id LIMIT ?3)",
    )
    .bind(now)
    .bind(queues)
    .bind(p.limit)
    .fetch_one(&mut *conn)
    .await
    .map_err(db)?;
    let candidates: Vec<(String, String, Option<String>)> =
        serde_json::from_str(&candidates).map_err(|e| StoreError::Internal(e.to_string()))?;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let mut keys = HashSet::new();
    let ids: Vec<String> = candidates
        .into_iter()
        .filter(|(_, tenant, key)| match key {
            Some(k) => keys.insert((tenant.clone(), k.clone())),
            None => true,
        })
        .map(|(id, _, _)| id)
        .collect();
    take(conn, now, &ids, &p.owner, p.lease_ms).await
}

/// Moves the given queued jobs to running under one new lease.
async fn take(
    conn: &mut SqliteConnection,
    now: Millis,
    ids: &[String],
    owner: &str,
    lease_ms: u64,
) -> StoreResult<Vec<ClaimedJob>> {
    let token = random_token();
    let ids_json = to_json(&ids);
    sqlx::query(
        "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?1, \
         lease_token = ?2, lease_expires_at = ?3, attempt_started_at = ?4, \
         started_at = COALESCE(started_at, ?4), progress = NULL \
         WHERE id IN (SELECT value FROM json_each(?5)) AND status = 'queued'",
    )
    .bind(owner)
    .bind(&token)
    .bind(now.saturating_add(i64::try_from(lease_ms).unwrap_or(i64::MAX)))
    .bind(now)
    .bind(&ids_json)
    .execute(&mut *conn)
    .await
    .map_err(db)?;
    let (rows,): (String,) = sqlx::query_as(&format!(
        "SELECT json_group_array(json_object({CLAIM_OBJECT})) FROM jobs \
         WHERE id IN (SELECT value FROM json_each(?1)) AND lease_token = ?2"
    ))
    .bind(&ids_json)
    .bind(&token)
    .fetch_one(&mut *conn)
    .await
    .map_err(db)?;
    let rows: Vec<ClaimRow> =
        serde_json::from_str(&rows).map_err(|e| StoreError::Internal(e.to_string()))?;
    let mut claimed: Vec<ClaimedJob> = rows.into_iter().map(ClaimedJob::from).collect();
    // RETURNING comes back in no particular order; keep the queue's.
    claimed.sort_by_key(|c| ids.iter().position(|i| *i == c.id));
    Ok(claimed)
}

pub async fn claim_one(
    conn: &mut SqliteConnection,
    now: Millis,
    p: ClaimOneParams,
) -> StoreResult<ClaimedJob> {
    let job = get(conn, &p.tenant, &p.id)
        .await?
        .ok_or(StoreError::NotFound)?;
    if job.status != JobStatus::Queued {
        return Err(StoreError::Conflict(format!(
            "job {} is {}; only a queued job can be run now",
            job.id, job.status
        )));
    }
    if let Some(key) = &job.concurrency_key {
        let busy: Option<(String,)> = sqlx::query_as(
            "SELECT id FROM jobs WHERE tenant = ?1 AND concurrency_key = ?2 AND status = 'running'",
        )
        .bind(&job.tenant)
        .bind(key)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db)?;
        if let Some((other,)) = busy {
            return Err(StoreError::Conflict(format!(
                "job {other} with the same concurrency key {key:?} is running; try again when it ends"
            )));
        }
    }
    let mut claimed = take(
        conn,
        now,
        std::slice::from_ref(&job.id),
        &p.owner,
        p.lease_ms,
    )
    .await?;
    claimed.pop().ok_or_else(|| {
        StoreError::Conflict(format!("job {} was claimed by a runner first", job.id))
    })
}

pub async fn heartbeat(
    conn: &mut SqliteConnection,
    now: Millis,
    p: HeartbeatParams,
) -> StoreResult<HeartbeatReply> {
    for (id, token, progress) in &p.progress {
        sqlx::query(
            "UPDATE jobs SET progress = ?1 WHERE id = ?2 AND lease_token = ?3 AND status = 'running'",
        )
        .bind(to_json(progress))
        .bind(id)
        .bind(token)
        .execute(&mut *conn)
        .await
        .map_err(db)?;
    }
    if p.leases.is_empty() {
        return Ok(HeartbeatReply::default());
    }
    let held: Vec<(String, i64)> = sqlx::query_as(
        "UPDATE jobs SET lease_expires_at = ?1 FROM json_each(?2) AS l \
         WHERE jobs.id = l.value ->> 0 AND jobs.lease_token = l.value ->> 1 \
           AND jobs.lease_owner = ?3 AND jobs.status = 'running' \
         RETURNING jobs.id, jobs.cancel_requested",
    )
    .bind(now.saturating_add(i64::try_from(p.lease_ms).unwrap_or(i64::MAX)))
    .bind(to_json(&p.leases))
    .bind(&p.owner)
    .fetch_all(&mut *conn)
    .await
    .map_err(db)?;
    let still: HashSet<&str> = held.iter().map(|(id, _)| id.as_str()).collect();
    Ok(HeartbeatReply {
        lost: p
            .leases
            .iter()
            .filter(|(id, _)| !still.contains(id.as_str()))
            .map(|(id, _)| id.clone())
            .collect(),
        cancel: held
            .iter()
            .filter(|(_, c)| *c != 0)
            .map(|(id, _)| id.clone())
            .collect(),
    })
}

/// Writes each attempt's end, fenced by its lease token. Completions, the
/// common case, go in one statement for the whole batch.
pub async fn finalize(
    conn: &mut SqliteConnection,
    now: Millis,
    batch: Vec<Finalize>,
) -> StoreResult<Vec<Finalized>> {
    let mut results = vec![Finalized::Fenced; batch.len()];
    let completes: Vec<serde_json::Value> = batch
        .iter()
        .filter_map(|f| match &f.action {
            Action::Complete { output } => Some(json!([f.id, f.lease_token, output])),
            _ => None,
        })
        .collect();
    let mut written: HashSet<String> = HashSet::new();
    if !completes.is_empty() {
        let expected = completes.len();
        let completes = to_json(&completes);
        let done = sqlx::query(
            "UPDATE jobs SET status = 'completed', output = c.value ->> 2, finished_at = ?1, \
             lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL \
             FROM json_each(?2) AS c \
             WHERE jobs.id = c.value ->> 0 AND jobs.lease_token = c.value ->> 1 \
               AND jobs.status = 'running'",
        )
        .bind(now)
        .bind(&completes)
        .execute(&mut *conn)
        .await
        .map_err(db)?;
        let done: Vec<String> = if done.rows_affected() as usize == expected {
            batch
                .iter()
                .filter(|f| matches!(f.action, Action::Complete { .. }))
                .map(|f| f.id.clone())
                .collect()
        } else {
            // Some were fenced out (rare): the written ones are those this
            // statement just completed, lease cleared, at this time.
            let (ids,): (String,) = sqlx::query_as(
                "SELECT json_group_array(jobs.id) FROM json_each(?1) AS c \
                 JOIN jobs ON jobs.id = c.value ->> 0 \
                 WHERE jobs.status = 'completed' AND jobs.finished_at = ?2 \
                   AND jobs.lease_token IS NULL AND jobs.output IS c.value ->> 2",
            )
            .bind(&completes)
            .bind(now)
            .fetch_one(&mut *conn)
            .await
            .map_err(db)?;
            serde_json::from_str(&ids).map_err(|e| StoreError::Internal(e.to_string()))?
        };
        written.extend(done);
    }
    for (i, f) in batch.iter().enumerate() {
        if matches!(f.action, Action::Complete { .. }) {
            if written.contains(&f.id) {
                results[i] = Finalized::Done(JobStatus::Completed);
            }
            continue;
        }
        if let Some(status) = finalize_one(conn, now, f).await? {
            written.insert(f.id.clone());
            results[i] = Finalized::Done(status);
        }
    }
    let attempts: Vec<serde_json::Value> = batch
        .iter()
        .filter(|f| written.contains(&f.id))
        .filter_map(|f| f.attempt.as_ref().map(|a| (f, a)))
        .map(|(f, a)| {
            json!([
                f.id,
                a.attempt,
                a.task.name,
                a.task.version,
                a.task.digest,
                a.started_at,
                a.finished_at,
                a.outcome,
                a.error.as_ref().map(to_json),
                a.fuel_used,
                a.peak_memory_bytes,
                a.log.as_ref().map(to_json),
            ])
        })
        .collect();
    if !attempts.is_empty() {
        insert_attempts(conn, &attempts).await?;
    }
    Ok(results)
}

async fn insert_attempts(
    conn: &mut SqliteConnection,
    rows: &[serde_json::Value],
) -> StoreResult<()> {
    sqlx::query(
        "INSERT OR REPLACE INTO attempts (job_id, attempt, task, task_version, digest, started_at, \
         finished_at, outcome, error, fuel_used, peak_memory_bytes, log) \
         SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, \
                value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11 \
         FROM json_each(?1)",
    )
    .bind(to_json(&rows))
    .execute(conn)
    .await
    .map_err(db)?;
    Ok(())
}

/// One attempt's end other than a completion; `None` when fenced out.
/// A job whose cancellation was asked for ends `cancelled` instead of
/// going back to the queue.
async fn finalize_one(
    conn: &mut SqliteConnection,
    now: Millis,
    f: &Finalize,
) -> StoreResult<Option<JobStatus>> {
    const REQUEUE_OR_CANCEL: &str =
        "status = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE ?3 END, \
         finished_at = CASE WHEN cancel_requested = 1 THEN ?1 ELSE finished_at END";
    let (set, to, a, b, c): (
        String,
        JobStatus,
        Option<String>,
        Option<i64>,
        Option<String>,
    ) = match &f.action {
        Action::Complete { .. } => unreachable!("completions are written in one statement"),
        Action::Retry { delay_ms, error } => (
            format!("{REQUEUE_OR_CANCEL}, run_at = ?4, error = ?5"),
            JobStatus::Queued,
            None,
            Some(now.saturating_add(i64::try_from(*delay_ms).unwrap_or(i64::MAX))),
            Some(to_json(error)),
        ),
        Action::Fail { error } => (
            "status = ?3, finished_at = ?1, error = ?5".into(),
            JobStatus::Failed,
            None,
            None,
            Some(to_json(error)),
        ),
        Action::Snooze { delay_ms } => (
            format!("{REQUEUE_OR_CANCEL}, run_at = ?4, max_attempts = max_attempts + 1"),
            JobStatus::Queued,
            None,
            Some(now.saturating_add(i64::try_from(*delay_ms).unwrap_or(i64::MAX))),
            None,
        ),
        Action::Wait { waiting_for } => (
            "status = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE ?3 END, \
             finished_at = CASE WHEN cancel_requested = 1 THEN ?1 ELSE finished_at END, \
             waiting_for = ?5, max_attempts = max_attempts + 1"
                .into(),
            JobStatus::Waiting,
            None,
            None,
            Some(waiting_for.clone()),
        ),
        Action::Cancel => (
            "status = ?3, finished_at = ?1".into(),
            JobStatus::Cancelled,
            None,
            None,
            None,
        ),
        Action::Fallback { task, error, .. } => (
            format!(
                "{REQUEUE_OR_CANCEL}, run_at = ?1, error = ?5, fallback_task = ?2, \
                 fallback_version = ?4, fallback_digest = ?6, fallback_input = ?7, \
                 fallback_depth = fallback_depth + 1, stage_offset = attempts, \
                 max_attempts = attempts + ?8"
            ),
            JobStatus::Queued,
            Some(task.name.clone()),
            Some(i64::from(task.version)),
            Some(to_json(error)),
        ),
        Action::Release => (
            format!("{REQUEUE_OR_CANCEL}, attempts = attempts - 1"),
            JobStatus::Queued,
            None,
            None,
            None,
        ),
    };
    let sql = format!(
        "UPDATE jobs SET {set}, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL \
         WHERE id = ?9 AND lease_token = ?10 AND status = 'running' RETURNING status"
    );
    let (digest, input, max) = match &f.action {
        Action::Fallback {
            task,
            input,
            max_attempts,
            ..
        } => (
            Some(task.digest.clone()),
            Some(input.clone()),
            Some(*max_attempts),
        ),
        _ => (None, None, None),
    };
    let row: Option<(String,)> = sqlx::query_as(&sql)
        .bind(now)
        .bind(a)
        .bind(to.as_str())
        .bind(b)
        .bind(c)
        .bind(digest)
        .bind(input)
        .bind(max)
        .bind(&f.id)
        .bind(&f.lease_token)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db)?;
    row.map(|(s,)| s.parse::<JobStatus>().map_err(StoreError::Internal))
        .transpose()
}

pub async fn cancel(
    conn: &mut SqliteConnection,
    now: Millis,
    tenant: &str,
    id: &str,
) -> StoreResult<CancelOutcome> {
    let job = get(conn, tenant, id).await?.ok_or(StoreError::NotFound)?;
    match job.status {
        JobStatus::Queued | JobStatus::Waiting => {
            sqlx::query(
                "UPDATE jobs SET status = 'cancelled', finished_at = ?1 \
                 WHERE id = ?2 AND status IN ('queued', 'waiting')",
            )
            .bind(now)
            .bind(id)
            .execute(&mut *conn)
            .await
            .map_err(db)?;
            Ok(CancelOutcome::Cancelled(reread(conn, tenant, id).await?))
        }
        JobStatus::Running => {
            sqlx::query(
                "UPDATE jobs SET cancel_requested = 1 WHERE id = ?1 AND status = 'running'",
            )
            .bind(id)
            .execute(&mut *conn)
            .await
            .map_err(db)?;
            Ok(CancelOutcome::Requested(reread(conn, tenant, id).await?))
        }
        _ => Ok(CancelOutcome::AlreadyEnded(job)),
    }
}

async fn reread(conn: &mut SqliteConnection, tenant: &str, id: &str) -> StoreResult<JobRecord> {
    get(conn, tenant, id).await?.ok_or(StoreError::NotFound)
}

pub async fn resume(
    conn: &mut SqliteConnection,
    now: Millis,
    tenant: &str,
    id: &str,
    input: Option<String>,
) -> StoreResult<JobRecord> {
    let job = get(conn, tenant, id).await?.ok_or(StoreError::NotFound)?;
    if job.status != JobStatus::Waiting {
        return Err(StoreError::Conflict(format!(
            "job {id} is {}; only a waiting job can be resumed",
            job.status
        )));
    }
    // A job in its fallback gets the new input as the fallback's.
    sqlx::query(
        "UPDATE jobs SET status = 'queued', run_at = ?1, waiting_for = NULL, \
         input = CASE WHEN ?2 IS NOT NULL AND fallback_task IS NULL THEN ?2 ELSE input END, \
         fallback_input = CASE WHEN ?2 IS NOT NULL AND fallback_task IS NOT NULL THEN ?2 ELSE fallback_input END \
         WHERE id = ?3 AND status = 'waiting'",
    )
    .bind(now)
    .bind(input)
    .bind(id)
    .execute(&mut *conn)
    .await
    .map_err(db)?;
    reread(conn, tenant, id).await
}

#[derive(sqlx::FromRow)]
struct LostRow {
    id: String,
    attempts: i64,
    max_attempts: i64,
    cancel_requested: i64,
    task: String,
    task_version: i64,
    digest: String,
    attempt_started_at: Option<i64>,
    fallback_task: Option<String>,
    fallback_version: Option<i64>,
    fallback_digest: Option<String>,
}

/// Running jobs without a live lease go back to the queue as an attempt
/// that failed with `runner_lost`, or fail when out of attempts.
pub async fn rescue(
    conn: &mut SqliteConnection,
    now: Millis,
    all_running: bool,
) -> StoreResult<Vec<Rescued>> {
    let lost: Vec<LostRow> = sqlx::query_as(
        "SELECT id, attempts, max_attempts, cancel_requested, task, task_version, digest, \
                attempt_started_at, fallback_task, fallback_version, fallback_digest \
         FROM jobs WHERE status = 'running' AND (?1 OR lease_expires_at < ?2)",
    )
    .bind(all_running)
    .bind(now)
    .fetch_all(&mut *conn)
    .await
    .map_err(db)?;
    let mut rescued = Vec::with_capacity(lost.len());
    let mut attempts = Vec::with_capacity(lost.len());
    for LostRow {
        id,
        attempts: tries,
        max_attempts: max,
        cancel_requested,
        task,
        task_version: version,
        digest,
        attempt_started_at: started,
        fallback_task: fb_task,
        fallback_version: fb_version,
        fallback_digest: fb_digest,
    } in lost
    {
        let error = JobError::new(
            ErrorKind::RunnerLost,
            "the runner holding this job stopped before the attempt ended",
        );
        let status = if cancel_requested != 0 {
            JobStatus::Cancelled
        } else if tries >= max {
            JobStatus::Failed
        } else {
            JobStatus::Queued
        };
        sqlx::query(
            "UPDATE jobs SET status = ?1, error = ?2, run_at = ?3, \
             finished_at = CASE WHEN ?1 = 'queued' THEN NULL ELSE ?3 END, \
             lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL \
             WHERE id = ?4 AND status = 'running'",
        )
        .bind(status.as_str())
        .bind(to_json(&error))
        .bind(now)
        .bind(&id)
        .execute(&mut *conn)
        .await
        .map_err(db)?;
        let (name, version, digest) = match (fb_task, fb_version, fb_digest) {
            (Some(n), Some(v), Some(d)) => (n, v, d),
            _ => (task, version, digest),
        };
        attempts.push(json!([
            id,
            tries,
            name,
            version,
            digest,
            started.unwrap_or(now),
            now,
            "runner_lost",
            to_json(&error),
            0,
            0,
            null
        ]));
        rescued.push(Rescued { id, status });
    }
    if !attempts.is_empty() {
        insert_attempts(conn, &attempts).await?;
    }
    Ok(rescued)
}
