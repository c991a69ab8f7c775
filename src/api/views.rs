//! What the API answers: records rendered in the contract's JSON shapes.

use crate::job::{ErrorKind, JobError, JobStatus};
use crate::registry::spec::TaskSpec;
use crate::store::clock::rfc3339;
use crate::store::{
    AttemptRecord, CallKind, CallRecord, JobRecord, ProgressRecord, StepKind, StepRecord,
    StepStatus, TaskRecord, TaskRef,
};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// Stored JSON text as a value; text that is not JSON stays a string.
fn json_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// Stored JSON text, written as it is; text that is not JSON is written
/// as a string.
#[derive(Serialize)]
#[serde(untagged)]
enum Embedded<'a> {
    Json(&'a RawValue),
    Text(&'a str),
}

impl<'a> Embedded<'a> {
    fn of(text: &'a str) -> Self {
        serde_json::from_str(text).map_or(Embedded::Text(text), Embedded::Json)
    }
}

#[derive(Serialize)]
struct ErrorView<'a> {
    kind: ErrorKind,
    code: &'a str,
    message: &'a str,
}

impl<'a> ErrorView<'a> {
    fn of(e: &'a JobError) -> Self {
        ErrorView {
            kind: e.kind,
            code: &e.code,
            message: &e.message,
        }
    }
}

/// A job as the API shows it, written straight to the answer's text (a
/// list or a batch renders many: no tree of values in between).
#[derive(Serialize)]
pub struct JobView<'a> {
    id: &'a str,
    task: &'a TaskRef,
    status: JobStatus,
    queue: &'a str,
    priority: i32,
    input: Embedded<'a>,
    output: Option<Embedded<'a>>,
    error: Option<ErrorView<'a>>,
    attempts: u32,
    max_attempts: u32,
    run_at: String,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
    concurrency_key: Option<&'a str>,
    unique_key: Option<&'a str>,
    progress: Option<&'a ProgressRecord>,
    waiting_for: Option<Embedded<'a>>,
    fallback: Option<&'a TaskRef>,
    deadline_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expire_after_ms: Option<u64>,
    cancel_requested: bool,
}

impl<'a> JobView<'a> {
    pub fn of(j: &'a JobRecord) -> Self {
        JobView {
            id: &j.id,
            task: &j.task,
            status: j.status,
            queue: &j.queue,
            priority: j.priority,
            input: Embedded::of(&j.input),
            output: j.output.as_deref().map(Embedded::of),
            error: j.error.as_ref().map(ErrorView::of),
            attempts: j.attempts,
            max_attempts: j.max_attempts,
            run_at: rfc3339(j.run_at),
            created_at: rfc3339(j.created_at),
            started_at: j.started_at.map(rfc3339),
            finished_at: j.finished_at.map(rfc3339),
            concurrency_key: j.concurrency_key.as_deref(),
            unique_key: j.unique_key.as_deref(),
            progress: j.progress.as_ref(),
            waiting_for: j.waiting_for.as_deref().map(Embedded::of),
            fallback: j.fallback.as_ref(),
            deadline_at: j.deadline_at.map(rfc3339),
            expire_after_ms: j.expire_after_ms,
            cancel_requested: j.cancel_requested,
        }
    }
}

pub fn job(j: &JobRecord) -> Value {
    serde_json::to_value(JobView::of(j)).unwrap_or(Value::Null)
}

