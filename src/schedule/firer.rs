//! Fires cron slots, on the leader only: for each due schedule, each slot
//! that has come is decided once — a job, or skipped and counted — by one
//! write that moves the schedule past the slot against its rev, with the
//! slot's job in the same transaction. Two leaders across a stall, or a
//! trigger beside a firing, cannot both move a schedule on, so a slot
//! never makes two jobs; its job also carries the unique key
//! `schedule:{name}:{slot}`.

use super::cron_expr::CronExpr;
use super::leader::Leader;
use super::spec::{Overlap, ScheduleSpec};
use crate::enqueue::{prepare_job, EnqueueError, JobSpec};
use crate::registry::{Registry, RegistryError};
use crate::store::clock::rfc3339;
use crate::store::{
    Inserted, JobStore, Millis, OnConflict, Reuse, ScheduleRecord, ScheduleState, StoreError,
    StoreResult, Write, Written,
};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Most schedules one pass looks at; the rest are due in the next.
const SCHEDULES_PER_PASS: u32 = 200;
/// Most jobs one schedule's slots make in a pass (a long catch-up goes on
/// in the next passes).
const JOBS_PER_PASS: u32 = 100;
/// Most slots past the catch-up window one pass counts for a schedule (a
/// year's downtime of an every-second schedule is counted over passes).
const SLOTS_PER_PASS: u32 = 100_000;
/// Longest the firer sleeps: it looks for schedules other processes made,
/// and for whether this process leads, at least this often.
const MAX_SLEEP: Duration = Duration::from_secs(1);
/// How often a `before` job or a buffered slot is looked at while it waits.
const WAITING_POLL: Duration = Duration::from_millis(200);
/// The least time between two slots of a schedule, unless the server says
/// (`--schedule-min-interval-ms`).
pub const DEFAULT_MIN_INTERVAL: Duration = Duration::from_secs(1);
/// Slots a definition's cron expression is looked at for its shortest gap.
pub const GAP_SLOTS: usize = 2_000;

/// What a pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Whether this process led (a pass that does not lead does nothing).
    pub led: bool,
    pub schedules: u32,
    pub fired: u64,
    pub skipped: u64,
}

/// Why a schedule could not be fired now; the next pass tries again.
#[derive(Debug, thiserror::Error)]
pub enum FireError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Unreadable(String),
    /// A trigger while the schedule's `before` job runs.
    #[error("the schedule's before job {0} still runs; trigger it again when it has ended")]
    Busy(String),
    /// A trigger past the tenant's enqueue rate.
    #[error("{0}")]
    RateLimited(crate::admission::Over),
}

/// The firer: one per process; only the leader's fires slots.
pub struct Firer {
    store: Arc<dyn JobStore>,
    registry: Arc<Registry>,
    leader: Arc<Leader>,
    /// The runner's wake, rung when a slot made a job.
    wake: Arc<Notify>,
    /// Rung when a schedule of this process's changes, so that a new one's
    /// first slot is not missed by a long sleep.
    changed: Notify,
    /// The least time between two slots that make jobs.
    min_interval: Duration,
}

/// One schedule being moved on by a pass: its record as last written.
struct Moving {
    rec: ScheduleRecord,
    spec: ScheduleSpec,
    cron: CronExpr,
}

impl Firer {
    pub fn new(
        store: Arc<dyn JobStore>,
        registry: Arc<Registry>,
        leader: Arc<Leader>,
        wake: Arc<Notify>,
        min_interval: Duration,
    ) -> Arc<Firer> {
        Arc::new(Firer {
            store,
            registry,
            leader,
            wake,
            changed: Notify::new(),
            min_interval,
        })
    }

    /// The least time between two slots of a schedule.
    pub fn min_interval(&self) -> Duration {
        self.min_interval
    }

    /// Says a schedule changed (made, resumed): the firer looks again now.
    pub fn changed(&self) {
        self.changed.notify_one();
    }

