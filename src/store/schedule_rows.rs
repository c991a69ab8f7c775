//! Cron schedules' rows: the SQL and row conversion both backends share,
//! and the one write that creates or moves one on (against its `rev`);
//! the records are the core's (`records::schedule`).

use super::db_row::db_row;
use super::exec::{args, Arg, Commit, Exec};
use super::records::{SchedulePut, ScheduleRecord, ScheduleState, MAX_SCHEDULES};
use super::{Millis, StoreError, StoreResult};
use std::sync::LazyLock;

/// The columns of a schedule row, in `ScheduleRow`'s order.
pub const COLUMNS: &str = "tenant, name, spec, enabled, next_at, last_slot, last_job, pending, \
    pending_slot, buffered, fired, skipped, last_error, rev, created_at, updated_at";

db_row! {
    pub struct ScheduleRow {
        pub tenant: String,
        pub name: String,
        pub spec: String,
        pub enabled: bool,
        pub next_at: Option<i64>,
        pub last_slot: Option<i64>,
        pub last_job: Option<String>,
        pub pending: Option<String>,
        pub pending_slot: Option<i64>,
        pub buffered: Option<i64>,
        pub fired: i64,
        pub skipped: i64,
        pub last_error: Option<String>,
        pub rev: i64,
        pub created_at: i64,
        pub updated_at: i64,
    }
}

impl From<ScheduleRow> for ScheduleRecord {
    fn from(r: ScheduleRow) -> Self {
        ScheduleRecord {
            tenant: r.tenant,
            name: r.name,
            spec: r.spec,
            enabled: r.enabled,
            state: ScheduleState {
                next_at: r.next_at,
                last_slot: r.last_slot,
                last_job: r.last_job,
                pending: r.pending,
                pending_slot: r.pending_slot,
                buffered: r.buffered,
                fired: u64::try_from(r.fired).unwrap_or(0),
                skipped: u64::try_from(r.skipped).unwrap_or(0),
                last_error: r.last_error,
            },
            rev: r.rev,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

pub const COUNT: &str = "SELECT count(*) FROM schedules WHERE tenant = $1";
pub const DELETE: &str = "DELETE FROM schedules WHERE tenant = $1 AND name = $2";
pub static GET: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {COLUMNS} FROM schedules WHERE tenant = $1 AND name = $2"));
/// The tenant's schedules (`one`; else every tenant's, $1 NULL), by tenant
/// and name.
pub fn list(one: bool) -> String {
    format!(
        "SELECT {COLUMNS} FROM schedules WHERE {} ORDER BY tenant, name",
        super::whose::tenant_is(one, "$1")
    )
}
/// Up to `$2` schedules due by `$1`, soonest first.
pub static DUE: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {COLUMNS} FROM schedules WHERE due_at <= $1 ORDER BY due_at LIMIT $2")
});
pub const NEXT_DUE: &str = "SELECT MIN(due_at) FROM schedules";

/// The statement that creates a schedule: parameters in the order of
/// `put_params`, then `now` as created_at. `p` renders parameter `i`
/// (1-based) in the backend's style.
pub fn insert(p: fn(usize) -> String) -> String {
    format!(
        "INSERT INTO schedules (tenant, name, spec, enabled, due_at, next_at, last_slot, \
         last_job, pending, pending_slot, buffered, fired, skipped, last_error, rev, \
         created_at, updated_at) \
         VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, 1, {}, {}) \
         ON CONFLICT (tenant, name) DO NOTHING",
        p(1),
        p(2),
        p(3),
        p(4),
        p(5),
        p(6),
        p(7),
        p(8),
        p(9),
        p(10),
        p(11),
        p(12),
        p(13),
        p(14),
        p(15),
        p(15),
    )
}

/// The statement that replaces a schedule as it stood at a rev:
/// parameters in the order of `put_params`, then `now`, then the rev.
/// Answers the new rev and created_at; no row when the rev moved on.
pub fn update(p: fn(usize) -> String) -> String {
    format!(
        "UPDATE schedules SET spec = {}, enabled = {}, due_at = {}, next_at = {}, \
         last_slot = {}, last_job = {}, pending = {}, pending_slot = {}, buffered = {}, \
         fired = {}, skipped = {}, last_error = {}, rev = rev + 1, updated_at = {} \
         WHERE tenant = {} AND name = {} AND rev = {} RETURNING rev, created_at",
        p(3),
        p(4),
        p(5),
        p(6),
        p(7),
        p(8),
        p(9),
        p(10),
        p(11),
        p(12),
        p(13),
        p(14),
        p(15),
        p(1),
        p(2),
        p(16),
    )
}

/// A write's values, in the parameter order of `insert` and `update`
/// (1 to 14).
pub struct PutParams {
    pub tenant: String,
    pub name: String,
    pub spec: String,
    pub enabled: bool,
    pub due_at: Option<i64>,
    pub next_at: Option<i64>,
    pub last_slot: Option<i64>,
    pub last_job: Option<String>,
    pub pending: Option<String>,
    pub pending_slot: Option<i64>,
    pub buffered: Option<i64>,
    pub fired: i64,
    pub skipped: i64,
    pub last_error: Option<String>,
}

impl From<&SchedulePut> for PutParams {
    fn from(w: &SchedulePut) -> Self {
        let s = &w.state;
        PutParams {
            tenant: w.tenant.clone(),
            name: w.name.clone(),
            spec: w.spec.clone(),
            enabled: w.enabled,
            due_at: w.due_at(),
            next_at: s.next_at,
            last_slot: s.last_slot,
            last_job: s.last_job.clone(),
            pending: s.pending.clone(),
            pending_slot: s.pending_slot,
            buffered: s.buffered,
            fired: i64::try_from(s.fired).unwrap_or(i64::MAX),
            skipped: i64::try_from(s.skipped).unwrap_or(i64::MAX),
            last_error: s.last_error.clone(),
        }
    }
}

/// What a refused put says.
fn dollar(i: usize) -> String {
    format!("${i}")
}

/// Creates or replaces a schedule (`SchedulePut`), in the write `tx` (a
/// put is a `Write`, so a slot's job is written with it).
pub async fn put(tx: &mut dyn Exec, now: Millis, w: SchedulePut) -> StoreResult<ScheduleRecord> {
    let p = PutParams::from(&w);
    let mut values = vec![
        Arg::from(&p.tenant),
        Arg::from(&p.name),
        Arg::from(&p.spec),
        Arg::from(p.enabled),
        Arg::from(p.due_at),
        Arg::from(p.next_at),
        Arg::from(p.last_slot),
        Arg::from(&p.last_job),
        Arg::from(&p.pending),
        Arg::from(p.pending_slot),
        Arg::from(p.buffered),
        Arg::from(p.fired),
        Arg::from(p.skipped),
        Arg::from(&p.last_error),
        Arg::from(now),
    ];
    let Some(rev) = w.rev else {
        // Two creates for one tenant count one after the other.
        super::tenants::hold(tx, &w.tenant, "schedules").await?;
        let have: i64 = tx.scalar(COUNT, args![&w.tenant]).await?.unwrap_or(0);
        super::tenants::within("schedules", Some(MAX_SCHEDULES), have, 1)?;
        if tx.execute(&insert(dollar), &values).await? == 0 {
            return Err(conflict(&w));
        }
        return Ok(w.into_record(1, now, now));
    };
    values.push(Arg::from(rev));
    let row: Option<(i64, i64)> = tx.optional(&update(dollar), &values).await?;
    match row {
        Some((rev, created_at)) => Ok(w.into_record(rev, created_at, now)),
        None => Err(conflict(&w)),
    }
}

pub fn conflict(w: &SchedulePut) -> StoreError {
    match w.rev {
        None => StoreError::Conflict(format!("the schedule {:?} exists already", w.name)),
        Some(_) => StoreError::Conflict(format!(
            "the schedule {:?} was changed by another write meanwhile",
            w.name
        )),
    }
}

impl dyn super::JobStore {
    pub async fn schedule_get(
        &self,
        tenant: &str,
        name: &str,
    ) -> StoreResult<Option<ScheduleRecord>> {
        let row: Option<ScheduleRow> = self
            .read()
            .await?
            .optional(&GET, args![tenant, name])
            .await?;
        Ok(row.map(ScheduleRecord::from))
    }

