//! A workflow definition as `PUT /v1/workflows/{name}` takes it: named
//! steps, each a task of the tenant's with its own retry policy, limits,
//! fallback and time budget, run one after another on a shared context;
//! `on_error` and `on_cancel` chains; a deadline and an input schema. The
//! checks here need no store; `Registry::define_workflow` adds those that
//! do (each named task exists, the schema compiles).

use super::spec::check_name;
use crate::limits_spec::LimitsSpec;
use crate::retry::RetryPolicy;
use serde::{Deserialize, Serialize};

/// Most steps a workflow may have, its `on_error` and `on_cancel` chains
/// included.
pub const MAX_STEPS: usize = 64;
/// Longest a workflow's deadline or a step's budget may be: a year.
pub const MAX_MS: u64 = crate::bounds::MAX_DELAY_MS;

/// One step: a task run on the workflow's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// Unique within the workflow (its steps and chains together).
    pub name: String,
    /// The task it runs (pinned, with its version, when a job is enqueued).
    pub task: String,
    /// Its own retry policy; the task's when left out.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub retry: Option<RetryPolicy>,
    /// Its own limits per attempt; the task's when left out.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub limits: Option<LimitsSpec>,
    /// The step's budget across all its attempts, from its first start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// A task run when the step fails for good; the task's when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// The body of `PUT /v1/workflows/{name}`. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowSpec {
    #[serde(deserialize_with = "crate::strict::objects")]
    pub steps: Vec<StepSpec>,
    /// Run, with the context and the error, when a step fails for good.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::strict::objects"
    )]
    pub on_error: Vec<StepSpec>,
    /// Run, with the context, when a job of the workflow is cancelled.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::strict::objects"
    )]
    pub on_cancel: Vec<StepSpec>,
    /// Bounds a job across all its steps, from enqueue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<serde_json::Value>,
    /// Whether a retried job keeps its completed steps' results (and does
    /// not run them again); `false` starts it over.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub restore: bool,
    /// The queue its jobs go to unless the enqueue names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl WorkflowSpec {
    /// Every step, with the chain it is in: `steps`, `on_error`, `on_cancel`.
    pub fn all_steps(&self) -> impl Iterator<Item = (&'static str, &StepSpec)> {
        self.steps
            .iter()
            .map(|s| ("steps", s))
            .chain(self.on_error.iter().map(|s| ("on_error", s)))
            .chain(self.on_cancel.iter().map(|s| ("on_cancel", s)))
    }

    /// Checks what can be checked without the store; each problem names
    /// the step it is in and what to do.
    pub fn validate(&self, name: &str) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        problems.extend(check_name("workflow", name).err());
        if self.steps.is_empty() {
            problems.push("steps must hold at least one step".into());
        }
        let total = self.steps.len() + self.on_error.len() + self.on_cancel.len();
        if total > MAX_STEPS {
            problems.push(format!(
                "a workflow has at most {MAX_STEPS} steps (its on_error and on_cancel ones included), not {total}"
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, (chain, step)) in self.all_steps().enumerate() {
            let at = if step.name.is_empty() {
                format!("{chain} step {}", i + 1)
            } else {
                format!("{chain} step {:?}", step.name)
            };
            if let Err(e) = check_name("step", &step.name) {
                problems.push(format!("{at}: {e}"));
            } else if !seen.insert(step.name.as_str()) {
                problems.push(format!(
                    "{at}: another step has that name; each step needs its own"
                ));
            }
            if let Err(e) = check_name("task", &step.task) {
                problems.push(format!("{at}: {e}"));
            }
            if let Some(f) = &step.fallback {
                if let Err(e) = check_name("fallback task", f) {
                    problems.push(format!("{at}: {e}"));
                }
            }
            if let Some(r) = &step.retry {
                if let Err(p) = r.validate() {
                    problems.extend(p.into_iter().map(|p| format!("{at}: {p}")));
                }
            }
            if let Some(l) = &step.limits {
                for (field, zero) in [
                    ("timeout_ms", l.timeout_ms == Some(0)),
                    ("fuel", l.fuel == Some(0)),
                    ("memory_mb", l.memory_mb == Some(0)),
                ] {
                    if zero {
                        problems.push(format!("{at}: limits.{field} must be at least 1"));
                    }
                }
            }
            if step.timeout_ms.is_some_and(|t| t == 0 || t > MAX_MS) {
                problems.push(format!("{at}: timeout_ms must be between 1 and {MAX_MS}"));
            }
        }
        if self.deadline_ms.is_some_and(|d| d == 0 || d > MAX_MS) {
            problems.push(format!("deadline_ms must be between 1 and {MAX_MS}"));
        }
        if let Some(q) = &self.queue {
            problems.extend(check_name("queue", q).err());
        }
        if let Some(s) = &self.input_schema {
            if !(s.is_object() || s.is_boolean()) {
                problems.push("input_schema must be a JSON Schema: an object or a boolean".into());
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    /// The tasks it names (steps and fallbacks), each once, in order.
    pub fn tasks(&self) -> Vec<(String, &str)> {
        let mut out: Vec<(String, &str)> = Vec::new();
        for (chain, step) in self.all_steps() {
            let at = format!("{chain} step {:?}", step.name);
            for t in std::iter::once(&step.task).chain(step.fallback.as_ref()) {
                if !out.iter().any(|(_, o)| *o == t.as_str()) {
                    out.push((at.clone(), t.as_str()));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(v: serde_json::Value) -> WorkflowSpec {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_good_definition_passes_and_round_trips() {
        let w = spec(json!({
            "steps": [
                {"name": "validate", "task": "validate"},
                {"name": "price", "task": "price", "retry": {"max_attempts": 3}, "timeout_ms": 5000},
                {"name": "invoice", "task": "invoice", "fallback": "manual"}
            ],
            "on_error": [{"name": "notify", "task": "notify"}],
            "deadline_ms": 60000
        }));
        w.validate("orders").unwrap();
        assert!(w.restore);
        let back: WorkflowSpec = serde_json::from_str(&serde_json::to_string(&w).unwrap()).unwrap();
        assert_eq!(back, w);
        let tasks: Vec<&str> = w.tasks().into_iter().map(|(_, t)| t).collect();
        assert_eq!(tasks, ["validate", "price", "invoice", "manual", "notify"]);
    }

    #[test]
    fn each_problem_names_its_step() {
        let w = spec(json!({
            "steps": [
                {"name": "a", "task": "t", "retry": {"max_attempts": 0}},
                {"name": "a", "task": "Bad Task"},
                {"name": "c", "task": "t", "limits": {"fuel": 0}, "timeout_ms": 0}
            ],
            "on_cancel": [{"name": "", "task": "t"}],
            "deadline_ms": 0
        }));
        let problems = w.validate("orders").unwrap_err();
        let has = |what: &str| problems.iter().any(|p| p.contains(what));
        assert!(has("steps step \"a\": retry.max_attempts"), "{problems:?}");
        assert!(
            has("steps step \"a\": another step has that name"),
            "{problems:?}"
        );
        assert!(has("\"Bad Task\""), "{problems:?}");
        assert!(has("steps step \"c\": limits.fuel"), "{problems:?}");
        assert!(has("steps step \"c\": timeout_ms"), "{problems:?}");
        assert!(has("on_cancel step 4"), "{problems:?}");
        assert!(has("deadline_ms"), "{problems:?}");
        let empty = spec(json!({"steps": []}));
        assert!(empty.validate("w").unwrap_err()[0].contains("at least one step"));
        let unknown: Result<WorkflowSpec, _> =
            serde_json::from_value(json!({"steps": [{"name": "a", "task": "t", "retyr": {}}]}));
        assert!(unknown.unwrap_err().to_string().contains("retyr"));
    }
}