/// A job with its stages, as `GET /v1/jobs/{id}` shows it: a workflow
/// job names its workflow and lists every stage, its `on_error` and
/// `on_cancel` ones included (the active stage shows the job's status); a
/// job that spawned children lists them, and a child names its parent.
pub fn job_with_steps(
    j: &JobRecord,
    steps: &[StepRecord],
    calls: &[CallRecord],
    parent: Option<&str>,
) -> Value {
    let mut v = job(j);
    if let Some(p) = parent {
        v["parent"] = json!(p);
    }
    let children: Vec<&str> = calls
        .iter()
        .filter(|c| c.kind == CallKind::Spawn)
        .map(|c| c.result.as_str())
        .collect();
    if !children.is_empty() {
        v["children"] = json!(children);
    }
    if steps.is_empty() {
        return v;
    }
    if steps.iter().any(|s| s.kind == StepKind::Step) {
        v["workflow"] = json!({"name": j.task.name, "version": j.task.version});
    }
    v["steps"] = steps
        .iter()
        .map(|s| {
            let status = match s.status {
                StepStatus::Active => j.status.as_str(),
                other => other.as_str(),
            };
            json!({
                "name": s.name,
                "kind": s.kind.as_str(),
                "task": s.task,
                "status": status,
                "attempts": s.attempts,
                "max_attempts": s.max_attempts,
                "output": s.output.as_deref().map(json_text),
                "error": s.error.as_ref().map(JobError::brief),
                "started_at": s.started_at.map(rfc3339),
                "finished_at": s.finished_at.map(rfc3339),
            })
        })
        .collect();
    v
}

pub fn attempt(a: &AttemptRecord) -> Value {
    json!({
        "attempt": a.attempt,
        "task": a.task,
        "started_at": rfc3339(a.started_at),
        "finished_at": rfc3339(a.finished_at),
        "duration_ms": (a.finished_at - a.started_at).max(0),
        "outcome": a.outcome,
        "error": a.error.as_ref().map(JobError::brief),
        "fuel_used": a.fuel_used,
        "peak_memory_bytes": a.peak_memory_bytes,
        "log": a.log,
    })
}

pub fn task_summary(t: &TaskRecord) -> Value {
    let spec: Option<TaskSpec> = serde_json::from_str(&t.spec).ok();
    json!({
        "name": t.name,
        "version": t.version,
        "digest": t.digest,
        "queue": spec.as_ref().and_then(|s| s.queue.clone()).unwrap_or_else(|| "default".into()),
        "created_at": rfc3339(t.created_at),
    })
}

pub fn task(latest: &TaskRecord, versions: &[TaskRecord]) -> Value {
    json!({
        "name": latest.name,
        "version": latest.version,
        "digest": latest.digest,
        "created_at": rfc3339(latest.created_at),
        "definition": json_text(&latest.spec),
        "versions": versions.iter().map(|v| json!({
            "version": v.version,
            "digest": v.digest,
            "created_at": rfc3339(v.created_at),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::ErrorKind;

    fn record() -> JobRecord {
        let task = TaskRef {
            name: "t".into(),
            version: 2,
            digest: "sha256:ab".into(),
        };
        let mut j =
            crate::store::NewJob::plain("01J", "default", task.clone(), r#"{"b": 1, "a": [2]}"#)
                .into_record(1_700_000_000_000, 1_700_000_000_500);
        j.output = Some("not json".into());
        j.error = Some(JobError::with_code(
            ErrorKind::TaskFailed,
            "nope",
            "it said no",
        ));
        j.fallback = Some(task);
        j
    }

    #[test]
    fn a_job_is_written_as_the_contract_shows_it() {
        let v = job(&record());
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "id",
                "task",
                "status",
                "queue",
                "priority",
                "input",
                "output",
                "error",
                "attempts",
                "max_attempts",
                "run_at",
                "created_at",
                "started_at",
                "finished_at",
                "concurrency_key",
                "unique_key",
                "progress",
                "waiting_for",
                "fallback",
                "deadline_at",
                "cancel_requested"
            ]
        );
        // Stored JSON is embedded as JSON, in its own order; other text as a string.
        assert_eq!(v["input"], json!({"b": 1, "a": [2]}));
        assert_eq!(v["output"], "not json");
        assert_eq!(
            v["error"],
            json!({"kind": "task_failed", "code": "nope", "message": "it said no"})
        );
        assert_eq!(v["status"], "queued");
        assert_eq!(
            v["task"],
            json!({"name": "t", "version": 2, "digest": "sha256:ab"})
        );
        assert_eq!(v["run_at"], "2023-11-14T22:13:20.500Z");
        assert_eq!(v["started_at"], Value::Null);
        // Written straight to text, the same.
        let text = serde_json::to_string(&JobView::of(&record())).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
        assert!(text.contains(r#""input":{"b": 1, "a": [2]}"#), "{text}");
    }
}
