//! JSON Schemas compiled once per task version, and their violations as a
//! user reads them: each with the JSON pointer of the value at fault.

use serde::Serialize;

/// Most violations listed for one input; the rest are counted.
const MAX_VIOLATIONS: usize = 20;
/// Longest message kept per violation (messages quote the value at fault).
const MAX_MESSAGE: usize = 300;

/// A compiled schema.
pub struct Schema(jsonschema::Validator);

/// One way a value breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// JSON pointer to the value at fault; empty for the whole document.
    pub pointer: String,
    pub message: String,
}

impl Schema {
    /// Compiles a schema; the error says why it is not one. Only local
    /// `$ref`s resolve: nothing is fetched from files or the network.
    pub fn compile(schema: &serde_json::Value) -> Result<Schema, String> {
        jsonschema::validator_for(schema)
            .map(Schema)
            .map_err(|e| crate::sandbox::classify::bounded(&e.to_string(), MAX_MESSAGE))
    }

    /// Every violation (up to a bound) of `value`.
    pub fn check(&self, value: &serde_json::Value) -> Result<(), Vec<Violation>> {
        if self.0.is_valid(value) {
            return Ok(());
        }
        let mut out = Vec::new();
        let mut more = 0usize;
        for e in self.0.iter_errors(value) {
            if out.len() < MAX_VIOLATIONS {
                out.push(Violation {
                    pointer: e.instance_path().as_str().to_owned(),
                    message: crate::sandbox::classify::bounded(&e.to_string(), MAX_MESSAGE),
                });
            } else {
                more += 1;
            }
        }
        if more > 0 {
            out.push(Violation {
                pointer: String::new(),
                message: format!("and {more} more violations"),
            });
        }
        Err(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn violations_name_their_pointers() {
        let s = Schema::compile(&json!({
            "type": "object",
            "required": ["n"],
            "properties": {"n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}
        }))
        .unwrap();
        assert!(s.check(&json!({"n": 1})).is_ok());
        let v = s.check(&json!({"n": "x", "tags": ["a", 2]})).unwrap_err();
        let pointers: Vec<&str> = v.iter().map(|v| v.pointer.as_str()).collect();
        assert!(pointers.contains(&"/n"), "{v:?}");
        assert!(pointers.contains(&"/tags/1"), "{v:?}");
        let v = s.check(&json!({})).unwrap_err();
        assert_eq!(v[0].pointer, "");
        assert!(v[0].message.contains("\"n\""), "{v:?}");
    }

    #[test]
    fn a_broken_schema_is_refused_with_a_reason() {
        let err = Schema::compile(&json!({"type": "integr"})).err().unwrap();
        assert!(!err.is_empty());
    }

    #[test]
    fn remote_refs_are_not_fetched() {
        assert!(Schema::compile(&json!({"$ref": "http://127.0.0.1:9/x.json"})).is_err());
    }
}
