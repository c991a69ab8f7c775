//! `GET /v1/jobs/{id}/bundle?attempt=N`: what replaying one finished attempt
//! needs (`taskbox job replay`): its pinned component's bytes, the input
//! that attempt got, its limits, what the guest saw of its job, and what
//! was recorded of it, to compare. Needs `jobs:read`.
//!
//! Secrets are named, never included: the attempt's log and error were
//! redacted when it ended, and the grants list names only.
//!
//! The input is rebuilt as the runner built it: the job's own for its own
//! task; for a fallback, `{input, error}` of the stage before it, as
//! `runner::decision::fall_back` makes it. A workflow step's input is its
//! context at that step, which the records do not keep whole: such an
//! attempt is refused with a clear error rather than replayed on a guess.

use super::auth::Principal;
use super::body::QueryParams;
use super::error::ApiError;
use super::openapi::Errors;
use super::views::AttemptView;
use super::ApiState;
use crate::job::JobError;
use crate::store::{AttemptQuery, AttemptRecord, Scope};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

/// Attempts read to find the one asked for.
const MAX_ATTEMPTS_READ: usize = 10_000;
const PAGE: u32 = 500;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct BundleParams {
    /// The attempt's number in the job (1…); the last one when absent.
    attempt: Option<u32>,
}

/// What replaying one attempt needs.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Bundle<'a> {
    /// `taskbox-replay/1`.
    #[schema(value_type = String)]
    pub format: Cow<'a, str>,
    pub job: BundleJob<'a>,
    #[schema(value_type = AttemptView)]
    pub attempt: AttemptView<'a>,
    /// The input that attempt got.
    pub input: Value,
    pub limits: BundleLimits,
    pub grants: BundleGrants<'a>,
    pub component: BundleComponent<'a>,
    /// Whether the task is deterministic: its attempt ran on the job's
    /// virtual clock and seeded random bytes, and a replay must give the
    /// same output and fuel.
    #[serde(default)]
    pub deterministic: bool,
    /// The output the attempt gave, when it completed the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
}

/// What the task granted its guests: the hosts they could call and the
/// names of the secrets they could read, never the values. A replay
/// grants neither unless it is told to.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct BundleGrants<'a> {
    #[schema(value_type = Option<crate::registry::spec::NetworkSpec>)]
    pub network: Option<Cow<'a, crate::registry::spec::NetworkSpec>>,
    #[schema(value_type = Vec<String>)]
    pub secrets: Cow<'a, [String]>,
}

/// What the guest saw of its job.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct BundleJob<'a> {
    #[schema(value_type = String)]
    pub id: Cow<'a, str>,
    #[schema(value_type = String)]
    pub queue: Cow<'a, str>,
    /// The attempt's number within its stage (its task's or its fallback's).
    pub attempt: u32,
}

/// The limits the attempt ran under.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct BundleLimits {
    pub timeout_ms: u64,
    pub fuel: u64,
    pub memory_mb: u32,
}

/// The pinned component.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct BundleComponent<'a> {
    #[schema(value_type = String)]
    pub digest: Cow<'a, str>,
    pub size: usize,
    /// Its bytes, base64 (standard alphabet, padded).
    pub base64: String,
}

#[utoipa::path(get, path = "/v1/jobs/{id}/bundle", tag = "jobs",
    params(("id" = String, Path, description = "The job's id"), BundleParams),
    responses((status = 200, body = Bundle), Errors))]
