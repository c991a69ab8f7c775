//! The events one write reports (an outbox): gathered while the write runs,
//! by tenant, and written at its end, in its transaction, as one row per
//! tenant that holds them all (`events.body`). One row per write and tenant,
//! not per event: a claim of 32 jobs is one row, so the outbox costs the
//! hot path an insert per write, not three per job. What each move of a job
//! reports is decided here, for every backend.
//!
//! A row's body is a JSON array of events, each `[type, job, task, queue,
//! attempt, detail]` (`type` without its `job.` prefix, `detail` an object
//! or null): PostgreSQL's one-statement paths build the same layout in SQL
//! (`store::outbox::pg_events`).

use crate::events::EventType;
use crate::job::{JobError, JobStatus};
use crate::records::Action;
use crate::time::Millis;
use std::collections::HashMap;
use std::fmt::Write as _;

/// One tenant's events of a write, as the body of its row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chunk {
    pub n: u32,
    /// The events as a JSON array's text, without its brackets.
    body: String,
}

impl Chunk {
    /// The JSON array of the events.
    pub fn body(&self) -> String {
        format!("[{}]", self.body)
    }
}

/// Events of one write, by tenant.
#[derive(Debug, Clone, Default)]
pub struct Outbox {
    chunks: HashMap<String, Chunk>,
}

/// The job an event is about.
#[derive(Debug, Clone, Copy)]
pub struct About<'a> {
    pub id: &'a str,
    pub tenant: &'a str,
    /// The job's own task (a fallback stage reports the job's task).
    pub task: &'a str,
    pub queue: &'a str,
    /// Attempts made so far, the one that ended or started included.
    pub attempt: u32,
}

impl<'a> About<'a> {
    /// A job as a statement's row names it, its attempts as the row's
    /// integer.
    fn of_row(id: &'a str, tenant: &'a str, task: &'a str, queue: &'a str, attempts: i64) -> Self {
        About {
            id,
            tenant,
            task,
            queue,
            attempt: u32::try_from(attempts).unwrap_or(0),
        }
    }
}

