//! What the API answers: records rendered in the contract's JSON shapes,
//! and read back from them by the CLI. Borrowed text is a `Cow`: the
//! server writes it from its records without a copy, and a client reads
//! it owned.

use crate::attempt_log::AttemptLog;
use crate::job::{ErrorKind, JobError, JobStatus};
use crate::registry::spec::TaskSpec;
use crate::store::clock::rfc3339;
use crate::store::{
    AttemptRecord, CallKind, CallRecord, JobRecord, ProgressRecord, StepKind, StepRecord,
    StepStatus, TaskRecord, TaskRef,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use utoipa::ToSchema;

/// Stored JSON text as a value; text that is not JSON stays a string.
fn json_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// Stored JSON text, written as it is; text that is not JSON is written
/// as a string. A client reads it back as the value it is.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Embedded<'a> {
    Json(&'a RawValue),
    Text(&'a str),
    Read(Value),
}

impl<'a> Embedded<'a> {
    fn of(text: &'a str) -> Self {
        serde_json::from_str(text).map_or(Embedded::Text(text), Embedded::Json)
    }

    /// The value, as the answer carries it.
    pub fn value(&self) -> Value {
        match self {
            Embedded::Json(raw) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
            Embedded::Text(text) => Value::String((*text).to_owned()),
            Embedded::Read(v) => v.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for Embedded<'_> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Embedded::Read)
    }
}

/// A job's error as the API shows it (`JobError::brief`'s shape).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = JobErrorView)]
pub struct ErrorView<'a> {
    pub kind: ErrorKind,
    pub code: Cow<'a, str>,
    pub message: Cow<'a, str>,
}

impl<'a> ErrorView<'a> {
    pub fn of(e: &'a JobError) -> Self {
        ErrorView {
            kind: e.kind,
            code: Cow::Borrowed(&e.code),
            message: Cow::Borrowed(&e.message),
        }
    }
}

/// A job as the API shows it, written straight to the answer's text (a
/// list or a batch renders many: no tree of values in between).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = Job)]
pub struct JobView<'a> {
    #[schema(example = "01JD8Z6W3R5V4K2M9N7P1Q0XYZ")]
    pub id: Cow<'a, str>,
    /// Whose job it is.
    #[serde(default)]
    pub tenant: Cow<'a, str>,
    #[schema(value_type = TaskRef)]
    pub task: Cow<'a, TaskRef>,
    pub status: JobStatus,
    pub queue: Cow<'a, str>,
    pub priority: i32,
    /// The job's input, as it was enqueued.
    #[schema(value_type = Value)]
    pub input: Embedded<'a>,
    /// The task's output, once it completed.
    #[schema(value_type = Option<Value>)]
    pub output: Option<Embedded<'a>>,
    #[schema(value_type = Option<ErrorView>)]
    pub error: Option<ErrorView<'a>>,
    pub attempts: u32,
    pub max_attempts: u32,
    /// RFC 3339 times, UTC, to the millisecond.
    pub run_at: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub concurrency_key: Option<Cow<'a, str>>,
    pub unique_key: Option<Cow<'a, str>>,
    #[schema(value_type = Option<ProgressRecord>)]
    pub progress: Option<Cow<'a, ProgressRecord>>,
    /// What a waiting job waits for, as the guest said it.
    #[schema(value_type = Option<Value>)]
    pub waiting_for: Option<Embedded<'a>>,
    /// The fallback task running it, once its own task failed for good.
    #[schema(value_type = Option<TaskRef>)]
    pub fallback: Option<Cow<'a, TaskRef>>,
    pub deadline_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expire_after_ms: Option<u64>,
    pub cancel_requested: bool,
    /// The job whose output this one took from its task's result cache,
    /// without an attempt; absent for a job that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<Cow<'a, str>>,
    /// Its throttle, with the key made from its input. A job waiting its
    /// turn is queued with its `run_at` at that turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::store::throttle::Throttle>)]
    pub throttle: Option<Cow<'a, crate::store::throttle::Throttle>>,
    /// Its debounce: on an enqueue's answer, `replaced` says whether it
    /// debounced another; a job replaced ends `cancelled` naming its
    /// `successor`, which runs in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debounce: Option<DebounceView<'a>>,
    /// The key its tenant's claims share the runners' time by, when it
    /// named one (else its concurrency key is), and the key's weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness_key: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness_weight: Option<u32>,
    /// The trace the job continues (the enqueue's `traceparent` header,
    /// or the attempt of the job that made it), as the W3C `traceparent`
    /// of the job's enqueue span in it. Absent: the job's trace is its
    /// own, and its trace id is its id's 128 bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<Cow<'a, str>>,
}

/// A debounced job's key and chain.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DebounceView<'a> {
    /// The key, made from its input.
    pub key: Cow<'a, str>,
    pub period_ms: u64,
    /// As declared, or its default (ten periods).
    pub max_wait_ms: u64,
    /// When its chain's first job was enqueued (RFC 3339): it runs no later
    /// than `max_wait_ms` after.
    pub since: String,
    /// The pending job it replaced (it was cancelled), if any.
    pub replaced: Option<Cow<'a, str>>,
    /// The job that replaced it, once one did.
    pub successor: Option<Cow<'a, str>>,
}

