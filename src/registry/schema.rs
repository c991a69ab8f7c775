//! JSON Schemas compiled once per task version, checked within a bound of
//! work, and their violations as a user reads them: each with the JSON
//! pointer of the value at fault.
//!
//! A schema is a tenant's, and a small one can make the validator's work
//! exponential in the input (`anyOf` over a recursive or shared `$ref`).
//! The bound is counted, not timed: every subschema gets one more `allOf`
//! member, a keyword of ours that counts each evaluation of the subschema
//! (an `allOf` runs before the composition and reference keywords that fan
//! out), and unwinds out of the validator once the count runs out. The
//! validation then stops where it is; no thread is left spinning.

use serde::Serialize;
use serde_json::{json, Value};
use std::cell::Cell;

/// Most violations listed for one input; the rest are counted.
const MAX_VIOLATIONS: usize = 20;
/// Longest message kept per violation (messages quote the value at fault).
const MAX_MESSAGE: usize = 300;
/// Largest schema accepted, as JSON text.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Deepest nesting of a schema, or of a value checked against one.
pub const MAX_DEPTH: usize = 64;
/// Most subschema evaluations one check may make: the bound on its work
/// (about 10 ms of a core for a plain check).
pub const MAX_STEPS: u64 = 1_000_000;
/// Most subschema evaluations spent listing violations, which costs more
/// per step than deciding validity (each failure builds its error).
pub const LIST_STEPS: u64 = 20_000;
/// Our counting keyword; a schema that uses the name gets it counted.
const BUDGET_KEYWORD: &str = "x-taskbox-budget";

/// A compiled schema.
pub struct Schema(jsonschema::Validator);

/// One way a value breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Violation {
    /// JSON pointer to the value at fault; empty for the whole document.
    pub pointer: String,
    pub message: String,
}

impl Violation {
    fn whole(message: String) -> Violation {
        Violation {
            pointer: String::new(),
            message,
        }
    }
}

/// Why a value was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// It breaks the schema, in these ways.
    Invalid(Vec<Violation>),
    /// Deciding took more than the bound of `steps` subschema evaluations
    /// (or the value nests deeper than `MAX_DEPTH`); what it says is in the
    /// violation.
    TooComplex(Violation),
}

impl CheckError {
    /// The violations to show, whichever way it failed.
    pub fn violations(self) -> Vec<Violation> {
        match self {
            CheckError::Invalid(v) => v,
            CheckError::TooComplex(v) => vec![v],
        }
    }
}

