//! A deterministic task's result cache, as an enqueue asks the store to
//! consult it: the key is the sha256 of the pinned digest and the input in
//! canonical form (object keys sorted), so inputs that differ only in key
//! order or spacing share results. The tenant is the lookup's other half
//! (the store reads a key among its tenant's jobs alone).
//!
//! A job's key says what its output will be the output of, so every path
//! that changes the digest a job runs or the input it runs on writes the
//! key again by this one rule (`key_of`: a resume on a new input, a
//! redrive) or drops it (a fallback, a workflow's stage: the job then ends
//! with another task's output).

use crate::registry::TaskVersion;
use crate::store::CacheProbe;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What a new job of `task` on `input` looks for in the cache; `None` when
/// the task keeps none.
pub fn probe(task: &TaskVersion, input: &Value) -> Option<CacheProbe> {
    let cache = task.spec.cache.as_ref()?;
    Some(CacheProbe {
        key: key(&task.record.digest, input),
        ttl_ms: cache.ttl_ms,
    })
}

/// The key of a job that runs `task` on `input`, as stored JSON text (a
/// redrive's job, on the version it pinned or on the newest); `None` when
/// `task` keeps no cache, or the text is not JSON (then nothing may be
/// served from the job).
pub fn key_of(task: &TaskVersion, input: &str) -> Option<String> {
    task.spec.cache.as_ref()?;
    let input: Value = serde_json::from_str(input).ok()?;
    Some(key(&task.record.digest, &input))
}

/// The rule: sha256 of the digest, a 0 byte, and the canonical input.
fn key(digest: &str, input: &Value) -> String {
    let mut hash = Sha256::new();
    hash.update(digest.as_bytes());
    hash.update([0]);
    hash.update(crate::canonical::text(input).as_bytes());
    hex::encode(hash.finalize())
}
