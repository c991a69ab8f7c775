//! The one integration-test binary (so wasmtime is linked once).
//! Guests come from `target/guests`, built by `scripts/build-guests`.

mod api_batch;
mod api_errors;
mod api_events;
mod api_jobs;
mod api_schedules;
mod api_secrets;
mod api_webhooks;
mod api_workflows;
mod browser;
mod cli_events;
mod cli_run;
mod cli_schedules;
mod common;
mod docker;
mod e2e;
mod e2e_begun;
mod e2e_callbacks;
mod e2e_pg;
mod faults;
mod holes;
mod leader;
mod metrics;
mod openapi;
mod orchestration;
mod replay;
mod sandbox_abi;
mod sandbox_cache;
mod sandbox_hostile;
mod sandbox_limits;
mod schedules;
mod server;
mod store;
mod store_pg;
mod tenants;
mod workflows;
