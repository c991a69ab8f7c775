//! taskbox: a job queue whose jobs are sandboxed WebAssembly.

pub mod abi;
pub mod admission;
pub mod api;
pub mod app;
pub mod canonical;
pub mod cli;
pub mod config;
pub mod dashboard;
pub mod digest;
pub mod enqueue;
pub mod figures;
pub mod http;
pub mod lanes;
pub mod listen;
pub mod maintenance;
pub mod metrics;
pub mod netguard;
pub mod otel;
pub mod priority;
pub mod project;
pub mod redrive;
pub mod registry;
pub mod runner;
pub mod sandbox;
pub mod schedule;
pub mod secrets;
pub mod store;
pub mod text;
pub mod verify;
pub mod webhooks;
pub mod workflow;

// The lowest floor, its own crate (DESIGN §8); its modules keep their paths here.
pub use taskbox_core::{
    attempt_log, bounds, event_view, events, job, limits_spec, network_tally, parent_close, quota,
    retry, strict, time,
};
