//! Reads of jobs and their attempts, for both backends: one job, a page
//! of them, what a verification or the expirer reads, and a job's
//! attempts.

use super::dialect::Dialect;
use super::exec::args;
use super::job_sql::{self, RecordedRow, ENDED_SAMPLE, RECORDED_RUN};
use super::records::StepRecord;
use super::records::{
    AttemptQuery, AttemptRecord, ExpiringJob, JobPage, JobQuery, JobRecord, RecordedRun,
};
use super::rows::{page_push, AttemptRow, JobRow};
use super::step_rows::{self, StepColumns};
use super::{JobStore, Millis, StoreResult};

/// When the next queued job waiting for its time is due. SQLite seeks the
/// first of `jobs_scheduled` (those due are not staged yet: the next claim
/// stages them, so none is left out); PostgreSQL passes over those due by
/// `$1`.
fn next_run_at(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "SELECT MIN(run_at) FROM jobs WHERE status = 'queued' AND available = 0",
        Dialect::Postgres | Dialect::PostgresMany => {
            "SELECT MIN(run_at) FROM jobs \
             WHERE status = 'queued' AND run_at > created_at AND NOT paused AND run_at > $1"
        }
    }
}

impl dyn JobStore {
    pub async fn job_get(&self, tenant: &str, id: &str) -> StoreResult<Option<JobRecord>> {
        let mut c = self.read().await?;
        let sql = job_sql::get(c.dialect(), false);
        let row: Option<JobRow> = c.optional(&sql, args![id, tenant]).await?;
        row.map(JobRecord::try_from).transpose()
    }

    /// A page of jobs, newest first, until `q.limit` or the page's byte
    /// budget (`q.max_bytes`) is spent.
    pub async fn job_list(&self, q: JobQuery) -> StoreResult<JobPage> {
        let mut c = self.read().await?;
        let sql = job_sql::list(c.dialect(), q.tenant.is_some());
        let status = q.status.map(|s| s.as_str());
        let a = args![&q.tenant, status, &q.task, &q.queue, &q.before, q.limit];
        let rows: Vec<JobRow> = c.all(&sql, a).await?;
        let mut page = JobPage::default();
        let mut bytes = 0usize;
        for row in rows {
            if !page_push(&mut page, &mut bytes, row, q.max_bytes)? {
                break;
            }
        }
        Ok(page)
    }

    /// The ended jobs of a task whose last attempt ran it, newest first,
    /// at most `limit` (`job_sql::ENDED_SAMPLE`): what a verification
    /// runs again.
    pub async fn ended_sample(
        &self,
        tenant: &str,
        task: &str,
        limit: u32,
    ) -> StoreResult<Vec<String>> {
        let mut c = self.read().await?;
        let rows: Vec<(String,)> = c.all(ENDED_SAMPLE, args![tenant, task, limit]).await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// What a job recorded of its end, for a verification; `None` when it
    /// is gone (pruned).
    pub async fn recorded_run(&self, tenant: &str, id: &str) -> StoreResult<Option<RecordedRun>> {
        let row: Option<RecordedRow> = self
            .read()
            .await?
            .optional(RECORDED_RUN, args![tenant, id])
            .await?;
        row.map(|r| job_sql::recorded_run(id, r)).transpose()
    }

    /// Up to `limit` queued jobs past their `expire_after_ms`, for
    /// `job_expire` (whose caller builds their `on_fail` jobs first).
    pub async fn job_expiring(&self, limit: u32) -> StoreResult<Vec<ExpiringJob>> {
        let now = self.now();
        let mut c = self.read().await?;
        let sql = super::expire_sql::expiring(c.dialect());
        let rows: Vec<(String, String, String, i64, String, i64)> =
            c.all(&sql, args![now, limit]).await?;
        Ok(rows.into_iter().map(ExpiringJob::from_row).collect())
    }

    /// When the next queued job becomes due, if any is waiting for its time.
    /// Jobs due at or before `passed` may be left out: a claim begun then
    /// passed them over (their concurrency key runs, their tenant is at a
    /// quota), and what frees them wakes the claimers. So may jobs that
    /// were due when they were enqueued: their enqueue woke the claimers.
    pub async fn job_next_run_at(&self, passed: Millis) -> StoreResult<Option<Millis>> {
        let mut c = self.read().await?;
        let next: Option<Option<i64>> = c.scalar(next_run_at(c.dialect()), args![passed]).await?;
        Ok(next.flatten())
    }

    /// A job's stages, in order: a workflow job's steps, fallbacks and
    /// chains; none for a job of one task. The caller has checked whose
    /// job it is.
    pub async fn job_steps(&self, id: &str) -> StoreResult<Vec<StepRecord>> {
        let mut c = self.read().await?;
        let rows: Vec<StepColumns> = c.all(&step_rows::list("$1"), args![id]).await?;
        rows.into_iter()
            .map(|r| step_rows::record(r).map_err(super::StoreError::Internal))
            .collect()
    }

    pub async fn attempt_list(&self, q: AttemptQuery) -> StoreResult<Vec<AttemptRecord>> {
        let a = args![&q.job_id, &q.tenant, q.after.unwrap_or(0), q.limit];
        let rows: Vec<AttemptRow> = self.read().await?.all(&super::attempt_sql::PAGE, a).await?;
        rows.into_iter().map(AttemptRecord::try_from).collect()
    }
}
