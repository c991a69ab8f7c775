//! JSON in canonical form (every object's keys in byte order, no spaces),
//! for what is keyed or compared by value rather than by spelling: the
//! result cache's key (`enqueue/cache.rs`) and a verification's output
//! hashes (`verify/report.rs`). Two values are equal as JSON (key order
//! aside) exactly when their canonical texts are.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `v` as JSON text with every object's keys in byte order and no spaces.
pub fn text(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// `sha256:` and the hex sha256 of `v`'s canonical text, with its length
/// in bytes.
pub fn sha256(v: &Value) -> (String, usize) {
    let text = text(v);
    (
        format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes()))),
        text.len(),
    )
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
    use super::*;
    use serde_json::json;

    #[test]
    fn the_canonical_form_sorts_keys_at_every_depth_and_keeps_arrays_in_order() {
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": {"y": [2, 1], "x": "é\""}}"#).unwrap();
        let b = json!({"a": {"x": "é\"", "y": [2, 1]}, "b": 1});
        assert_eq!(text(&a), text(&b));
        assert_eq!(text(&a), r#"{"a":{"x":"é\"","y":[2,1]},"b":1}"#);
        assert_ne!(text(&json!([1, 2])), text(&json!([2, 1])));
        assert_ne!(text(&json!({"a": 1})), text(&json!({"a": "1"})));
        assert_eq!(sha256(&a), sha256(&b));
        assert_ne!(sha256(&json!({"a": 1})).0, sha256(&json!({"a": 2})).0);
        assert_eq!(sha256(&json!({})).1, 2);
    }
}