impl<'a> DebounceView<'a> {
    fn of(d: &'a crate::store::debounce::Debounced) -> Self {
        DebounceView {
            key: Cow::Borrowed(&d.spec.key),
            period_ms: d.spec.period_ms,
            max_wait_ms: d.spec.max_wait(),
            since: rfc3339(d.since),
            replaced: d.replaced.as_deref().map(Cow::Borrowed),
            successor: d.successor.as_deref().map(Cow::Borrowed),
        }
    }
}

impl<'a> JobView<'a> {
    pub fn of(j: &'a JobRecord) -> Self {
        JobView {
            id: Cow::Borrowed(&j.id),
            tenant: Cow::Borrowed(&j.tenant),
            task: Cow::Borrowed(&j.task),
            status: j.status,
            queue: Cow::Borrowed(&j.queue),
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
            concurrency_key: j.concurrency_key.as_deref().map(Cow::Borrowed),
            unique_key: j.unique_key.as_deref().map(Cow::Borrowed),
            progress: j.progress.as_ref().map(Cow::Borrowed),
            waiting_for: j.waiting_for.as_deref().map(Embedded::of),
            fallback: j.fallback.as_ref().map(Cow::Borrowed),
            deadline_at: j.deadline_at.map(rfc3339),
            expire_after_ms: j.expire_after_ms,
            cancel_requested: j.cancel_requested,
            cached_from: j.cached_from.as_deref().map(Cow::Borrowed),
            throttle: j.throttle.as_ref().map(Cow::Borrowed),
            debounce: j.debounce.as_ref().map(DebounceView::of),
            fairness_key: j.fairness_key.as_deref().map(Cow::Borrowed),
            fairness_weight: j.fairness_weight,
            traceparent: j.traceparent.as_deref().map(Cow::Borrowed),
        }
    }
}

pub fn job(j: &JobRecord) -> Value {
    serde_json::to_value(JobView::of(j)).unwrap_or(Value::Null)
}

/// A job answered on its own: written as `JobView` shows it.
pub struct JobOut(pub JobRecord);

impl Serialize for JobOut {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        JobView::of(&self.0).serialize(s)
    }
}

/// A job with its stages, as `GET /v1/jobs/{id}` shows it: a workflow
/// job names its workflow and lists every stage, its `on_error` and
/// `on_cancel` ones included (the active stage shows the job's status); a
/// job that spawned children lists them, and a child names its parent.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = JobDetail)]
pub struct JobDetail<'a> {
    #[serde(flatten)]
    #[schema(inline)]
    pub job: JobView<'a>,
    /// The job that spawned this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<Cow<'a, str>>,
    /// The jobs this one spawned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Cow<'a, str>>,
    /// The callbacks its ends made (its task's `on_success` or
    /// `on_fail`), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callbacks: Vec<CallbackView<'a>>,
    /// The job whose end made this one as its callback.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_of: Option<CallbackView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowRef<'a>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepView<'a>>,
}

/// A callback: which (`on_success` or `on_fail`), the job on the other
/// side (the callback's, or the job whose end made it) and the callback's
/// task.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = Callback)]
pub struct CallbackView<'a> {
    pub kind: Cow<'a, str>,
    pub job: Cow<'a, str>,
    pub task: Cow<'a, str>,
}

/// The workflow version a job runs.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowRef<'a> {
    pub name: Cow<'a, str>,
    pub version: u32,
}

/// One stage of a job.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = Step)]
pub struct StepView<'a> {
    /// Its place among the job's stages, from 0 (what an attempt's
    /// `step.seq` names).
    pub seq: u32,
    pub name: Cow<'a, str>,
    /// `step`, `fallback`, `on_error` or `on_cancel`.
    pub kind: Cow<'a, str>,
    #[schema(value_type = TaskRef)]
    pub task: Cow<'a, TaskRef>,
    /// The job's status while it is the active stage; else `pending`,
    /// `completed`, `failed`, `cancelled` or `skipped`.
    pub status: Cow<'a, str>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub output: Option<Value>,
    #[schema(value_type = Option<ErrorView>)]
    pub error: Option<ErrorView<'a>>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
}

