//! What a running attempt may ask of its host: who it is, logs and progress, the tenant's
//! secrets, other tasks (invoke, spawn) and its own spans (`span.rs`). Off the sandbox,
//! [`Ctx::test`] stands in.

use crate::Failure;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::HashMap;

/// Which job and attempt is running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Stable across the job's attempts: use it as an idempotency key.
    pub id: String,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// The queue the job came from.
    pub queue: String,
}

/// How much a log line matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// The attempt's side of the sandbox. Inside taskbox every call goes to the host; in a native
/// test (built by [`Ctx::test`]) logs and progress go to stderr and secrets come from
/// [`Ctx::with_secret`].
#[derive(Debug, Clone)]
pub struct Ctx {
    job: Job,
    host: bool,
    secrets: HashMap<String, String>,
}

impl Ctx {
    pub(crate) fn in_sandbox(job: Job) -> Self {
        Ctx {
            job,
            host: true,
            secrets: HashMap::new(),
        }
    }

    /// A context for running a task's function natively, as the first attempt of job `test`
    /// on queue `default`.
    pub fn test() -> Self {
        let job = Job {
            id: "test".into(),
            attempt: 1,
            queue: "default".into(),
        };
        Ctx {
            job,
            host: false,
            secrets: HashMap::new(),
        }
    }

    /// This test context as attempt `attempt` (to test retry logic).
    pub fn with_attempt(mut self, attempt: u32) -> Self {
        self.job.attempt = attempt;
        self
    }

    /// This test context with a secret set.
    pub fn with_secret(mut self, name: &str, value: &str) -> Self {
        self.secrets.insert(name.into(), value.into());
        self
    }

    /// The running job.
    pub fn job(&self) -> &Job {
        &self.job
    }

    /// Whether the calls go to the host (not a native test).
    pub(crate) fn in_host(&self) -> bool {
        self.host
    }

    /// Appends a line to the attempt's log (the host bounds the log; the excess is dropped and
    /// counted).
    pub fn log(&self, level: Level, message: &str) {
        if self.host {
            host::log(level, message);
        } else {
            eprintln!("[{level:?}] {message}");
        }
    }

    /// `log(Level::Info, …)`.
    pub fn info(&self, message: &str) {
        self.log(Level::Info, message);
    }

    /// `log(Level::Warn, …)`.
    pub fn warn(&self, message: &str) {
        self.log(Level::Warn, message);
    }

    /// `log(Level::Error, …)`.
    pub fn error(&self, message: &str) {
        self.log(Level::Error, message);
    }

    /// Reports progress (0–100, more is taken as 100) with a short note; it shows on the job
    /// and extends its lease.
    pub fn progress(&self, percent: u8, note: &str) {
        let percent = percent.min(100);
        if self.host {
            host::progress(percent, note);
        } else {
            eprintln!("[progress {percent}%] {note}");
        }
    }

    /// The tenant's secret `name`. The task must declare it (`taskbox task push … --secret
    /// NAME`) and the tenant must have set it (`taskbox secret set NAME`); otherwise this is the
    /// final failure `missing_secret`.
    pub fn secret(&self, name: &str) -> Result<String, Failure> {
        let found = if self.host {
            host::secret(name)?
        } else {
            self.secrets.get(name).cloned()
        };
        found.ok_or_else(|| {
            Failure::fatal(
                "missing_secret",
                format!(
                    "secret {name} is not set: set it with `taskbox secret set {name}` and declare \
                     it in the task's secrets"
                ),
            )
        })
    }

    /// Runs task `task` of this tenant to completion on `input` and returns its output, in its
    /// own sandbox with its own limits and retries. Memoized per job: a retried job gets the
    /// result of a call it made before without the task running again.
    pub fn invoke<O: DeserializeOwned>(
        &self,
        task: &str,
        input: &impl Serialize,
    ) -> Result<O, Failure> {
        let input = to_json(input)?;
        let output = if self.host {
            host::invoke(task, &input)?
        } else {
            return Err(native(task));
        };
        serde_json::from_str(&output).map_err(|e| {
            Failure::fatal(
                "bad_output",
                format!("{task}'s output does not match the type asked for: {e}"),
            )
        })
    }

    /// Enqueues a job of task `task` on `input` as this job's child and returns its id. A
    /// retried job that spawns at the same place in its order of calls gets the same child.
    pub fn spawn(&self, task: &str, input: &impl Serialize) -> Result<String, Failure> {
        let input = to_json(input)?;
        if self.host {
            host::spawn(task, &input)
        } else {
            Err(native(task))
        }
    }
}

fn to_json(input: &impl Serialize) -> Result<String, Failure> {
    serde_json::to_string(input)
        .map_err(|e| Failure::fatal("bad_input", format!("the input does not serialize: {e}")))
}

fn native(task: &str) -> Failure {
    Failure::fatal(
        "unavailable",
        format!("{task}: other tasks run only inside taskbox, not in a native test"),
    )
}

/// The host's imports; reached only from a context made in the sandbox.
mod host {
    use crate::bindings::taskbox::task::{host, orchestration};
    use crate::bindings::wasi::config::store;
    use crate::{Failure, Level};

    pub fn log(level: Level, message: &str) {
        let level = match level {
            Level::Trace => host::Level::Trace,
            Level::Debug => host::Level::Debug,
            Level::Info => host::Level::Info,
            Level::Warn => host::Level::Warn,
            Level::Error => host::Level::Error,
        };
        host::log(level, message);
    }

    pub fn progress(percent: u8, note: &str) {
        host::progress(percent, note);
    }

    pub fn secret(name: &str) -> Result<Option<String>, Failure> {
        store::get(name).map_err(|e| {
            Failure::retryable("secret_error", format!("reading secret {name}: {e:?}"))
        })
    }

    pub fn invoke(task: &str, input: &str) -> Result<String, Failure> {
        orchestration::invoke(task, input).map_err(Failure::from)
    }

    pub fn spawn(task: &str, input: &str) -> Result<String, Failure> {
        orchestration::spawn(task, input).map_err(Failure::from)
    }
}
