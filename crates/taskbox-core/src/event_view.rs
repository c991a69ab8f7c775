//! A job event as the API's pages and streams, webhooks and the CLI carry
//! it: one type the server writes and the CLI reads.

use crate::events::{Event, EventType};
use crate::job::JobError;
use crate::time::rfc3339;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// One event: `{seq, type, at, job: {id, task, queue}, attempt, …what its
/// type adds}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventView {
    /// The tenant's sequence number: 1, 2, 3, … for every reader.
    pub seq: u64,
    #[serde(rename = "type")]
    pub kind: EventType,
    /// RFC 3339, UTC, to the millisecond.
    pub at: String,
    pub job: EventJob,
    /// The job's attempts so far (the one that started or ended included).
    pub attempt: u32,
    #[serde(flatten)]
    pub detail: EventDetail,
    /// Whose event it is, on a stream of every tenant's (which an admin
    /// follows); absent on a tenant's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}

/// The job an event is of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventJob {
    pub id: String,
    pub task: String,
    pub queue: String,
}

/// What an event's type adds, each absent where the type has none. The
/// fields are declared in the order the store writes them
/// (`store::outbox`), so an event reads the same as its row kept it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EventDetail {
    /// `job.step_*`: the stage's name, its kind (`step`, `fallback`,
    /// `on_error`, `on_cancel`) and task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(rename = "kind", skip_serializing_if = "Option::is_none")]
    pub step_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// `job.step_ended`: how the stage ended, after how many attempts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// `job.failed` (and a stage that failed): the attempt's error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JobError>,
    /// `job.failed`: whether the job goes on (a retry or its fallback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub will_retry: Option<bool>,
    /// The fallback task that takes over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Why the job was queued again or cancelled, and the job that took
    /// its place (`by`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// When the job runs next (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_at: Option<String>,
    /// `job.waiting`: what the guest said it waits for, any JSON (a JSON
    /// `null` too, so kept present rather than read as absent).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<Value>,
    /// `job.completed` without an attempt: the job whose cached output it took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
    /// What a newer store wrote that this version does not name: passed on
    /// as it came, so the server never drops a stored field; never read.
    #[serde(flatten)]
    more: Map<String, Value>,
}

/// A field that is there, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl EventView {
    /// The event as the tenant's readers see it.
    pub fn of(e: &Event) -> EventView {
        EventView {
            seq: e.seq,
            kind: e.kind,
            at: rfc3339(e.at),
            job: EventJob {
                id: e.job.clone(),
                task: e.task.clone(),
                queue: e.queue.clone(),
            },
            attempt: e.attempt,
            detail: e.detail.clone().map(EventDetail::of).unwrap_or_default(),
            tenant: None,
        }
    }

    /// The event on a stream of every tenant's, naming its tenant.
    pub fn across(e: &Event, tenant: String) -> EventView {
        EventView {
            tenant: Some(tenant),
            ..EventView::of(e)
        }
    }
}

