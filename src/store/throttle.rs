//! Throttle keys' statements; the rule is the core's (`taskbox_core::throttle`).

pub use taskbox_core::throttle::*;

/// A key's row, read in the claim that decides its jobs ($1 tenant, $2
/// key).
pub const READ_KEY: &str = "SELECT slots FROM throttle_keys WHERE tenant = $1 AND key = $2";
/// A key's row, written back once a claim decided its jobs ($1 tenant, $2
/// key, $3 slots, $4 until when it holds anything).
pub const WRITE_KEY: &str = "INSERT INTO throttle_keys (tenant, key, slots, held_until) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, key) \
     DO UPDATE SET slots = excluded.slots, held_until = excluded.held_until";
/// Keys that hold nothing any more ($1 now, $2 most rows).
pub const PRUNE_KEYS: &str = "DELETE FROM throttle_keys WHERE (tenant, key) IN \
     (SELECT tenant, key FROM throttle_keys WHERE held_until <= $1 LIMIT $2)";