    /// A tenant's schedules (`None`: every tenant's), by tenant and name.
    pub async fn schedule_list(&self, tenant: Option<&str>) -> StoreResult<Vec<ScheduleRecord>> {
        let sql = list(tenant.is_some());
        let rows: Vec<ScheduleRow> = self.read().await?.all(&sql, args![tenant]).await?;
        Ok(rows.into_iter().map(ScheduleRecord::from).collect())
    }

    /// Deletes a schedule (its jobs stay); `false` when there was none.
    pub async fn schedule_delete(&self, tenant: &str, name: &str) -> StoreResult<bool> {
        let (tenant, name) = (tenant.to_owned(), name.to_owned());
        self.write(Commit::PROMPT, move |tx, _| {
            Box::pin(async move { Ok(tx.execute(DELETE, args![&tenant, &name]).await? == 1) })
        })
        .await
    }

    /// Up to `limit` schedules (every tenant's) due for the firer at `at`,
    /// the longest due first.
    pub async fn schedule_due(&self, at: Millis, limit: u32) -> StoreResult<Vec<ScheduleRecord>> {
        let rows: Vec<ScheduleRow> = self.read().await?.all(&DUE, args![at, limit]).await?;
        Ok(rows.into_iter().map(ScheduleRecord::from).collect())
    }

    /// When the next schedule is due for the firer, if any is.
    pub async fn schedule_next_due(&self) -> StoreResult<Option<Millis>> {
        let next: Option<Option<i64>> = self.read().await?.scalar(NEXT_DUE, &[]).await?;
        Ok(next.flatten())
    }
}
