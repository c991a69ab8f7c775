//! taskbox's lowest floor: the words every layer above shares — a job and
//! its states, time, retries, limits and quotas — with no database, no
//! sandbox and no server, so that it compiles first and alone (DESIGN §8).

pub mod attempt_log;
pub mod begun;
pub mod bounds;
pub mod clock;
pub mod debounce;
pub mod event_view;
pub mod events;
pub mod fair;
pub mod fair_keys;
pub mod flow_key;
pub mod job;
pub mod limits_spec;
pub mod network_tally;
pub mod outbox;
pub mod parent_close;
pub mod quota;
pub mod records;
pub mod retry;
pub mod store_error;
pub mod strict;
pub mod tenancy;
pub mod throttle;
pub mod time;
pub mod trace_context;
pub mod transition;
pub mod usage;
