//! taskbox: a job queue whose jobs are sandboxed WebAssembly.

pub mod cli;
pub mod digest;
pub mod job;
pub mod registry;
pub mod runner;
pub mod sandbox;
