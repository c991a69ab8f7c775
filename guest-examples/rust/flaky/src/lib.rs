//! flaky: fails with a retryable error until a given attempt, then succeeds.
//! Input `{"succeed_on_attempt": N}` (N defaults to 3; `{}` or empty input is fine). While
//! `job.attempt < N` a test should expect `err(failure{code: "not_yet", message: "attempt X of N",
//! retryable: true})`; from attempt N on, `done({"attempt": X})`.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

use serde::Deserialize;

#[derive(Deserialize, Default)]
struct Input {
    #[serde(default = "default_attempt")]
    succeed_on_attempt: u32,
}

fn default_attempt() -> u32 {
    3
}

struct Flaky;

impl Guest for Flaky {
    fn run(job: Job, input: String) -> Result<Outcome, Failure> {
        let input: Input = if input.trim().is_empty() || input.trim() == "null" {
            Input { succeed_on_attempt: default_attempt() }
        } else {
            serde_json::from_str(&input).map_err(|e| Failure {
                code: "bad_input".into(),
                message: format!("expected {{\"succeed_on_attempt\"?: n}}: {e}"),
                retryable: false,
            })?
        };
        let n = input.succeed_on_attempt;
        if job.attempt < n {
            return Err(Failure {
                code: "not_yet".into(),
                message: format!("attempt {} of {}", job.attempt, n),
                retryable: true,
            });
        }
        Ok(Outcome::Done(serde_json::json!({ "attempt": job.attempt }).to_string()))
    }
}

export!(Flaky);
