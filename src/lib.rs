//! taskbox: a job queue whose jobs are sandboxed WebAssembly.

pub mod cli;
pub mod digest;
pub mod job;
pub mod runner;
pub mod sandbox;
