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

mod round_one;