/// A job with stages keeps the one running in its fallback columns, a
/// workflow step as well as a fallback: what it shows as its `fallback`
/// is the last fallback stage that ran, or none.
fn fallback_that_ran(steps: &[StepRecord]) -> Option<Cow<'_, TaskRef>> {
    steps
        .iter()
        .filter(|s| s.kind == StepKind::Fallback && s.started_at.is_some())
        .filter(|s| !matches!(s.status, StepStatus::Pending | StepStatus::Skipped))
        .max_by_key(|s| (s.started_at, s.seq))
        .map(|s| Cow::Borrowed(&s.task))
}

/// What a job's page shows of where it came from: the job that spawned
/// it, and the job whose end made it as a callback.
pub struct Origin<'a> {
    pub parent: Option<&'a str>,
    pub callback_of: Option<&'a CallRecord>,
}

pub fn job_with_steps<'a>(
    j: &'a JobRecord,
    steps: &'a [StepRecord],
    calls: &'a [CallRecord],
    origin: Origin<'a>,
) -> JobDetail<'a> {
    let children = calls
        .iter()
        .filter(|c| c.kind == CallKind::Spawn)
        .map(|c| Cow::Borrowed(c.result.as_str()))
        .collect();
    let callback = |c: &'a CallRecord, job: &'a str| CallbackView {
        kind: Cow::Borrowed(c.callback_kind()),
        job: Cow::Borrowed(job),
        task: Cow::Borrowed(&c.task),
    };
    let callbacks = calls
        .iter()
        .filter(|c| c.kind == CallKind::Callback)
        .map(|c| callback(c, &c.result))
        .collect();
    let callback_of = origin.callback_of.map(|c| callback(c, &c.job_id));
    let mut job = JobView::of(j);
    if !steps.is_empty() {
        job.fallback = fallback_that_ran(steps);
    }
    let workflow = steps
        .iter()
        .any(|s| s.kind == StepKind::Step)
        .then(|| WorkflowRef {
            name: Cow::Borrowed(&j.task.name),
            version: j.task.version,
        });
    let steps = steps
        .iter()
        .map(|s| StepView {
            seq: s.seq,
            name: Cow::Borrowed(&s.name),
            kind: Cow::Borrowed(s.kind.as_str()),
            task: Cow::Borrowed(&s.task),
            status: Cow::Borrowed(match s.status {
                StepStatus::Active => j.status.as_str(),
                other => other.as_str(),
            }),
            attempts: s.attempts,
            max_attempts: s.max_attempts,
            output: s.output.as_deref().map(json_text),
            error: s.error.as_ref().map(ErrorView::of),
            started_at: s.started_at.map(rfc3339),
            finished_at: s.finished_at.map(rfc3339),
        })
        .collect();
    JobDetail {
        job,
        parent: origin.parent.map(Cow::Borrowed),
        children,
        callbacks,
        callback_of,
        workflow,
        steps,
    }
}

/// One finished attempt.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = Attempt)]
pub struct AttemptView<'a> {
    pub attempt: u32,
    /// The task version it ran (a fallback's, once one took over).
    #[schema(value_type = TaskRef)]
    pub task: Cow<'a, TaskRef>,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: i64,
    /// `completed`, `failed`, `retried`, `snoozed`, `waiting`, `cancelled`
    /// or `fallback`.
    pub outcome: Cow<'a, str>,
    #[schema(value_type = Option<ErrorView>)]
    pub error: Option<ErrorView<'a>>,
    pub fuel_used: u64,
    pub peak_memory_bytes: u64,
    #[schema(value_type = Option<AttemptLog>)]
    pub log: Option<Cow<'a, AttemptLog>>,
    /// What its outbound HTTP did; absent when it made no request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::network_tally::NetworkTally>,
    /// The stage it ran in, for a job with stages (a workflow's, or one
    /// whose fallback took over); absent for a job of one task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<AttemptStep<'a>>,
}

/// The stage an attempt ran in.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AttemptStep<'a> {
    pub seq: u32,
    pub name: Cow<'a, str>,
    /// `task`, `step`, `fallback`, `on_error` or `on_cancel`.
    pub kind: Cow<'a, str>,
}

/// The attempts of a job, each with the stage it ran in.
pub fn attempts<'a>(list: &'a [AttemptRecord], steps: &'a [StepRecord]) -> Vec<AttemptView<'a>> {
    let placed = crate::workflow::place::stages_of(steps, list);
    list.iter()
        .zip(placed)
        .map(|(a, seq)| {
            let mut view = attempt(a);
            view.step = seq
                .and_then(|seq| steps.iter().find(|s| s.seq == seq))
                .map(|s| AttemptStep {
                    seq: s.seq,
                    name: Cow::Borrowed(&s.name),
                    kind: Cow::Borrowed(s.kind.as_str()),
                });
            view
        })
        .collect()
}

