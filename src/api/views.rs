//! What the API answers: records rendered in the contract's JSON shapes.

use crate::registry::spec::TaskSpec;
use crate::store::clock::rfc3339;
use crate::store::{AttemptRecord, JobRecord, TaskRecord};
use serde_json::{json, Value};

/// Stored JSON text as a value; text that is not JSON stays a string.
fn json_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

pub fn job(j: &JobRecord) -> Value {
    json!({
        "id": j.id,
        "task": j.task,
        "status": j.status,
        "queue": j.queue,
        "priority": j.priority,
        "input": json_text(&j.input),
        "output": j.output.as_deref().map(json_text),
        "error": j.error.as_ref().map(|e| json!({"kind": e.kind, "code": e.code, "message": e.message})),
        "attempts": j.attempts,
        "max_attempts": j.max_attempts,
        "run_at": rfc3339(j.run_at),
        "created_at": rfc3339(j.created_at),
        "started_at": j.started_at.map(rfc3339),
        "finished_at": j.finished_at.map(rfc3339),
        "concurrency_key": j.concurrency_key,
        "unique_key": j.unique_key,
        "progress": j.progress,
        "waiting_for": j.waiting_for.as_deref().map(json_text),
        "fallback": j.fallback,
        "deadline_at": j.deadline_at.map(rfc3339),
        "cancel_requested": j.cancel_requested,
    })
}

pub fn attempt(a: &AttemptRecord) -> Value {
    json!({
        "attempt": a.attempt,
        "task": a.task,
        "started_at": rfc3339(a.started_at),
        "finished_at": rfc3339(a.finished_at),
        "duration_ms": (a.finished_at - a.started_at).max(0),
        "outcome": a.outcome,
        "error": a.error.as_ref().map(|e| json!({"kind": e.kind, "code": e.code, "message": e.message})),
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
