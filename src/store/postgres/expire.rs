//! Expiry on PostgreSQL: queued jobs past their `expire_after_ms` fail with
//! kind `expired`, each with its task's `on_fail` job, in one transaction
//! (`store::expire_sql`).

use super::db::Db;
use super::pg;
use crate::job::JobStatus;
use crate::store::call_rows;
use crate::store::dialect::Dialect;
use crate::store::expire_sql::{self, Gone};
use crate::store::records::Expire;
use crate::store::tally::Tally;
use crate::store::transition::Move;
use crate::store::StoreResult;

/// Fails each of `jobs` still queued past its time, with its `on_fail`
/// job, in one transaction; answers how many.
pub async fn expire(db: &Db, jobs: Vec<Expire>) -> StoreResult<u64> {
    let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    let (mut tx, now) = db.begin().await?;
    let gone: Vec<Gone> = sqlx::query_as(&expire_sql::expire(Dialect::Postgres))
        .bind(Move::expire().to.as_str())
        .bind(now)
        .bind(expire_sql::error()?)
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await
        .map_err(pg)?;
    let mut tally = Tally::new(now);
    expire_sql::tally(&mut tally, &gone);
    let failed: std::collections::HashSet<&str> = gone.iter().map(|g| g.0.as_str()).collect();
    for job in &jobs {
        if let (true, Some(cb)) = (failed.contains(job.id.as_str()), &job.on_fail) {
            super::jobs::insert_one(&mut tx, now, cb.clone(), None, &mut tally).await?;
            let call = call_rows::callback(&job.id, JobStatus::Failed, cb, now);
            super::calls::insert(&mut tx, &call).await?;
        }
    }
    super::tally::apply(&mut tx, tally).await?;
    tx.commit().await.map_err(pg)?;
    Ok(gone.len() as u64)
}