pub fn attempt(a: &AttemptRecord) -> AttemptView<'_> {
    AttemptView {
        attempt: a.attempt,
        task: Cow::Borrowed(&a.task),
        started_at: rfc3339(a.started_at),
        finished_at: rfc3339(a.finished_at),
        duration_ms: (a.finished_at - a.started_at).max(0),
        outcome: Cow::Borrowed(&a.outcome),
        error: a.error.as_ref().map(ErrorView::of),
        fuel_used: a.fuel_used,
        peak_memory_bytes: a.peak_memory_bytes,
        log: a.log.as_ref().map(Cow::Borrowed),
        network: a.network,
        step: None,
    }
}

/// A task's newest version, as `GET /v1/tasks` lists it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TaskSummary<'a> {
    pub tenant: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub version: u32,
    pub digest: Cow<'a, str>,
    pub queue: String,
    pub created_at: String,
}

pub fn task_summary(t: &TaskRecord) -> TaskSummary<'_> {
    let spec: Option<TaskSpec> = serde_json::from_str(&t.spec).ok();
    TaskSummary {
        tenant: Cow::Borrowed(&t.tenant),
        name: Cow::Borrowed(&t.name),
        version: t.version,
        digest: Cow::Borrowed(&t.digest),
        queue: spec
            .and_then(|s| s.queue)
            .unwrap_or_else(|| "default".into()),
        created_at: rfc3339(t.created_at),
    }
}

/// A task: its live version's definition, every version, and the
/// rollout of a staged one.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = Task)]
pub struct TaskView<'a> {
    pub name: Cow<'a, str>,
    /// The live version: what new jobs pin outside a rollout's share.
    pub version: u32,
    pub digest: Cow<'a, str>,
    pub created_at: String,
    /// The live version's definition, as `PUT /v1/tasks/{name}` took it.
    pub definition: Value,
    pub versions: Vec<TaskVersionView<'a>>,
    /// The version being rolled out beside the live one, if one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutView>,
}

/// Where a version stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionState {
    /// What new jobs pin.
    Live,
    /// Being rolled out: a share of new jobs pins it.
    Staged,
    /// Its rollout was rolled back; new jobs never pin it.
    RolledBack,
    /// A later version went live.
    Superseded,
}

/// One version of a task.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = TaskVersion)]
pub struct TaskVersionView<'a> {
    pub version: u32,
    pub digest: Cow<'a, str>,
    pub created_at: String,
    pub state: VersionState,
    /// When it was staged, for a version that was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolled_back_at: Option<String>,
}

/// A rollout in progress: the staged version's share, and what each of
/// the two versions did in the jobs made since it began.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RolloutView {
    /// The staged version.
    pub version: u32,
    /// The live version the rest of the jobs pin.
    pub live_version: u32,
    /// The share of new jobs that pins the staged version.
    pub percent: u8,
    pub started_at: String,
    /// The staged version's figures, then the live one's.
    pub figures: Vec<crate::store::VersionFigures>,
}

/// The live version of a task among its versions (oldest first): the
/// newest neither staged nor rolled back.
pub fn live_version(versions: &[TaskRecord]) -> Option<&TaskRecord> {
    versions.iter().rev().find(|v| v.is_live())
}

/// A task's versions as `GET /v1/tasks/{name}` shows them; `rollout`, the
/// figures of a rollout in progress (`None` when none is).
pub fn task<'a>(versions: &'a [TaskRecord], rollout: Option<RolloutView>) -> Option<TaskView<'a>> {
    let live = live_version(versions)?;
    Some(TaskView {
        name: Cow::Borrowed(&live.name),
        version: live.version,
        digest: Cow::Borrowed(&live.digest),
        created_at: rfc3339(live.created_at),
        definition: json_text(&live.spec),
        versions: versions
            .iter()
            .map(|v| TaskVersionView {
                version: v.version,
                digest: Cow::Borrowed(&v.digest),
                created_at: rfc3339(v.created_at),
                state: if v.rolled_back_at.is_some() {
                    VersionState::RolledBack
                } else if v.rollout_percent.is_some() {
                    VersionState::Staged
                } else if v.version == live.version {
                    VersionState::Live
                } else {
                    VersionState::Superseded
                },
                rollout_started_at: v.rollout_started_at.map(rfc3339),
                rolled_back_at: v.rolled_back_at.map(rfc3339),
            })
            .collect(),
        rollout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::ErrorKind;
    use serde_json::json;

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
                "tenant",
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
