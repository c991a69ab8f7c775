//! taskbox: a job queue whose jobs are sandboxed WebAssembly.

pub mod api;
pub mod app;
pub mod attempt_log;
pub mod cli;
pub mod config;
pub mod dashboard;
pub mod digest;
pub mod enqueue;
pub mod events;
pub mod http;
pub mod job;
pub mod maintenance;
pub mod metrics;
pub mod priority;
pub mod quota;
pub mod redrive;
pub mod registry;
pub mod retry;
pub mod runner;
pub mod sandbox;
pub mod schedule;
pub mod store;
pub mod strict;
pub mod text;
pub mod webhooks;
pub mod workflow;
