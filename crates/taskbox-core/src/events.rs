//! Job events as users see them (DESIGN §3.5): their types, and the
//! reading of the rows the store's outbox wrote (`store::outbox`). The one
//! JSON shape that server-sent events, webhooks and the CLI all carry is
//! `event_view::EventView`.

use crate::time::Millis;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// One row of the outbox: the events one write recorded for one tenant
/// (`store::outbox` writes them, `decode` reads them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// Its place among every tenant's rows, in the order they were
    /// recorded (a store-wide cursor; not shown to tenants).
    pub gseq: i64,
    pub tenant: String,
    /// The tenant's sequence number of the row's last event.
    pub seq: u64,
    /// How many events it holds: they are `seq - n + 1 ..= seq`.
    pub n: u32,
    pub at: Millis,
    /// A JSON array of the events.
    pub body: String,
}

/// What happened to a job. The names are part of the HTTP contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum EventType {
    /// Entered the queue: enqueued, or back after a snooze, a resume, a
    /// re-drive or a release (`detail.reason` says which).
    #[serde(rename = "job.queued")]
    Queued,
    /// An attempt started.
    #[serde(rename = "job.started")]
    Started,
    #[serde(rename = "job.completed")]
    Completed,
    /// An attempt failed (`detail.error`); `detail.will_retry` says whether
    /// the job goes on (a retry or its fallback) or failed for good.
    #[serde(rename = "job.failed")]
    Failed,
    /// After a failed attempt, the job waits for its next one
    /// (`detail.run_at`, and `detail.fallback` when its fallback takes over).
    #[serde(rename = "job.retrying")]
    Retrying,
    #[serde(rename = "job.cancelled")]
    Cancelled,
    /// The guest parked the job until it is resumed (`detail.waiting_for`).
    #[serde(rename = "job.waiting")]
    Waiting,
    /// A workflow job's stage became the one it is on (`detail.step`,
    /// `detail.kind`, `detail.task`).
    #[serde(rename = "job.step_started")]
    StepStarted,
    /// A workflow job's stage ended (`detail.status`: completed, failed,
    /// cancelled or skipped; `detail.attempts`, `detail.error`).
    #[serde(rename = "job.step_ended")]
    StepEnded,
}

impl EventType {
    pub const ALL: [EventType; 9] = [
        EventType::Queued,
        EventType::Started,
        EventType::Completed,
        EventType::Failed,
        EventType::Retrying,
        EventType::Cancelled,
        EventType::Waiting,
        EventType::StepStarted,
        EventType::StepEnded,
    ];

    /// The contract's name, e.g. `job.completed`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Queued => "job.queued",
            EventType::Started => "job.started",
            EventType::Completed => "job.completed",
            EventType::Failed => "job.failed",
            EventType::Retrying => "job.retrying",
            EventType::Cancelled => "job.cancelled",
            EventType::Waiting => "job.waiting",
            EventType::StepStarted => "job.step_started",
            EventType::StepEnded => "job.step_ended",
        }
    }

    /// The name as the outbox stores it (without `job.`).
    pub fn short(self) -> &'static str {
        &self.as_str()[4..]
    }

    fn from_short(s: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.short() == s)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EventType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EventType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
                format!(
                    "{s:?} is not an event type; the types are {}",
                    names.join(", ")
                )
            })
    }
}

/// One event of a tenant's.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The tenant's sequence number: 1, 2, 3, … in the order the tenant's
    /// events were recorded, the same for every reader, across restarts.
    pub seq: u64,
    pub kind: EventType,
    pub at: Millis,
    pub job: String,
    pub task: String,
    pub queue: String,
    /// The job's attempts so far (the one that started or ended included).
    pub attempt: u32,
    /// What the type adds (`error`, `will_retry`, `run_at`, …), an object.
    pub detail: Option<Map<String, Value>>,
}

/// One element of a row's body: `[type, job, task, queue, attempt, detail]`.
type Packed = (
    String,
    String,
    String,
    String,
    u32,
    Option<Map<String, Value>>,
);

/// The events of one row: `last` is the tenant's sequence number of its
/// last event, `n` how many it holds.
pub fn decode_body(body: &str, last: u64, n: u32, at: Millis) -> Result<Vec<Event>, String> {
    let packed: Vec<Packed> =
        serde_json::from_str(body).map_err(|e| format!("an event row does not parse: {e}"))?;
    if packed.len() != n as usize {
        return Err(format!(
            "an event row holds {} events, and says {n}",
            packed.len()
        ));
    }
    let first = (last + 1)
        .checked_sub(u64::from(n))
        .ok_or_else(|| format!("an event row ends at {last} and says it holds {n}"))?;
    packed
        .into_iter()
        .enumerate()
        .map(|(i, (kind, job, task, queue, attempt, detail))| {
            Ok(Event {
                seq: first + i as u64,
                kind: EventType::from_short(&kind)
                    .ok_or_else(|| format!("an event row holds an unknown type {kind:?}"))?,
                at,
                job,
                task,
                queue,
                attempt,
                detail,
            })
        })
        .collect()
}

/// The events of rows as the store read them, in order.
pub fn decode(rows: &[EventRow]) -> Result<Vec<Event>, String> {
    let mut out = Vec::new();
    for r in rows {
        out.extend(decode_body(&r.body, r.seq, r.n, r.at)?);
    }
    Ok(out)
}

/// Which of a tenant's events a reader wants; `None` fields match all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    pub job: Option<String>,
    pub task: Option<String>,
    pub queue: Option<String>,
    pub types: Option<Vec<EventType>>,
}

impl EventFilter {
    pub fn matches(&self, e: &Event) -> bool {
        self.job.as_ref().is_none_or(|j| *j == e.job)
            && self.task.as_ref().is_none_or(|t| *t == e.task)
            && self.queue.as_ref().is_none_or(|q| *q == e.queue)
            && self.types.as_ref().is_none_or(|t| t.contains(&e.kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_read_and_print_by_their_contract_names() {
        for t in EventType::ALL {
            assert_eq!(t.as_str().parse::<EventType>(), Ok(t));
            assert_eq!(EventType::from_short(t.short()), Some(t));
            assert_eq!(
                serde_json::to_value(t).unwrap(),
                Value::String(t.as_str().into())
            );
        }
        let err = "job.done".parse::<EventType>().unwrap_err();
        assert!(err.contains("job.completed"), "{err}");
    }

    #[test]
    fn a_row_that_does_not_add_up_is_an_error() {
        assert!(decode_body(r#"[["queued","j","t","q",0,null]]"#, 5, 2, 0).is_err());
        assert!(decode_body(r#"[["nope","j","t","q",0,null]]"#, 5, 1, 0).is_err());
    }
}
