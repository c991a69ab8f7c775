//! taskbox: a job queue whose jobs are sandboxed WebAssembly.

pub mod digest;
pub mod job;
pub mod cli;
pub mod sandbox;
