//! What a hostile tenant could do to another, one case per hole, each
//! reproduced through the real paths (the API, the runner, the binary) and
//! shown closed. SECURITY.md names each defence; a new hole gets its case
//! here.
//!
//! Round one (`round_one`): an abandoned run-now, run-now beyond the
//! slots, an exponential schema, a flood at the best priority, a sparse
//! tenant behind a full runner, a snooze loop, unbounded pages, a
//! concurrency key without a length, a health check that tells internals.
//!
//! Round two, the paths added since (one file each):
//! - `schema_patterns` (1): a pattern costs a check bounded by its text,
//!   and one past the limits is refused at definition;
//! - `secret_output` (2): a secret is at least 8 bytes, and the output cap
//!   holds the redacted output;
//! - `redact_then_cut` (3): text is redacted before it is cut;
//! - `secret_scope` (4): naming a secret in a task needs `secrets:write`;
//! - `compile_gate` (5): quotas before compiling, a compile stopped at its
//!   time and memory limits, each tenant in its own lane, disk loads that
//!   wait for no compile, collected artifacts deleted;
//! - `job_paths_rate` (6): every path that makes a job takes the enqueue
//!   rate (triggers, redrives, spawns, callbacks, slots), and a schedule
//!   fires no more often than the server's floor;
//! - `callback_cycles` (7): a cycle through callbacks is refused, and a
//!   raced one ends at the callback depth;
//! - `slow_clients` (8): half headers, a trickled body and an idle
//!   connection are closed (the body answered 408), and open connections
//!   are capped;
//! - `token_revocation` (9): a revoked token refused at once here and
//!   within 5 s by every server of the database, an expired one refused,
//!   tokens listed and revoked by the admin alone (never the admin's own),
//!   and the list without a secret or a hash;
//! - `webhook_slots` (10): one tenant's silent endpoints hold its share of
//!   the webhook sender's slots, and another's delivery goes at once;
//! - `address_ranges` (11): the IPv6 forms that lead home (NAT64, 6to4,
//!   Teredo, IPv4-compatible, site-local) are refused;
//! - `invoke_redaction` (12): an invoke's stored result is redacted with
//!   its callers' secrets too;
//! - `replay_exit` (13): `taskbox job replay`'s exit status says how the
//!   replayed attempt ended.
//!
//! Round three (issue 65), the paths built since:
//! - `claim_ahead` (1): what a runner claims ahead of one tenant cannot
//!   hold off another's jobs, and the slots go by runner time;
//! - `siit` (7): an IPv4-translated address (`::ffff:0:a.b.c.d`) is
//!   judged as the IPv4 address it carries, for a guest's request and a
//!   webhook's URL;
//! - `rollout_cycles` (5): a version staged for a rollout (even at 0 %)
//!   may not close a cycle through callbacks and fallbacks, since promote
//!   would make it live;
//! - `cache_poison` (4): a result cache key is its job's digest on its
//!   input on every path: a resume on a new input, a redrive onto a newer
//!   version and a fallback never leave a row that serves another input's,
//!   component's or task's output;
//! - `stream_token` (3): an event stream looks its token up again as it
//!   goes on, and a revoke (on any server of the database) or an expiry
//!   ends it within 5 s with a last `error` event, nothing sent once the
//!   token is refused; a `run?wait=true` is answered 401 the same way;
//! - `guest_spans` (6): a request's span is named from the standard
//!   methods (`HTTP` for any other), everything a guest puts on a span is
//!   redacted and capped, an attempt makes at most its spans, and a
//!   request refused for its address is `refused` and takes one of
//!   `max_requests`;
//! - `verify_report` (2): a verification's report keeps each run's
//!   verdict, both outputs' hashes and a cut, redacted preview of the
//!   first difference, never an output whole;
//! - `series_reads` (8): the charts' series and the usage export take
//!   from their tenant's own read rate (429 past it, the other tenant's
//!   untouched), and one tenant's read goes through an index on it;
//! - `deterministic_sleep` (9): a deterministic task's sleep moves its
//!   virtual clock on at once, so one that sleeps until its clock says
//!   some time passed completes, the same every run; a plain task still
//!   sleeps in real time, and a virtual sleep past the timeout ends it.

mod address_ranges;
mod cache_poison;
mod callback_cycles;
mod claim_ahead;
mod compile_gate;
mod deterministic_sleep;
mod guest_spans;
mod invoke_redaction;
mod job_paths_rate;
mod redact_then_cut;
mod replay_exit;
mod rollout_cycles;
mod round_one;
mod schema_patterns;
mod secret_output;
mod secret_scope;
mod series_reads;
mod siit;
mod slow_clients;
mod stream_token;
mod token_revocation;
mod verify_report;
mod webhook_slots;