pub async fn bundle(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    QueryParams(p): QueryParams<BundleParams>,
) -> Result<Response, ApiError> {
    who.require(Scope::JobsRead)?;
    let job = state
        .store
        .job_get(&who.tenant, &id)
        .await?
        .ok_or_else(|| ApiError::JobNotFound(id.clone()))?;
    let steps = state.store.job_steps(&id).await?;
    if steps.iter().any(|s| s.kind == crate::store::StepKind::Step) {
        return Err(ApiError::Conflict(format!(
            "job {id} is a workflow's; replaying its steps is not supported yet (a step's input is the workflow's context at that step, which is not kept whole)"
        )));
    }
    if let Some(from) = &job.cached_from {
        return Err(ApiError::Conflict(format!(
            "job {id} made no attempt: its task's result cache completed it with the output of job {from}; replay that one"
        )));
    }
    let attempts = all_attempts(&state, &who.tenant, &id).await?;
    let Some(last) = attempts.last() else {
        return Err(ApiError::Conflict(format!(
            "job {id} has no finished attempt to replay yet"
        )));
    };
    let number = p.attempt.unwrap_or(last.attempt);
    let Some(at) = attempts.iter().position(|a| a.attempt == number) else {
        return Err(ApiError::BadRequest(format!(
            "job {id} has no finished attempt {number}; its attempts are 1 to {}",
            last.attempt
        )));
    };
    let attempt = &attempts[at];
    let input = input_of(&job.input, &attempts[..=at]);
    // As the guest saw it: its number within the task that ran.
    let in_stage = attempts[..=at]
        .iter()
        .rev()
        .take_while(|a| a.task == attempt.task)
        .count() as u32;
    if let Some(task) = crate::verify::task_of(&attempt.task.name) {
        return Err(ApiError::Conflict(format!(
            "job {id} is a verification of task {task:?}: the host ran the candidate on recorded \
             jobs, there is no guest attempt of its own to replay; its output is the report"
        )));
    }
    let task = state
        .registry
        .task(&who.tenant, &attempt.task.name, Some(attempt.task.version))
        .await
        .map_err(|e| ApiError::Conflict(format!("the attempt's task cannot be read: {e}")))?;
    let bytes = state
        .store
        .component_bytes(&attempt.task.digest)
        .await?
        .ok_or_else(|| ApiError::ComponentNotFound(attempt.task.digest.clone()))?;
    let limits = task
        .limits
        .clamped(&state.registry.sandbox().config().ceilings);
    Ok(Json(Bundle {
        format: Cow::Borrowed("taskbox-replay/1"),
        job: BundleJob {
            id: Cow::Borrowed(&job.id),
            queue: Cow::Borrowed(&job.queue),
            attempt: in_stage,
        },
        attempt: super::views::attempt(attempt),
        input,
        limits: BundleLimits {
            timeout_ms: limits.timeout_ms,
            fuel: limits.fuel,
            memory_mb: limits.memory_mb,
        },
        grants: BundleGrants {
            network: task.spec.network.as_ref().map(Cow::Borrowed),
            secrets: Cow::Borrowed(&task.spec.secrets),
        },
        component: BundleComponent {
            digest: Cow::Borrowed(&attempt.task.digest),
            size: bytes.len(),
            base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
        },
        deterministic: task.spec.deterministic,
        output: job
            .output
            .as_deref()
            .filter(|_| attempt.outcome == "completed")
            .map(|o| serde_json::from_str(o).unwrap_or_else(|_| Value::String(o.to_owned()))),
    })
    .into_response())
}

async fn all_attempts(
    state: &ApiState,
    tenant: &str,
    id: &str,
) -> Result<Vec<AttemptRecord>, ApiError> {
    let mut out: Vec<AttemptRecord> = Vec::new();
    loop {
        let page = state
            .store
            .attempt_list(AttemptQuery {
                tenant: tenant.to_owned(),
                job_id: id.to_owned(),
                after: out.last().map(|a| a.attempt),
                limit: PAGE,
            })
            .await?;
        let n = page.len();
        out.extend(page);
        if n < PAGE as usize || out.len() >= MAX_ATTEMPTS_READ {
            return Ok(out);
        }
    }
}

/// The input the last of `attempts` got: the job's own, wrapped once for
/// each time another task took over (`{input, error}`, the error of the
/// last attempt before it), as `runner::decision::fall_back` wraps it.
fn input_of(job_input: &str, attempts: &[AttemptRecord]) -> Value {
    let mut input: Value = serde_json::from_str(job_input).unwrap_or(Value::Null);
    for pair in attempts.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        if before.task != after.task {
            let error = before.error.as_ref().map_or(Value::Null, JobError::brief);
            input = json!({"input": input, "error": error});
        }
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{ErrorKind, JobError};
    use crate::store::TaskRef;

    fn attempt(n: u32, task: &str, error: Option<JobError>) -> AttemptRecord {
        AttemptRecord {
            attempt: n,
            task: TaskRef {
                name: task.into(),
                version: 1,
                digest: "sha256:0".into(),
            },
            started_at: 0,
            finished_at: 1,
            outcome: "failed".into(),
            error,
            fuel_used: 0,
            peak_memory_bytes: 0,
            log: None,
            network: None,
        }
    }

    #[test]
    fn a_fallbacks_input_is_rebuilt_as_the_runner_made_it() {
        let boom = JobError::with_code(ErrorKind::TaskFailed, "boom", "it broke");
        let own = [
            attempt(1, "own", Some(boom.clone())),
            attempt(2, "own", Some(boom)),
        ];
        assert_eq!(input_of(r#"{"a":1}"#, &own), json!({"a": 1}));
        let fell = [own[0].clone(), own[1].clone(), attempt(3, "fallback", None)];
        assert_eq!(
            input_of(r#"{"a":1}"#, &fell),
            json!({"input": {"a": 1}, "error": {"kind": "task_failed", "code": "boom", "message": "it broke"}})
        );
    }
}
