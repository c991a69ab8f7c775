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
    hash.update(canonical(input).as_bytes());
    hex::encode(hash.finalize())
}

/// `v` as JSON text with every object's keys in byte order and no spaces.
fn canonical(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::canonical;
    use serde_json::json;

    #[test]
    fn the_canonical_form_sorts_keys_at_every_depth_and_keeps_arrays_in_order() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"b": 1, "a": {"y": [2, 1], "x": "é\""}}"#).unwrap();
        let b = json!({"a": {"x": "é\"", "y": [2, 1]}, "b": 1});
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&a), r#"{"a":{"x":"é\"","y":[2,1]},"b":1}"#);
        assert_ne!(canonical(&json!([1, 2])), canonical(&json!([2, 1])));
        assert_ne!(canonical(&json!({"a": 1})), canonical(&json!({"a": "1"})));
    }
}