impl EventDetail {
    /// A row's detail: times are Unix ms inside the store, RFC 3339 outside.
    fn of(mut stored: Map<String, Value>) -> EventDetail {
        if let Some(ms) = stored.get("run_at").and_then(Value::as_i64) {
            stored.insert("run_at".into(), rfc3339(ms).into());
        }
        // A field of a shape this version does not expect is passed on as
        // it was stored, not lost.
        serde_json::from_value(Value::Object(stored.clone())).unwrap_or(EventDetail {
            more: stored,
            ..EventDetail::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{decode, decode_body, EventFilter, EventRow, EventType};
    use crate::job::{ErrorKind, JobStatus};
    use crate::outbox::{self, About, Outbox};
    use crate::records::Action;

    fn about(id: &str) -> About<'_> {
        About {
            id,
            tenant: "t",
            task: "echo",
            queue: "q",
            attempt: 1,
        }
    }

    /// The events these writes recorded, each as the API writes it.
    fn written(o: &Outbox) -> Vec<String> {
        let c = &o.chunks()[0].1;
        decode_body(&c.body(), u64::from(c.n), c.n, 0)
            .unwrap()
            .iter()
            .map(|e| serde_json::to_string(&EventView::of(e)).unwrap())
            .collect()
    }

    const HEAD: &str =
        r#""at":"1970-01-01T00:00:00.000Z","job":{"id":"a","task":"echo","queue":"q"}"#;

    #[test]
    fn every_detail_the_store_writes_is_written_as_it_was_stored() {
        let mut o = Outbox::default();
        let error = JobError::new(ErrorKind::Timeout, "slow");
        let mut flaky = JobError::with_code(ErrorKind::TaskFailed, "E", "no");
        flaky.retryable = Some(false);
        let ends = [
            Action::Retry {
                delay_ms: 1000,
                error: error.clone(),
            },
            Action::Fail { error: flaky },
            Action::Snooze { delay_ms: 2000 },
            Action::Wait {
                waiting_for: r#"{"for":"approval"}"#.into(),
            },
            Action::Wait {
                waiting_for: "null".into(),
            },
            Action::Cancel,
        ];
        for end in &ends {
            o.ending(about("a"), end, JobStatus::Queued, 0);
        }
        o.superseded("t", "b", &[("a".into(), "echo".into(), "q".into(), 1)]);
        let time = "1970-01-01T00:00:01.000Z";
        let expected = [
            r#""type":"job.failed","#.to_owned()
                + HEAD
                + r#","attempt":1,"error":{"kind":"timeout","code":"timeout","message":"slow"},"will_retry":true}"#,
            format!(r#""type":"job.retrying",{HEAD},"attempt":1,"run_at":"{time}"}}"#),
            r#""type":"job.failed","#.to_owned()
                + HEAD
                + r#","attempt":1,"error":{"kind":"task_failed","code":"E","message":"no","retryable":false},"will_retry":false}"#,
            format!(
                r#""type":"job.queued",{HEAD},"attempt":1,"reason":"snoozed","run_at":"1970-01-01T00:00:02.000Z"}}"#
            ),
            format!(
                r#""type":"job.waiting",{HEAD},"attempt":1,"waiting_for":{{"for":"approval"}}}}"#
            ),
            format!(r#""type":"job.waiting",{HEAD},"attempt":1,"waiting_for":null}}"#),
            format!(r#""type":"job.cancelled",{HEAD},"attempt":1}}"#),
            format!(
                r#""type":"job.cancelled",{HEAD},"attempt":1,"reason":"superseded","by":"b"}}"#
            ),
        ];
        let got = written(&o);
        assert_eq!(got.len(), expected.len());
        for (n, (got, want)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(*got, format!(r#"{{"seq":{},{want}"#, n + 1));
        }
    }

    #[test]
    fn a_fallback_and_a_cached_job_read_in_the_stored_order() {
        let detail = |text: &str| {
            let stored = serde_json::from_str(text).unwrap();
            serde_json::to_string(&EventDetail::of(stored)).unwrap()
        };
        let failed = outbox::failed(&JobError::new(ErrorKind::Trap, "x"), true, Some("slow"));
        assert_eq!(
            detail(&failed),
            r#"{"error":{"kind":"trap","code":"trap","message":"x"},"will_retry":true,"fallback":"slow"}"#
        );
        assert_eq!(
            detail(r#"{"fallback":"slow","run_at":0}"#),
            r#"{"fallback":"slow","run_at":"1970-01-01T00:00:00.000Z"}"#
        );
        assert_eq!(detail(&outbox::cached("01J")), r#"{"cached_from":"01J"}"#);
        let ended = r#"{"step":"tell","kind":"on_error","task":"mail","status":"failed","attempts":2,"error":{"kind":"trap","code":"trap","message":"x"}}"#;
        assert_eq!(detail(ended), ended);
        // A field this version does not know, or of a shape it does not
        // expect, is passed on.
        assert_eq!(
            detail(r#"{"reason":"x","later":1}"#),
            r#"{"reason":"x","later":1}"#
        );
        assert_eq!(detail(r#"{"attempts":"two"}"#), r#"{"attempts":"two"}"#);
    }

    #[test]
    fn an_event_reads_back_as_it_was_written() {
        let rows = [EventRow {
            gseq: 1,
            tenant: "t".into(),
            seq: 7,
            n: 1,
            at: 0,
            body: r#"[["step_ended","j","flow","q",2,{"step":"a","kind":"step","task":"t","status":"completed","attempts":1}]]"#.into(),
        }];
        let e = &crate::events::decode(&rows).unwrap()[0];
        let view = EventView::across(e, "acme".into());
        let text = serde_json::to_string(&view).unwrap();
        assert!(text.ends_with(r#""attempts":1,"tenant":"acme"}"#), "{text}");
        let back: EventView = serde_json::from_str(&text).unwrap();
        assert_eq!(back, view);
        assert_eq!(back.detail.step_kind.as_deref(), Some("step"));
        assert_eq!(back.kind, EventType::StepEnded);
    }

    #[test]
    fn an_event_renders_its_detail_beside_its_fields() {
        let rows = [EventRow {
            gseq: 1,
            tenant: "t".into(),
            seq: 7,
            n: 1,
            at: 0,
            body: r#"[["retrying","j","echo","q",2,{"run_at":1000}]]"#.into(),
        }];
        let e = &decode(&rows).unwrap()[0];
        assert_eq!(e.seq, 7);
        let v = EventView::of(e);
        assert_eq!(v.kind, EventType::Retrying);
        assert_eq!(v.job.task, "echo");
        assert_eq!(v.detail.run_at.as_deref(), Some("1970-01-01T00:00:01.000Z"));
        assert!(EventFilter {
            types: Some(vec![EventType::Retrying]),
            queue: Some("q".into()),
            ..Default::default()
        }
        .matches(e));
        assert!(!EventFilter {
            job: Some("other".into()),
            ..Default::default()
        }
        .matches(e));
    }
}