thread_local! {
    /// Steps left to the check running on this thread.
    static STEPS_LEFT: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// The payload the counting keyword unwinds with.
struct OutOfSteps;

fn step() {
    STEPS_LEFT.with(|left| {
        let n = left.get();
        if n == 0 {
            // Not a panic: no hook runs, nothing is printed; `metered`
            // catches exactly this payload.
            std::panic::resume_unwind(Box::new(OutOfSteps));
        }
        left.set(n - 1);
    });
}

/// Runs `f` with `steps` steps; `None` if it ran out. The validator keeps
/// no state across calls that an unwind could leave half-changed: its
/// per-call context is dropped on the way out.
fn metered<T>(steps: u64, f: impl FnOnce() -> T) -> Option<T> {
    STEPS_LEFT.with(|left| left.set(steps));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    STEPS_LEFT.with(|left| left.set(u64::MAX));
    match result {
        Ok(t) => Some(t),
        Err(payload) if payload.is::<OutOfSteps>() => None,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

struct Counter;

impl<'i> jsonschema::Keyword<'i> for Counter {
    fn validate(&self, _: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        step();
        Ok(())
    }

    fn is_valid(&self, _: &'i Value) -> bool {
        step();
        true
    }
}

/// Adds the counting member to the `allOf` of every object that may be a
/// subschema. Values that are data (`const`, `enum`, `default`,
/// `examples`) are left alone, and maps of subschemas (`properties`, …)
/// only have their members counted. Appending keeps the indices of an
/// existing `allOf`, so `$ref`s into it still resolve.
fn add_counters(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (keyword, child) in map.iter_mut() {
                match keyword.as_str() {
                    "const" | "enum" | "default" | "examples" | "$vocabulary" => {}
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas" | "dependencies" => {
                        if let Value::Object(members) = child {
                            members.values_mut().for_each(add_counters);
                        }
                    }
                    _ => add_counters(child),
                }
            }
            let counter = json!({ BUDGET_KEYWORD: true });
            match map.get_mut("allOf") {
                Some(Value::Array(all)) => all.push(counter),
                Some(_) => {}
                None => {
                    map.insert("allOf".into(), json!([counter]));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(add_counters),
        _ => {}
    }
}

/// How deep `v` nests (a scalar is 0), without recursion.
pub fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Object(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    deepest
}

impl Schema {
    /// Compiles a schema; the error says why it is not one. Only local
    /// `$ref`s resolve: nothing is fetched from files or the network.
    /// Patterns use a linear-time engine (no backtracking), so no pattern
    /// can be made to take exponential time either. This is CPU work: call
    /// it off the async threads.
    pub fn compile(schema: &Value) -> Result<Schema, String> {
        let size = serde_json::to_vec(schema).map_or(usize::MAX, |b| b.len());
        if size > MAX_SCHEMA_BYTES {
            return Err(format!(
                "the schema is {size} bytes of JSON; at most {MAX_SCHEMA_BYTES} are accepted"
            ));
        }
        let d = depth(schema);
        if d > MAX_DEPTH {
            return Err(format!(
                "the schema nests {d} levels deep; at most {MAX_DEPTH} are accepted"
            ));
        }
        let mut counted = schema.clone();
        add_counters(&mut counted);
        jsonschema::options()
            .with_keyword(BUDGET_KEYWORD, |_, _, _| Ok(Box::new(Counter)))
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(&counted)
            .map(Schema)
            .map_err(|e| crate::text::bounded(&e.to_string(), MAX_MESSAGE))
    }

    /// Whether `value` is valid, within `steps`; `None` when deciding
    /// needs more.
    pub fn is_valid_within(&self, value: &Value, steps: u64) -> Option<bool> {
        metered(steps, || self.0.is_valid(value))
    }

    /// Checks `value` with at most `steps` steps to decide, then at most
    /// [`LIST_STEPS`] to list the violations.
    pub fn check(&self, value: &Value, steps: u64) -> Result<(), CheckError> {
        let d = depth(value);
        if d > MAX_DEPTH {
            return Err(CheckError::TooComplex(Violation::whole(format!(
                "the value nests {d} levels deep; at most {MAX_DEPTH} are accepted"
            ))));
        }
        match self.is_valid_within(value, steps) {
            Some(true) => Ok(()),
            Some(false) => Err(CheckError::Invalid(self.violations(value))),
            None => Err(CheckError::TooComplex(Violation::whole(format!(
                "checking the value against the schema took more than {steps} steps (the bound on \
                 one check's work); simplify the schema or the value"
            )))),
        }
    }

    /// Every violation (up to a bound) of a value known to be invalid.
    fn violations(&self, value: &Value) -> Vec<Violation> {
        let listed = metered(LIST_STEPS, || {
            let mut out = Vec::new();
            let mut more = 0usize;
            for e in self.0.iter_errors(value) {
                if out.len() < MAX_VIOLATIONS {
                    out.push(Violation {
                        pointer: e.instance_path().as_str().to_owned(),
                        message: crate::text::bounded(&e.to_string(), MAX_MESSAGE),
                    });
                } else {
                    more += 1;
                }
            }
            if more > 0 {
                out.push(Violation::whole(format!("and {more} more violations")));
            }
            out
        });
        if let Some(all) = listed {
            return all;
        }
        // Listing every one was too much; the first may not be.
        let first = metered(LIST_STEPS, || {
            self.0.validate(value).err().map(|e| Violation {
                pointer: e.instance_path().as_str().to_owned(),
                message: crate::text::bounded(&e.to_string(), MAX_MESSAGE),
            })
        });
        match first.flatten() {
            Some(v) => vec![v],
            None => vec![Violation::whole(format!(
                "the value does not match the schema (finding where took more than {LIST_STEPS} steps)"
            ))],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn check(s: &Schema, v: &Value) -> Result<(), CheckError> {
        s.check(v, MAX_STEPS)
    }

    #[test]
    fn violations_name_their_pointers() {
        let s = Schema::compile(&json!({
            "type": "object",
            "required": ["n"],
            "properties": {"n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}
        }))
        .unwrap();
        assert!(check(&s, &json!({"n": 1})).is_ok());
        let Err(CheckError::Invalid(v)) = check(&s, &json!({"n": "x", "tags": ["a", 2]})) else {
            panic!("not invalid")
        };
        let pointers: Vec<&str> = v.iter().map(|v| v.pointer.as_str()).collect();
        assert!(pointers.contains(&"/n"), "{v:?}");
        assert!(pointers.contains(&"/tags/1"), "{v:?}");
        let Err(CheckError::Invalid(v)) = check(&s, &json!({})) else {
            panic!("not invalid")
        };
        assert_eq!(v[0].pointer, "");
        assert!(v[0].message.contains("\"n\""), "{v:?}");
    }

    #[test]
    fn data_keywords_and_existing_all_ofs_keep_their_meaning() {
        let s = Schema::compile(&json!({
            "$defs": {"small": {"maximum": 3}},
            "properties": {
                "c": {"const": {"k": 1}},
                "e": {"enum": [{"k": 2}]},
                "a": {"allOf": [{"$ref": "#/$defs/small"}, {"minimum": 1}]},
                "p": {"$ref": "#/properties/a/allOf/1"}
            },
            "additionalProperties": false
        }))
        .unwrap();
        assert!(check(&s, &json!({"c": {"k": 1}, "e": {"k": 2}, "a": 2, "p": 5})).is_ok());
        for bad in [
            json!({"c": {"k": 1, "allOf": []}}),
            json!({"e": {"k": 3}}),
            json!({"a": 4}),
            json!({"p": 0}),
            json!({"x-taskbox-budget": 1}),
        ] {
            assert!(
                matches!(check(&s, &bad), Err(CheckError::Invalid(_))),
                "{bad}"
            );
        }
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

    #[test]
    fn schema_size_and_nesting_are_bounded() {
        let big = json!({"enum": ["x".repeat(MAX_SCHEMA_BYTES)]});
        assert!(Schema::compile(&big).err().unwrap().contains("bytes"));
        let mut deep = json!({});
        for _ in 0..=MAX_DEPTH {
            deep = json!({ "items": deep });
        }
        assert!(Schema::compile(&deep)
            .err()
            .unwrap()
            .contains("levels deep"));
        let s = Schema::compile(&json!({})).unwrap();
        let mut v = json!(1);
        for _ in 0..=MAX_DEPTH {
            v = json!([v]);
        }
        assert!(matches!(check(&s, &v), Err(CheckError::TooComplex(_))));
    }

    /// A recursive `anyOf` over `$ref` is exponential in the input's depth
    /// for the validator's error listing (2.3 s at 18 levels, no answer in
    /// a minute at 22): the check stops at its bound instead.
    #[test]
    fn a_recursive_any_of_is_stopped_at_the_bound() {
        let s = Schema::compile(&json!({"$defs": {"n": {"anyOf": [
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["z"]},
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["y"]}
        ]}}, "$ref": "#/$defs/n"}))
        .unwrap();
        let mut v = json!(1);
        for _ in 0..40 {
            v = json!({ "a": v });
        }
        let t = std::time::Instant::now();
        let r = check(&s, &v);
        assert!(matches!(r, Err(CheckError::Invalid(_))), "{r:?}");
        // Not a timing assertion: the work is bounded by steps, so this
        // finishes; only a budget that did not hold would hang here.
        let _ = t.elapsed();
    }

    /// Subschemas shared through `$ref` (a DAG, no recursion) make even a
    /// validity check exponential in the schema's depth on a scalar.
    #[test]
    fn a_shared_ref_fan_out_is_too_complex() {
        let mut defs = Map::new();
        for i in 0..40 {
            let r = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"oneOf": [{"$ref": r}, {"$ref": r}]}),
            );
        }
        defs.insert("d40".into(), json!(false));
        let s = Schema::compile(&json!({"$defs": defs, "$ref": "#/$defs/d0"})).unwrap();
        match check(&s, &json!(1)) {
            Err(CheckError::TooComplex(v)) => {
                assert!(v.message.contains(&MAX_STEPS.to_string()), "{v:?}")
            }
            other => panic!("expected too complex, got {other:?}"),
        }
        // The thread is fine afterwards, and so is the schema.
        assert_eq!(s.is_valid_within(&json!(1), 10), None);
    }
}
