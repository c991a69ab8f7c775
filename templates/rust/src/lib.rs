//! {{name}}: a taskbox task. `taskbox build` turns it into dist/task.wasm and derives
//! dist/schema.json from `Input`, which the server checks every job's input against.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use taskbox_sdk::{Ctx, Failure};

/// A job's input. Its doc comments and types become the task's JSON Schema.
#[derive(Deserialize, JsonSchema)]
pub struct Input {
    /// Who to greet.
    pub name: String,
    /// How many times (1 to 10).
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 10))]
    pub times: u8,
}

fn one() -> u8 {
    1
}

/// What a finished job returns.
#[derive(Debug, Serialize, PartialEq)]
pub struct Output {
    pub greeting: String,
}

/// One attempt. Return `Err(Failure::retryable(..))` for a failure another attempt may get
/// past, `Err(Failure::fatal(..))` for one it will not.
pub fn greet(input: Input, ctx: &Ctx) -> Result<Output, Failure> {
    let name = input.name.trim();
    if name.is_empty() {
        return Err(Failure::fatal(
            "empty_name",
            "say who to greet: `name` is empty",
        ));
    }
    ctx.info(&format!("greeting {name} {} time(s)", input.times));
    let greeting = vec![format!("Hello, {name}!"); usize::from(input.times.clamp(1, 10))].join(" ");
    Ok(Output { greeting })
}

taskbox_sdk::task!(greet);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greets_by_name() {
        let out = greet(
            Input {
                name: "Ada".into(),
                times: 2,
            },
            &Ctx::test(),
        )
        .unwrap();
        assert_eq!(out.greeting, "Hello, Ada! Hello, Ada!");
    }

    #[test]
    fn an_empty_name_fails_for_good() {
        let failure = greet(
            Input {
                name: " ".into(),
                times: 1,
            },
            &Ctx::test(),
        )
        .unwrap_err();
        assert_eq!(
            (failure.code.as_str(), failure.retryable),
            ("empty_name", false)
        );
    }
}
