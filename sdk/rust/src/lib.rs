//! taskbox-sdk: a taskbox task written as a Rust function of a typed input.
//!
//! ```ignore
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use taskbox_sdk::{Ctx, Failure};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Input { name: String }
//!
//! #[derive(Serialize)]
//! struct Output { greeting: String }
//!
//! fn greet(input: Input, ctx: &Ctx) -> Result<Output, Failure> {
//!     ctx.info(&format!("greeting {}", input.name));
//!     Ok(Output { greeting: format!("Hello, {}!", input.name) })
//! }
//!
//! taskbox_sdk::task!(greet);
//! ```
//!
//! `cargo build --target wasm32-wasip2 --release` (or `taskbox build`) turns the crate into a
//! component of taskbox's task world. The input's JSON Schema comes from its type
//! ([`schemars::JsonSchema`]); `taskbox build` writes it to `dist/schema.json`, and the server
//! refuses a job whose input does not match it. Off the sandbox (`cargo test`) the same
//! function runs natively with [`Ctx::test`].

#[doc(hidden)]
pub mod bindings;
mod ctx;
mod failure;
pub mod http;
mod outcome;
#[doc(hidden)]
pub mod rt;
mod span;

pub use ctx::{Ctx, Job, Level};
pub use failure::Failure;
pub use outcome::{IntoOutcome, Outcome};
pub use span::Span;

/// Exports `handler` as the crate's task. `handler` is a function
/// `fn(Input, &Ctx) -> Result<R, Failure>` where `Input` is `Deserialize + JsonSchema` and `R`
/// is any `Serialize` output or an [`Outcome`] of one. Use it once, in the crate's `lib.rs`.
///
/// A job's input that does not parse as `Input` fails the attempt with the final failure
/// `bad_input`; an output that does not serialize, with `bad_output`.
#[macro_export]
macro_rules! task {
    ($handler:expr) => {
        #[doc(hidden)]
        pub struct __TaskboxTask;

        impl $crate::bindings::Guest for __TaskboxTask {
            fn run(
                job: $crate::bindings::Job,
                input: ::std::string::String,
            ) -> ::std::result::Result<$crate::bindings::Outcome, $crate::bindings::Failure> {
                $crate::rt::run($handler, job, input)
            }
        }

        $crate::bindings::export_task!(__TaskboxTask with_types_in $crate::bindings);

        /// Derives the input's JSON Schema; `taskbox build` runs it to write
        /// `dist/schema.json` (the path in `TASKBOX_SCHEMA_OUT`).
        #[cfg(test)]
        #[test]
        fn __taskbox_input_schema() {
            $crate::rt::write_schema($handler);
        }
    };
}