/// Appends `s` as a JSON string.
pub fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl Outbox {
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Adds an event; `detail` is a JSON object's text, or `None`.
    pub fn push(&mut self, kind: EventType, job: About<'_>, detail: Option<&str>) {
        if !self.chunks.contains_key(job.tenant) {
            self.chunks.insert(job.tenant.to_owned(), Chunk::default());
        }
        let Some(c) = self.chunks.get_mut(job.tenant) else {
            return;
        };
        if c.n > 0 {
            c.body.push(',');
        }
        c.n += 1;
        c.body.push('[');
        json_str(&mut c.body, kind.short());
        c.body.push(',');
        json_str(&mut c.body, job.id);
        c.body.push(',');
        json_str(&mut c.body, job.task);
        c.body.push(',');
        json_str(&mut c.body, job.queue);
        let _ = write!(c.body, ",{},", job.attempt);
        c.body.push_str(detail.unwrap_or("null"));
        c.body.push(']');
    }

    /// Adds what other events of the same write held (after its own).
    pub fn absorb(&mut self, other: Outbox) {
        for (tenant, c) in other.chunks {
            match self.chunks.get_mut(&tenant) {
                Some(mine) if mine.n > 0 => {
                    mine.n += c.n;
                    mine.body.push(',');
                    mine.body.push_str(&c.body);
                }
                _ => {
                    self.chunks.insert(tenant, c);
                }
            }
        }
    }

    /// The chunks by tenant name (the order rows are written in).
    pub fn chunks(&self) -> Vec<(&str, &Chunk)> {
        let mut v: Vec<_> = self.chunks.iter().map(|(t, c)| (t.as_str(), c)).collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }

    /// Jobs a newer job of their concurrency key (`by`) superseded, as
    /// the cancel's statement answers them: (id, task, queue, attempts).
    pub fn superseded(&mut self, tenant: &str, by: &str, gone: &[(String, String, String, i64)]) {
        self.replaced(tenant, &superseded(by), gone);
    }

    /// A pending job a newer one of its debounce key (`by`) replaced, as
    /// `debounce::END_PENDING` answers it.
    pub fn debounced(&mut self, tenant: &str, by: &str, gone: &[(String, String, String, i64)]) {
        self.replaced(tenant, &replaced_by("debounced", by), gone);
    }

    fn replaced(&mut self, tenant: &str, detail: &str, gone: &[(String, String, String, i64)]) {
        for (id, task, queue, attempts) in gone {
            let job = About::of_row(id, tenant, task, queue, *attempts);
            self.push(EventType::Cancelled, job, Some(detail));
        }
    }

    /// Jobs that expired in their queue, as the expiry's statement answers
    /// them: (id, tenant, task, queue, attempts).
    pub fn expired(&mut self, gone: &[(String, String, String, String, i64)]) {
        let detail = failed(&JobError::expired(), false, None);
        for (id, tenant, task, queue, attempts) in gone {
            let job = About::of_row(id, tenant, task, queue, *attempts);
            self.push(EventType::Failed, job, Some(&detail));
        }
    }

    /// The stages of a workflow job that started or ended: skipped ones are
    /// reported too, so a reader sees every stage settle.
    pub fn steps(&mut self, job: About<'_>, steps: &[crate::records::StepWrite], _now: Millis) {
        use crate::records::StepStatus;
        for w in steps {
            let mut d = String::from(r#"{"step":"#);
            json_str(&mut d, &w.name);
            d.push_str(r#","kind":"#);
            json_str(&mut d, w.kind.as_str());
            d.push_str(r#","task":"#);
            json_str(&mut d, &w.task);
            let kind = match w.status {
                StepStatus::Pending => continue,
                StepStatus::Active if !w.starts => continue,
                StepStatus::Active => EventType::StepStarted,
                s => {
                    d.push_str(r#","status":"#);
                    json_str(&mut d, s.as_str());
                    if let Some(n) = w.attempts {
                        let _ = write!(d, r#","attempts":{n}"#);
                    }
                    if let Some(e) = &w.error {
                        d.push_str(r#","error":"#);
                        d.push_str(&serde_json::to_string(e).unwrap_or_else(|_| "null".into()));
                    }
                    EventType::StepEnded
                }
            };
            d.push('}');
            self.push(kind, job, Some(&d));
        }
    }

    /// A failed job sent back to the queue, on `task` (its own or newer).
    pub fn redriven(&mut self, job: &crate::records::JobRecord, task: &str, now: Millis) {
        let mut about = about(job);
        about.task = task;
        self.push(
            EventType::Queued,
            about,
            Some(&queued_again("redriven", now)),
        );
    }

    /// What an attempt's end reports, once the store knows where the job
    /// landed (a pending cancellation turns most endings into a cancel).
    pub fn ending(&mut self, mut job: About<'_>, action: &Action, landed: JobStatus, now: Millis) {
        // A release gives the attempt back.
        if matches!(action, Action::Release { .. }) {
            job.attempt = job.attempt.saturating_sub(1);
        }
        if landed == JobStatus::Cancelled {
            self.push(EventType::Cancelled, job, None);
            return;
        }
        let run_at = |ms: u64| crate::time::after(now, ms);
        match action {
            Action::Complete { .. } => self.push(EventType::Completed, job, None),
            Action::Retry { delay_ms, error } => {
                self.push(EventType::Failed, job, Some(&failed(error, true, None)));
                self.push(
                    EventType::Retrying,
                    job,
                    Some(&format!(r#"{{"run_at":{}}}"#, run_at(*delay_ms))),
                );
            }
            Action::Fail { error } => {
                self.push(EventType::Failed, job, Some(&failed(error, false, None)))
            }
            Action::Fallback { task, error, .. } => {
                self.push(
                    EventType::Failed,
                    job,
                    Some(&failed(error, true, Some(&task.name))),
                );
                let mut d = String::from(r#"{"fallback":"#);
                json_str(&mut d, &task.name);
                let _ = write!(d, r#","run_at":{now}}}"#);
                self.push(EventType::Retrying, job, Some(&d));
            }
            Action::Snooze { delay_ms } => self.push(
                EventType::Queued,
                job,
                Some(&format!(
                    r#"{{"reason":"snoozed","run_at":{}}}"#,
                    run_at(*delay_ms)
                )),
            ),
            Action::Release { delay_ms } => self.push(
                EventType::Queued,
                job,
                Some(&format!(
                    r#"{{"reason":"released","run_at":{}}}"#,
                    run_at(*delay_ms)
                )),
            ),
            Action::Wait { waiting_for } => {
                let mut d = String::from(r#"{"waiting_for":"#);
                // The guest's JSON text, checked when the attempt ended;
                // kept as a string if it is not JSON after all.
                if serde_json::from_str::<serde::de::IgnoredAny>(waiting_for).is_ok() {
                    d.push_str(waiting_for);
                } else {
                    json_str(&mut d, waiting_for);
                }
                d.push('}');
                self.push(EventType::Waiting, job, Some(&d));
            }
            Action::Cancel => self.push(EventType::Cancelled, job, None),
            Action::Advance { error, .. } => {
                if let Some(e) = error {
                    self.push(EventType::Failed, job, Some(&failed(e, true, None)));
                }
                self.push(
                    EventType::Queued,
                    job,
                    Some(&format!(r#"{{"reason":"next_step","run_at":{now}}}"#)),
                );
            }
            Action::Conclude { error, .. } => match error {
                Some(e) => self.push(EventType::Failed, job, Some(&failed(e, false, None))),
                None => self.push(EventType::Cancelled, job, None),
            },
        }
    }
}

/// What an event of `job` names, as the job is now.
pub fn about(job: &crate::records::JobRecord) -> About<'_> {
    About {
        id: &job.id,
        tenant: &job.tenant,
        task: &job.task.name,
        queue: &job.queue,
        attempt: job.attempts,
    }
}

/// What an event of job `id` of `tenant`, named `n`, names.
pub fn named<'a>(n: &'a crate::records::JobNames, id: &'a str, tenant: &'a str) -> About<'a> {
    About {
        id,
        tenant,
        task: &n.task,
        queue: &n.queue,
        attempt: n.attempts,
    }
}

/// `job.cancelled`'s detail for a job a newer one with its concurrency key
/// superseded.
pub fn superseded(by: &str) -> String {
    replaced_by("superseded", by)
}

/// A cancel's detail when a newer job (`by`) took the job's place.
fn replaced_by(reason: &str, by: &str) -> String {
    let mut d = String::from(r#"{"reason":"#);
    json_str(&mut d, reason);
    d.push_str(r#","by":"#);
    json_str(&mut d, by);
    d.push('}');
    d
}

/// `job.failed`'s detail: the attempt's error and whether the job goes on.
pub fn failed(error: &JobError, will_retry: bool, fallback: Option<&str>) -> String {
    let mut d = String::from(r#"{"error":"#);
    d.push_str(&serde_json::to_string(error).unwrap_or_else(|_| "null".into()));
    let _ = write!(d, r#","will_retry":{will_retry}"#);
    if let Some(f) = fallback {
        d.push_str(r#","fallback":"#);
        json_str(&mut d, f);
    }
    d.push('}');
    d
}

/// `job.queued`'s detail for a job that went back to the queue, and why.
pub fn queued_again(reason: &str, run_at: Millis) -> String {
    let mut d = String::from(r#"{"reason":"#);
    json_str(&mut d, reason);
    let _ = write!(d, r#","run_at":{run_at}}}"#);
    d
}

/// `job.completed`'s detail for a job a result cache completed: the job
/// whose output it took.
pub fn cached(from: &str) -> String {
    let mut d = String::from(r#"{"cached_from":"#);
    json_str(&mut d, from);
    d.push('}');
    d
}

/// `job.queued`'s detail for a new job: its due time when that is later
/// than its enqueue, else none.
pub fn enqueued(run_at: Millis, now: Millis) -> Option<String> {
    (run_at > now).then(|| format!(r#"{{"run_at":{run_at}}}"#))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::decode_body;
    use crate::job::ErrorKind;

    fn about(id: &str) -> About<'_> {
        About {
            id,
            tenant: "t",
            task: "echo \"q\"",
            queue: "default",
            attempt: 2,
        }
    }

    #[test]
    fn a_chunk_is_a_json_array_the_reader_decodes() {
        let mut o = Outbox::default();
        o.push(EventType::Queued, about("a"), None);
        let e = JobError::new(ErrorKind::Timeout, "slow \n");
        o.ending(
            about("a"),
            &Action::Retry {
                delay_ms: 5,
                error: e,
            },
            JobStatus::Queued,
            100,
        );
        let chunks = o.chunks();
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].1.n, 3);
        let events = decode_body(&chunks[0].1.body(), 10, 3, 100).unwrap();
        let kinds: Vec<_> = events.iter().map(|e| (e.seq, e.kind)).collect();
        assert_eq!(
            kinds,
            [
                (8, EventType::Queued),
                (9, EventType::Failed),
                (10, EventType::Retrying)
            ]
        );
        assert_eq!(events[0].task, "echo \"q\"");
        let d = events[1].detail.as_ref().unwrap();
        assert_eq!(d["will_retry"], true);
        assert_eq!(d["error"]["kind"], "timeout");
        assert_eq!(events[2].detail.as_ref().unwrap()["run_at"], 105);
    }

    #[test]
    fn a_pending_cancel_reports_a_cancel_and_absorb_keeps_order() {
        let mut o = Outbox::default();
        o.ending(
            about("a"),
            &Action::Fail {
                error: JobError::new(ErrorKind::Trap, "x"),
            },
            JobStatus::Cancelled,
            1,
        );
        let mut other = Outbox::default();
        other.push(EventType::Started, about("b"), None);
        o.absorb(other);
        let c = o.chunks();
        let events = decode_body(&c[0].1.body(), 2, 2, 1).unwrap();
        assert_eq!(events[0].kind, EventType::Cancelled);
        assert_eq!(
            (events[1].kind, events[1].job.as_str()),
            (EventType::Started, "b")
        );
    }

    #[test]
    fn a_waiting_job_reports_what_it_waits_for() {
        let mut o = Outbox::default();
        for w in [r#"{"for":"approval"}"#, "not json"] {
            o.ending(
                about("a"),
                &Action::Wait {
                    waiting_for: w.into(),
                },
                JobStatus::Waiting,
                1,
            );
        }
        let events = decode_body(&o.chunks()[0].1.body(), 2, 2, 1).unwrap();
        assert_eq!(
            events[0].detail.as_ref().unwrap()["waiting_for"]["for"],
            "approval"
        );
        assert_eq!(
            events[1].detail.as_ref().unwrap()["waiting_for"],
            "not json"
        );
    }
}
