//! What `task!` expands to calls: one attempt from the WIT call to the task's function and
//! back, and the input's schema for `taskbox build`.

use crate::{bindings, Ctx, Failure, IntoOutcome, Job};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// One attempt: parses the input, calls the task's function, and turns what it returns into
/// the world's outcome.
pub fn run<I, R, F>(
    handler: F,
    job: bindings::Job,
    input: String,
) -> Result<bindings::Outcome, bindings::Failure>
where
    I: DeserializeOwned + JsonSchema,
    R: IntoOutcome,
    F: FnOnce(I, &Ctx) -> Result<R, Failure>,
{
    let ctx = Ctx::in_sandbox(Job {
        id: job.id,
        attempt: job.attempt,
        queue: job.queue,
    });
    let input: I = serde_json::from_str(&input).map_err(|e| {
        Failure::fatal(
            "bad_input",
            format!("the input does not match the task's input type: {e}"),
        )
    })?;
    Ok(handler(input, &ctx)?.into_wit()?)
}

/// The JSON Schema of the input of `handler`.
pub fn schema<I, R, F>(_handler: F) -> serde_json::Value
where
    I: JsonSchema,
    F: FnOnce(I, &Ctx) -> Result<R, Failure>,
{
    serde_json::to_value(schemars::schema_for!(I)).expect("a schema is JSON")
}

/// Writes the input's schema to the file `TASKBOX_SCHEMA_OUT` names, if it names one.
pub fn write_schema<I, R, F>(handler: F)
where
    I: JsonSchema,
    F: FnOnce(I, &Ctx) -> Result<R, Failure>,
{
    let schema = schema(handler);
    if let Some(path) = std::env::var_os("TASKBOX_SCHEMA_OUT") {
        let text = serde_json::to_string_pretty(&schema).expect("a schema is JSON");
        if let Err(e) = std::fs::write(&path, text + "\n") {
            panic!(
                "writing the input schema to {}: {e}",
                path.to_string_lossy()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Outcome;
    use serde::{Deserialize, Serialize};
    use std::time::Duration;

    #[derive(Deserialize, JsonSchema)]
    struct Input {
        name: String,
        #[serde(default)]
        wait: bool,
    }

    #[derive(Serialize)]
    struct Output {
        greeting: String,
    }

    fn greet(input: Input, _: &Ctx) -> Result<Output, Failure> {
        if input.name.is_empty() {
            return Err(Failure::fatal("empty_name", "say who to greet"));
        }
        Ok(Output {
            greeting: format!("Hello, {}!", input.name),
        })
    }

    fn later(input: Input, _: &Ctx) -> Result<Outcome<Output>, Failure> {
        Ok(if input.wait {
            Outcome::Wait(serde_json::json!({"for": "approval"}))
        } else {
            Outcome::Snooze(Duration::from_secs(2))
        })
    }

    fn job() -> bindings::Job {
        bindings::Job {
            id: "j1".into(),
            attempt: 1,
            queue: "default".into(),
        }
    }

    fn failure(r: Result<bindings::Outcome, bindings::Failure>) -> (String, bool) {
        let f = r.expect_err("a failure");
        (f.code, f.retryable)
    }

    #[test]
    fn an_output_is_its_json_text() {
        match run(greet, job(), r#"{"name":"Ada"}"#.into()) {
            Ok(bindings::Outcome::Done(text)) => assert_eq!(text, r#"{"greeting":"Hello, Ada!"}"#),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_input_that_does_not_parse_is_a_final_bad_input() {
        assert_eq!(
            failure(run(greet, job(), r#"{"nom":"Ada"}"#.into())),
            ("bad_input".into(), false)
        );
        assert_eq!(
            failure(run(greet, job(), "not json".into())),
            ("bad_input".into(), false)
        );
    }

    #[test]
    fn the_functions_failure_is_the_attempts() {
        assert_eq!(
            failure(run(greet, job(), r#"{"name":""}"#.into())),
            ("empty_name".into(), false)
        );
    }

    #[test]
    fn snooze_and_wait_become_the_worlds_outcomes() {
        match run(later, job(), r#"{"name":"x"}"#.into()) {
            Ok(bindings::Outcome::Snooze(ms)) => assert_eq!(ms, 2000),
            other => panic!("{other:?}"),
        }
        match run(later, job(), r#"{"name":"x","wait":true}"#.into()) {
            Ok(bindings::Outcome::Wait(what)) => assert_eq!(what, r#"{"for":"approval"}"#),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_schema_is_the_input_types() {
        let s = schema(greet);
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], serde_json::json!(["name"]));
        assert_eq!(s["properties"]["name"]["type"], "string");
    }
}
