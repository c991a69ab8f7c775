//! A Rust client for the taskbox HTTP API: push tasks, enqueue jobs (waiting
//! out a 429's `Retry-After`), await their results; and every other route
//! through [`Client::get`] and friends. The `taskbox` CLI is built on it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), taskbox_client::Error> {
//! use taskbox_client::{Client, JobSpec, WaitOptions};
//! let taskbox = Client::from_env()?; // TASKBOX_URL, TASKBOX_TOKEN
//! let job = taskbox.enqueue(&JobSpec::task("greet", serde_json::json!({"name": "Ada"}))?).await?;
//! let done = taskbox.wait_for_job(&job.id, &WaitOptions::default()).await?;
//! println!("{}", done.output.unwrap_or_default());
//! # Ok(()) }
//! ```

pub mod blocking;
mod client;
mod error;
mod jobs;
mod tasks;

pub use client::{Call, Client, ClientBuilder, Reply, DEFAULT_URL};
pub use error::{ApiError, Error, Unreachable};
pub use jobs::{
    Debounce, DebounceView, EnqueueOptions, Job, JobError, JobSpec, JobStatus, OnRateLimited,
    Progress, TaskRef, Throttle, WaitOptions,
};
pub use tasks::{Component, Rollout, Task, TaskDefined, TaskDefinition, VersionFigures};