    /// Fires what is due, if this process leads.
    pub async fn run_once(&self) -> Pass {
        let mut pass = Pass::default();
        if !self.leader.leads() {
            return pass;
        }
        pass.led = true;
        let now = self.store.now();
        let due = match self.store.schedule_due(now, SCHEDULES_PER_PASS).await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the due schedules");
                return pass;
            }
        };
        for rec in due {
            // A leader that lost its margin mid-pass stops: another may
            // lead now (its writes would be refused by rev anyway).
            if !self.leader.leads() {
                break;
            }
            pass.schedules += 1;
            let (tenant, name) = (rec.tenant.clone(), rec.name.clone());
            let before = rec.state.clone();
            match self.advance(rec, now).await {
                Ok(after) => {
                    pass.fired += after.fired.saturating_sub(before.fired);
                    pass.skipped += after.skipped.saturating_sub(before.skipped);
                }
                Err(FireError::Store(StoreError::Conflict(why))) => {
                    tracing::debug!(%tenant, schedule = %name, %why, "schedule changed meanwhile; the next pass reads it again");
                }
                Err(e) => {
                    tracing::warn!(%tenant, schedule = %name, error = %e, "cannot fire the schedule now; trying again");
                }
            }
        }
        if pass.fired > 0 {
            self.wake.notify_one();
        }
        pass
    }

    /// Decides a schedule's waiting `before` job, its buffered slot, and
    /// its slots up to `now`; answers the state it was left in.
    async fn advance(&self, rec: ScheduleRecord, now: Millis) -> Result<ScheduleState, FireError> {
        let spec = ScheduleSpec::from_stored(&rec.spec).map_err(FireError::Unreadable)?;
        let cron = spec
            .check()
            .map_err(|e| FireError::Unreadable(e.to_string()))?;
        let mut m = Moving { rec, spec, cron };
        if m.rec.state.pending.is_some() && !self.settle_before(&mut m).await? {
            // Its slots wait for it.
            return Ok(m.rec.state);
        }
        if let Some(slot) = m.rec.state.buffered {
            if self.active(&m.rec).await? {
                // Still waiting: what is due is decided (skip or wait)
                // below, without this slot.
            } else {
                let mut st = m.rec.state.clone();
                st.buffered = None;
                self.fire(&mut m, st, slot, None).await?;
            }
        }
        let catchup = i64::try_from(m.spec.catchup_ms()).unwrap_or(i64::MAX);
        let (mut jobs, mut counted) = (0u32, 0u32);
        let mut st = m.rec.state.clone();
        // Known until the next job is made: one read for a catch-up.
        let mut active = None;
        while let Some(slot) = st.next_at.filter(|s| *s <= now) {
            if jobs >= JOBS_PER_PASS || counted >= SLOTS_PER_PASS || st.pending.is_some() {
                break;
            }
            st.next_at = m.cron.next_after(slot);
            if now.saturating_sub(slot) > catchup {
                st.skipped += 1;
                counted += 1;
                continue;
            }
            // Refused at definition when its slots come closer, as far as
            // the check looked; a rarer close pair is skipped here.
            let floor = i64::try_from(self.min_interval.as_millis()).unwrap_or(i64::MAX);
            if st.last_slot.is_some_and(|last| slot - last < floor) {
                st.skipped += 1;
                st.last_error = Some(format!(
                    "slot {} skipped: it came less than the server's floor of {floor} ms after \
                     the last (--schedule-min-interval-ms)",
                    rfc3339(slot)
                ));
                continue;
            }
            let busy = match active {
                Some(b) => b,
                None => *active.insert(self.active(&m.rec).await?),
            };
            if busy {
                match m.spec.overlap {
                    Overlap::Skip => {
                        st.skipped += 1;
                        continue;
                    }
                    Overlap::BufferOne if st.buffered.is_none() => {
                        st.buffered = Some(slot);
                        continue;
                    }
                    Overlap::BufferOne => {
                        st.skipped += 1;
                        continue;
                    }
                    Overlap::Allow => {}
                }
            }
            jobs += 1;
            self.fire(&mut m, st, slot, None).await?;
            st = m.rec.state.clone();
            active = None;
        }
        if st != m.rec.state {
            self.write(&mut m, st, Vec::new()).await?;
        }
        Ok(m.rec.state)
    }

    /// Whether the schedule's last job (or its waiting `before` job) is
    /// still to end.
    async fn active(&self, rec: &ScheduleRecord) -> StoreResult<bool> {
        if rec.state.pending.is_some() {
            return Ok(true);
        }
        let Some(id) = &rec.state.last_job else {
            return Ok(false);
        };
        Ok(self
            .store
            .job_get(&rec.tenant, id)
            .await?
            .is_some_and(|j| !j.status.is_terminal()))
    }

    /// Decides the slot a `before` job was run for, once that job ended:
    /// its output is the slot's job's input, or `{"skip": true}` skips
    /// it. Answers whether it was decided (false: the job still runs).
    async fn settle_before(&self, m: &mut Moving) -> Result<bool, FireError> {
        let (Some(id), slot) = (m.rec.state.pending.clone(), m.rec.state.pending_slot) else {
            return Ok(true);
        };
        let job = self.store.job_get(&m.rec.tenant, &id).await?;
        let mut st = m.rec.state.clone();
        st.pending = None;
        st.pending_slot = None;
        let slot = slot.unwrap_or_else(|| self.store.now());
        let why = match job {
            Some(j) if !j.status.is_terminal() => return Ok(false),
            Some(j) if j.status == crate::job::JobStatus::Completed => {
                let output: Value = j
                    .output
                    .as_deref()
                    .and_then(|o| serde_json::from_str(o).ok())
                    .unwrap_or(Value::Null);
                if output.get("skip") == Some(&Value::Bool(true)) {
                    st.skipped += 1;
                    self.write(m, st, Vec::new()).await?;
                    return Ok(true);
                }
                self.fire(m, st, slot, Some(output)).await?;
                return Ok(true);
            }
            Some(j) => format!(
                "the before job {id} ended {}{}",
                j.status,
                j.error
                    .map(|e| format!(": {}", e.message))
                    .unwrap_or_default()
            ),
            None => format!("the before job {id} is gone"),
        };
        st.skipped += 1;
        st.last_error = Some(format!("slot {} skipped: {why}", rfc3339(slot)));
        self.write(m, st, Vec::new()).await?;
        Ok(true)
    }

    /// Makes the slot's job (or its `before` job, unless `input` is the
    /// `before` job's output already) and moves the schedule to `st` with
    /// it in one write. A job that cannot be made (its task gone, its
    /// input refused, the tenant over a quota) skips the slot and says why
    /// in `last_error`.
    async fn fire(
        &self,
        m: &mut Moving,
        st: ScheduleState,
        slot: Millis,
        input: Option<Value>,
    ) -> Result<(), FireError> {
        self.fire_as(m, st, slot, input, "").await
    }

    /// `fire`, the job's key marked with `kind` (`trigger:` for a trigger,
    /// so that one made at a slot's very millisecond is not taken for it).
    async fn fire_as(
        &self,
        m: &mut Moving,
        mut st: ScheduleState,
        slot: Millis,
        input: Option<Value>,
        kind: &str,
    ) -> Result<(), FireError> {
        let trigger = !kind.is_empty();
        // A slot's job is a job like any: charged to the tenant's enqueue
        // rate. A trigger over it is refused; a slot is skipped.
        if let Err(over) = self.registry.admission().take_one(&m.rec.tenant).await? {
            if trigger {
                return Err(FireError::RateLimited(over));
            }
            st.skipped += 1;
            st.last_error = Some(format!("slot {} skipped: {over}", rfc3339(slot)));
            return self.write(m, st, Vec::new()).await;
        }
        let name = &m.rec.name;
        let before = m.spec.before.clone().filter(|_| input.is_none());
        let (spec, key) = match &before {
            Some(task) => (
                JobSpec {
                    input: Some(json!({
                        "schedule": name,
                        "slot": rfc3339(slot),
                        "input": m.spec.input,
                    })),
                    ..JobSpec::of(task.clone(), Value::Null)
                },
                format!("schedule:{name}:{kind}{slot}:before"),
            ),
            None => (
                JobSpec {
                    queue: m.spec.queue.clone(),
                    ..JobSpec::of(
                        m.spec.target(),
                        input.unwrap_or_else(|| m.spec.input.clone()),
                    )
                },
                format!("schedule:{name}:{kind}{slot}"),
            ),
        };
        let spec = JobSpec {
            unique_key: Some(key),
            on_conflict: Some(OnConflict::UseExisting),
            reuse: Some(Reuse::Reject),
            ..spec
        };
        // A workflow's job is inserted with its stages (`WorkflowStart`).
        let prepared = match (&before, &m.spec.workflow) {
            (None, Some(workflow)) => {
                let spec = JobSpec {
                    task: None,
                    workflow: Some(workflow.clone()),
                    ..spec
                };
                crate::enqueue::workflow::prepare(
                    &self.registry,
                    self.new_id(),
                    &m.rec.tenant,
                    spec,
                    None,
                )
                .await
                .map(|(job, start)| (job, Some(start)))
            }
            _ => prepare_job(
                &self.registry,
                self.new_id(),
                &m.rec.tenant,
                spec,
                None,
                None,
            )
            .await
            .map(|job| (job, None)),
        };
        let (job, start) = match prepared {
            Ok(job) => job,
            // The store did not answer: the slot is decided later.
            Err(EnqueueError::Store(e) | EnqueueError::Registry(RegistryError::Store(e))) => {
                return Err(e.into())
            }
            Err(e) => {
                st.skipped += 1;
                st.last_error = Some(format!("slot {} skipped: {e}", rfc3339(slot)));
                return self.write(m, st, Vec::new()).await;
            }
        };
        let id = job.id.clone();
        match &before {
            Some(_) => {
                st.pending = Some(id);
                st.pending_slot = Some(slot);
            }
            None => {
                st.last_job = Some(id);
                st.last_slot = Some(slot);
                st.fired += 1;
            }
        }
        let mut writes = vec![Write::JobInsert(job)];
        writes.extend(start.map(Write::WorkflowStart));
        match self.write(m, st.clone(), writes).await {
            Ok(()) => Ok(()),
            // A trigger says so to whoever asked; a slot is skipped.
            Err(FireError::Store(StoreError::QuotaExceeded(e))) if !trigger => {
                let mut st = st;
                match &before {
                    Some(_) => (st.pending, st.pending_slot) = (None, None),
                    None => {
                        st.fired -= 1;
                        (st.last_job, st.last_slot) =
                            (m.rec.state.last_job.clone(), m.rec.state.last_slot);
                    }
                }
                st.skipped += 1;
                st.last_error = Some(format!(
                    "slot {} skipped: the tenant is over its quota of {} ({})",
                    rfc3339(slot),
                    e.quota,
                    e.limit
                ));
                self.write(m, st, Vec::new()).await
            }
            Err(e) => Err(e),
        }
    }

    /// Writes the schedule's new state, with `job` when there is one,
    /// against the rev it was read at; the record is the written one after.
    async fn write(
        &self,
        m: &mut Moving,
        st: ScheduleState,
        job: Vec<Write>,
    ) -> Result<(), FireError> {
        let made = match job.first() {
            Some(Write::JobInsert(j)) => Some(j.id.clone()),
            _ => None,
        };
        let mut put = m.rec.put();
        put.state = st;
        let mut writes = job;
        writes.push(Write::SchedulePut(put));
        let mut existing = None;
        let start = std::time::SystemTime::now();
        for w in self.store.apply(writes).await? {
            match w {
                Written::SchedulePut(r) => m.rec = r,
                Written::JobInserted(Inserted::Existing(j)) => existing = Some(j.id),
                Written::JobInserted(created) => {
                    crate::figures::inserted([&created]);
                    if let Inserted::Created(j) = &created {
                        let by = crate::enqueue::traced::MadeBy {
                            parent: None,
                            remote: false,
                            via: "schedule",
                        };
                        crate::enqueue::traced::enqueued(self.registry.traces(), j, by, start);
                    }
                }
                _ => {}
            }
        }
        // The slot's key was taken already (by a job of the tenant's own
        // making, or of a schedule of the same name deleted and made
        // again): no second job; the schedule names the one there is.
        if let (Some(made), Some(there)) = (made, existing) {
            tracing::info!(job = %there, schedule = %m.rec.name, "a job held the slot's key already");
            let mut st = m.rec.state.clone();
            for id in [&mut st.last_job, &mut st.pending] {
                if id.as_deref() == Some(made.as_str()) {
                    *id = Some(there.clone());
                }
            }
            let mut put = m.rec.put();
            put.state = st;
            if let Some(Written::SchedulePut(r)) =
                self.store.apply(vec![Write::SchedulePut(put)]).await?.pop()
            {
                m.rec = r;
            }
        }
        Ok(())
    }

    fn new_id(&self) -> String {
        crate::job::new_id()
    }

    /// Fires the schedule now, outside its slots (`POST .../trigger`):
    /// the slot is now, through its `before` task if it has one, whatever
    /// its overlap policy. Answers the schedule as written and the job
    /// made, if one was.
    pub async fn trigger(&self, rec: ScheduleRecord) -> Result<ScheduleRecord, FireError> {
        let spec = ScheduleSpec::from_stored(&rec.spec).map_err(FireError::Unreadable)?;
        let cron = spec
            .check()
            .map_err(|e| FireError::Unreadable(e.to_string()))?;
        let mut m = Moving { rec, spec, cron };
        if let Some(id) = &m.rec.state.pending {
            return Err(FireError::Busy(id.clone()));
        }
        let now = self.store.now();
        let st = m.rec.state.clone();
        self.fire_as(&mut m, st, now, None, "trigger:").await?;
        self.wake.notify_one();
        self.changed();
        Ok(m.rec)
    }

    /// Runs passes until `stop`: at each schedule's next slot (or sooner
    /// when one changes here), and at least every `MAX_SLEEP`.
    pub fn spawn(self: Arc<Self>, stop: CancellationToken) -> JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                let pass = self.run_once().await;
                let wait = if pass.led {
                    self.sleep_for().await
                } else {
                    MAX_SLEEP
                };
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = self.changed.notified() => {}
                    _ = stop.cancelled() => return,
                }
            }
        })
    }

    /// How long until the next schedule is due, within `MAX_SLEEP`.
    async fn sleep_for(&self) -> Duration {
        match self.store.schedule_next_due().await {
            Ok(Some(at)) => {
                let ms = at.saturating_sub(self.store.now());
                if ms <= 0 {
                    // Waiting on a `before` job or a buffered slot.
                    WAITING_POLL
                } else {
                    Duration::from_millis(ms as u64).min(MAX_SLEEP)
                }
            }
            Ok(None) => MAX_SLEEP,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read when the next schedule is due");
                MAX_SLEEP
            }
        }
    }
}
