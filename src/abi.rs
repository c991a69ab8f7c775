//! How the host calls a guest: the sandbox tells it from the bytes, the
//! registry records it with the component, the API shows it. Below them
//! all, so that each names the same type.

use serde::{Deserialize, Serialize};

/// How the host calls a guest (DESIGN §3.1–3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Abi {
    /// A component of the task world: `run(job, input) -> result<outcome, failure>`.
    Task,
    /// A WASI command: input on stdin, output on stdout, exit code for failure.
    Command,
}
