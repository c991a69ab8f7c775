//! The runner: claims jobs, runs their attempts in the sandbox, and decides
//! what happens next. So far: the retry policy (the claim loop comes with the
//! queue).

pub mod retry;
