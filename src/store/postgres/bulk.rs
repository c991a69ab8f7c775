//! Many plain jobs (no idempotency key, unique key or superseding key) in
//! one INSERT: a batch enqueue costs a few statements, not six per job.
//! Each job is still decided on its own: those past their tenant's
//! `max_queued` are refused, the others inserted.

use super::jobs::JOB_COLUMNS;
use super::tenants::{policy, queued_now, within};
use super::{pg, tally};
use crate::job::JobStatus;
use crate::quota::Quotas;
use crate::store::records::{Inserted, JobRecord, NewJob};
use crate::store::rows::JobRow;
use crate::store::tally::Tally;
use crate::store::{Millis, StoreResult};
use sqlx::{Postgres, Transaction};
use std::collections::{HashMap, HashSet};

type Tx = Transaction<'static, Postgres>;

/// Inserts `jobs` if they are all plain, with distinct ids; `None` when
/// they are not, or the INSERT failed (a taken id): nothing was written,
/// and the caller inserts them one by one.
pub async fn insert_plain(
    tx: &mut Tx,
    now: Millis,
    jobs: &[NewJob],
    defaults: &Quotas,
) -> StoreResult<Option<Vec<StoreResult<Inserted>>>> {
    let plain = |j: &NewJob| j.idempotency.is_none() && j.unique_key.is_none() && !j.supersedes;
    let ids: HashSet<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    if jobs.len() < 2 || ids.len() < jobs.len() || !jobs.iter().all(plain) {
        return Ok(None);
    }
    // Each tenant's room under max_queued, read once; jobs take it in order.
    let mut used: HashMap<&str, (Option<u64>, i64)> = HashMap::new();
    let mut verdicts: Vec<StoreResult<()>> = Vec::with_capacity(jobs.len());
    for j in jobs {
        if !used.contains_key(j.tenant.as_str()) {
            let limit = policy(tx, &j.tenant, defaults).await?.quotas.max_queued;
            let queued = queued_now(tx, &j.tenant).await?;
            used.insert(&j.tenant, (limit, queued));
        }
        let Some((limit, queued)) = used.get_mut(j.tenant.as_str()) else {
            continue;
        };
        let v = within("max_queued", *limit, *queued, 1);
        if v.is_ok() {
            *queued += 1;
        }
        verdicts.push(v);
    }
    let take: Vec<&NewJob> = jobs
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| v.is_ok())
        .map(|(j, _)| j)
        .collect();
    let int4 = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    sqlx::query("SAVEPOINT bulk")
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    let rows: Result<Vec<JobRow>, sqlx::Error> = sqlx::query_as(&format!(
        "INSERT INTO jobs (id, tenant, task, task_version, digest, status, queue, priority, \
         input, max_attempts, run_at, created_at, deadline_at, concurrency_key) \
         SELECT v.id, v.tenant, v.task, v.task_version, v.digest, 'queued', v.queue, v.priority, \
         v.input, v.max_attempts, v.run_at, $12, v.deadline_at, v.concurrency_key \
         FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[], $5::text[], $6::text[], \
         $7::int4[], $8::text[], $9::int4[], $10::int8[], $11::int8[], $13::text[]) \
         AS v(id, tenant, task, task_version, digest, queue, priority, input, max_attempts, \
         run_at, deadline_at, concurrency_key) \
         RETURNING {JOB_COLUMNS}"
    ))
    .bind(take.iter().map(|j| j.id.as_str()).collect::<Vec<_>>())
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
    .bind(
        take.iter()
            .map(|j| j.run_at.resolve(now))
            .collect::<Vec<i64>>(),
    )
    .bind(
        take.iter()
            .map(|j| {
                j.deadline_ms
                    .map(|d| now.saturating_add(i64::try_from(d).unwrap_or(i64::MAX)))
            })
            .collect::<Vec<Option<i64>>>(),
    )
    .bind(now)
    .bind(
        take.iter()
            .map(|j| j.concurrency_key.as_deref())
            .collect::<Vec<Option<&str>>>(),
    )
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
    let mut by_id: HashMap<String, JobRecord> = HashMap::with_capacity(rows.len());
    for row in rows {
        let job = JobRecord::try_from(row)?;
        by_id.insert(job.id.clone(), job);
    }
    let mut tally = Tally::new(now);
    let mut out = Vec::with_capacity(jobs.len());
    for (j, v) in jobs.iter().zip(verdicts) {
        out.push(match v {
            Err(e) => Err(e),
            Ok(()) => {
                tally.moved(&j.tenant, None, Some(JobStatus::Queued), 1);
                match by_id.remove(&j.id) {
                    Some(job) => Ok(Inserted::Created(job)),
                    None => Err(crate::store::StoreError::Internal(format!(
                        "the bulk insert did not answer job {}",
                        j.id
                    ))),
                }
            }
        });
    }
    tally::apply(tx, tally).await?;
    Ok(Some(out))
}
