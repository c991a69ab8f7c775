//! A cron schedule's record: where its firing stands, and the one write
//! that creates or moves one on (against its `rev`).

use crate::time::Millis;

/// Most schedules one tenant may have.
pub const MAX_SCHEDULES: u64 = 100;

/// Where a schedule's firing stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScheduleState {
    /// The next slot not yet decided; `None`: the expression fires no more.
    pub next_at: Option<Millis>,
    /// The last slot that made a job.
    pub last_slot: Option<Millis>,
    /// The last job the schedule made (a slot's or a trigger's).
    pub last_job: Option<String>,
    /// A `before` job whose end decides `pending_slot`.
    pub pending: Option<String>,
    pub pending_slot: Option<Millis>,
    /// A slot held by `overlap: buffer_one` until the last job ends.
    pub buffered: Option<Millis>,
    /// Slots that made a job.
    pub fired: u64,
    /// Slots that did not: past the catch-up window, overlapping, skipped
    /// by `before`, or refused (`last_error` says why).
    pub skipped: u64,
    pub last_error: Option<String>,
}

/// A schedule: its definition (`spec`, the JSON the API was given, checked)
/// and where its firing stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleRecord {
    pub tenant: String,
    pub name: String,
    pub spec: String,
    pub enabled: bool,
    pub state: ScheduleState,
    /// Goes up with each write: a write made against an older one is
    /// refused.
    pub rev: i64,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// Creates a schedule (`rev: None`: refused if it exists) or replaces one
/// as it stood at `rev` (refused if another write came between), with
/// `StoreError::Conflict` either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulePut {
    pub tenant: String,
    pub name: String,
    pub spec: String,
    pub enabled: bool,
    pub state: ScheduleState,
    pub rev: Option<i64>,
}

impl SchedulePut {
    /// When the firer must look at the schedule next: at once while a
    /// `before` job or a buffered slot waits, else at its next slot;
    /// never while it is paused.
    pub fn due_at(&self) -> Option<Millis> {
        if !self.enabled {
            return None;
        }
        if self.state.pending.is_some() || self.state.buffered.is_some() {
            return Some(0);
        }
        self.state.next_at
    }

    /// The record as this write leaves it.
    pub fn into_record(self, rev: i64, created_at: Millis, now: Millis) -> ScheduleRecord {
        ScheduleRecord {
            tenant: self.tenant,
            name: self.name,
            spec: self.spec,
            enabled: self.enabled,
            state: self.state,
            rev,
            created_at,
            updated_at: now,
        }
    }
}

impl ScheduleRecord {
    /// A write that replaces this record as it stands.
    pub fn put(&self) -> SchedulePut {
        SchedulePut {
            tenant: self.tenant.clone(),
            name: self.name.clone(),
            spec: self.spec.clone(),
            enabled: self.enabled,
            state: self.state.clone(),
            rev: Some(self.rev),
        }
    }
}
