//! orchestrator: a task of the `orchestrator` world that runs other tasks from code. Input
//! `{"calls": [{"invoke": task, "input": v} | {"spawn": task, "input": v}], "fail_on_attempt"?: n}`:
//! the calls are made in order (each `invoke` runs the task to completion and gives its output,
//! each `spawn` enqueues a child job and gives its id), then, if this is attempt `n`, the attempt
//! fails retryably with code `planned` (so a test can watch a retried job replay its calls).
//! Output `{"results": [{"task", "output"} | {"task", "child"} | {"task", "error": {code,
//! message}}], "attempt": n}`. A failed call does not stop the others: its error is a result.
//! Input that does not parse → `err(bad_input, retryable=false)`.

wit_bindgen::generate!({ path: "../../../wit", world: "orchestrator" });

use serde::Deserialize;
use serde_json::{json, Value};
use taskbox::task::orchestration;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    calls: Vec<Call>,
    #[serde(default)]
    fail_on_attempt: Option<u32>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Call {
    Invoke { invoke: String, #[serde(default)] input: Value },
    Spawn { spawn: String, #[serde(default)] input: Value },
}

fn error(f: Failure) -> Value {
    json!({"code": f.code, "message": f.message})
}

struct Orchestrator;

impl Guest for Orchestrator {
    fn run(job: Job, input: String) -> Result<Outcome, Failure> {
        let input: Input = serde_json::from_str(&input).map_err(|e| Failure {
            code: "bad_input".into(),
            message: format!("expected {{\"calls\": [{{\"invoke\"|\"spawn\": task, \"input\"}}]}}: {e}"),
            retryable: false,
        })?;
        let mut results = Vec::with_capacity(input.calls.len());
        for call in input.calls {
            results.push(match call {
                Call::Invoke { invoke, input } => {
                    match orchestration::invoke(&invoke, &input.to_string()) {
                        Ok(out) => json!({
                            "task": invoke,
                            "output": serde_json::from_str::<Value>(&out).unwrap_or(Value::String(out)),
                        }),
                        Err(f) => json!({"task": invoke, "error": error(f)}),
                    }
                }
                Call::Spawn { spawn, input } => match orchestration::spawn(&spawn, &input.to_string()) {
                    Ok(id) => json!({"task": spawn, "child": id}),
                    Err(f) => json!({"task": spawn, "error": error(f)}),
                },
            });
        }
        if input.fail_on_attempt == Some(job.attempt) {
            return Err(Failure {
                code: "planned".into(),
                message: format!("attempt {} fails as the input asks", job.attempt),
                retryable: true,
            });
        }
        Ok(Outcome::Done(json!({"results": results, "attempt": job.attempt}).to_string()))
    }
}

export!(Orchestrator);
