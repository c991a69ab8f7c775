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

use super::pattern::{Cost, Pattern, LAZY_DFA_BYTES, MAX_PROGRAM_BYTES};
use serde::Serialize;
use serde_json::{json, Value};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

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

/// Takes `n` steps from the check running on this thread, or unwinds out
/// of it when fewer are left (before the work they pay for is done).
fn charge(n: u64) {
    STEPS_LEFT.with(|left| {
        let have = left.get();
        if have < n {
            left.set(0);
            // Not a panic: no hook runs, nothing is printed; `metered`
            // catches exactly this payload.
            std::panic::resume_unwind(Box::new(OutOfSteps));
        }
        left.set(have - n);
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

/// Counts one evaluation of its node, and what its node's keywords that
/// the validator runs itself cost by the text: the property names its
/// `patternProperties` match (twice: `additionalProperties` matches them
/// again), the string its `format` reads.
struct Counter {
    key_patterns: u64,
    format: bool,
}

impl Counter {
    fn of(value: &Value) -> Counter {
        Counter {
            key_patterns: value["pp"].as_u64().unwrap_or(0),
            format: value["format"].as_bool().unwrap_or(false),
        }
    }

    fn count(&self, instance: &Value) {
        let mut steps = 1;
        match instance {
            Value::Object(m) if self.key_patterns > 0 => {
                let names: usize = m.keys().map(String::len).sum();
                steps += Cost::Linear
                    .steps(names)
                    .saturating_mul(2 * self.key_patterns);
            }
            Value::String(s) if self.format => steps += Cost::Linear.steps(s.len()),
            _ => {}
        }
        charge(steps);
    }
}

impl<'i> jsonschema::Keyword<'i> for Counter {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        self.count(instance);
        Ok(())
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.count(instance);
        true
    }
}

/// `pattern`, matched by us: its cost by the string's length is charged
/// before it runs.
struct PatternKeyword {
    pattern: Arc<Pattern>,
    source: String,
}

impl PatternKeyword {
    fn matches(&self, s: &str) -> bool {
        charge(self.pattern.cost.steps(s.len()));
        self.pattern.is_match(s)
    }
}

impl<'i> jsonschema::Keyword<'i> for PatternKeyword {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        match instance {
            Value::String(s) if !self.matches(s) => {
                Err(jsonschema::ValidationError::custom(format!(
                    "{:?} does not match {:?}",
                    crate::text::bounded(s, 60),
                    crate::text::bounded(&self.source, 120)
                )))
            }
            _ => Ok(()),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        match instance {
            Value::String(s) => self.matches(s),
            _ => true,
        }
    }
}

/// The schema's patterns, compiled once by their text.
type Patterns = HashMap<String, Arc<Pattern>>;

/// Adds the counting member to the `allOf` of every object that may be a
/// subschema, and compiles its patterns (the error names the first that
/// passes a limit). Values that are data (`const`, `enum`, `default`,
/// `examples`) are left alone, and maps of subschemas (`properties`, …)
/// only have their members counted. Appending keeps the indices of an
/// existing `allOf`, so `$ref`s into it still resolve.
fn prepare(v: &mut Value, patterns: &mut Patterns) -> Result<(), String> {
    match v {
        Value::Object(map) => {
            for (keyword, child) in map.iter_mut() {
                match keyword.as_str() {
                    "const" | "enum" | "default" | "examples" | "$vocabulary" => {}
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas" | "dependencies" => {
                        if let Value::Object(members) = child {
                            for member in members.values_mut() {
                                prepare(member, patterns)?;
                            }
                        }
                    }
                    _ => prepare(child, patterns)?,
                }
            }
            if let Some(Value::String(p)) = map.get("pattern") {
                compiled(patterns, p)?;
            }
            let mut key_patterns = 0u64;
            if let Some(Value::Object(pp)) = map.get("patternProperties") {
                for p in pp.keys() {
                    // The validator matches these itself, after the
                    // counter has charged for them: each must be linear,
                    // so that what it does before the charge is small.
                    if compiled(patterns, p)?.cost != Cost::Linear {
                        return Err(format!(
                            "patternProperties pattern {:?} cannot be matched in time linear in \
                             the property name (its automaton is too large); simplify it",
                            crate::text::bounded(p, 80)
                        ));
                    }
                    key_patterns += 1;
                }
            }
            let counter = json!({ BUDGET_KEYWORD: {
                "pp": key_patterns,
                "format": map.contains_key("format"),
            }});
            match map.get_mut("allOf") {
                Some(Value::Array(all)) => all.push(counter),
                Some(_) => {}
                None => {
                    map.insert("allOf".into(), json!([counter]));
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                prepare(item, patterns)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `p` compiled, once per schema.
fn compiled(patterns: &mut Patterns, p: &str) -> Result<Arc<Pattern>, String> {
    if let Some(c) = patterns.get(p) {
        return Ok(c.clone());
    }
    let c = Arc::new(Pattern::compile(p)?);
    patterns.insert(p.to_owned(), c.clone());
    Ok(c)
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
    /// Patterns use a linear-time engine (no backtracking), compiled under
    /// limits and counted by the text they scan (`pattern.rs`), so no
    /// pattern can be made to take exponential time, or long linear time.
    /// This is CPU work: call it off the async threads.
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
        let mut patterns = Patterns::new();
        prepare(&mut counted, &mut patterns)?;
        let patterns = Arc::new(patterns);
        jsonschema::options()
            .with_keyword(BUDGET_KEYWORD, |_, value, _| {
                Ok(Box::new(Counter::of(value)))
            })
            .with_keyword("pattern", move |_, value, _| {
                let source = value.as_str().ok_or_else(|| {
                    jsonschema::ValidationError::custom("pattern must be a string")
                })?;
                let pattern = match patterns.get(source) {
                    Some(p) => p.clone(),
                    None => Arc::new(
                        Pattern::compile(source).map_err(jsonschema::ValidationError::custom)?,
                    ),
                };
                Ok(Box::new(PatternKeyword {
                    pattern,
                    source: source.to_owned(),
                }))
            })
            .with_pattern_options(
                jsonschema::PatternOptions::regex()
                    .size_limit(MAX_PROGRAM_BYTES)
                    .dfa_size_limit(LAZY_DFA_BYTES),
            )
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

    /// A pattern whose DFA blows up is charged by its states for each
    /// byte it scans, before it scans them: a megabyte stops at the bound
    /// at once (it took 10 s when a match counted as one step).
    #[test]
    fn pattern_work_is_counted_by_the_text() {
        let s = Schema::compile(&json!({"type": "string", "pattern": "a[ab]{1000}"})).unwrap();
        let text: String = (0..1_000_000)
            .map(|i| {
                if i % 800 == 799 {
                    'c'
                } else if i % 3 == 0 {
                    'a'
                } else {
                    'b'
                }
            })
            .collect();
        match check(&s, &json!(text)) {
            Err(CheckError::TooComplex(v)) => assert!(v.message.contains("steps"), "{v:?}"),
            other => panic!("expected too complex, got {other:?}"),
        }
        // Short text is checked as ever.
        assert!(check(&s, &json!(format!("a{}", "b".repeat(1000)))).is_ok());
        assert!(matches!(
            check(&s, &json!("abc")),
            Err(CheckError::Invalid(_))
        ));
        // A linear pattern reads a megabyte within the bound.
        let s = Schema::compile(&json!({"type": "string", "pattern": "^[a-z]+$"})).unwrap();
        assert!(check(&s, &json!("x".repeat(1_000_000))).is_ok());
        let Err(CheckError::Invalid(v)) = check(&s, &json!("Nope")) else {
            panic!("not invalid")
        };
        assert!(v[0].message.contains("does not match"), "{v:?}");
    }

    /// Patterns past the limits are refused when the schema is compiled,
    /// naming them, wherever they are.
    #[test]
    fn a_pattern_past_the_limits_is_refused_by_name() {
        for schema in [
            json!({"type": "string", "pattern": "a[ab]{5000}"}),
            json!({"properties": {"x": {"items": {"pattern": "a[ab]{5000}"}}}}),
            json!({"propertyNames": {"pattern": "a[ab]{5000}"}}),
            json!({"$defs": {"d": {"pattern": "a[ab]{5000}"}}}),
        ] {
            let e = Schema::compile(&schema).err().unwrap();
            assert!(e.contains("a[ab]{5000}") && e.contains("1000"), "{e}");
        }
        // Property names are matched by the validator itself: their
        // patterns must be linear.
        let e = Schema::compile(&json!({"patternProperties": {"a[ab]{500}": {}}}))
            .err()
            .unwrap();
        assert!(
            e.contains("patternProperties") && e.contains("a[ab]{500}"),
            "{e}"
        );
        let s = Schema::compile(&json!({"patternProperties": {"^x-": {"type": "integer"}},
                                        "additionalProperties": false}))
        .unwrap();
        assert!(check(&s, &json!({"x-a": 1})).is_ok());
        assert!(matches!(
            check(&s, &json!({"y": 1})),
            Err(CheckError::Invalid(_))
        ));
        // A property named "pattern" is not a pattern.
        assert!(Schema::compile(&json!({"properties": {"pattern": {"type": "string"}}})).is_ok());
    }

    /// Property names matched against patternProperties are counted by
    /// their bytes.
    #[test]
    fn property_names_are_counted_by_their_bytes() {
        let s = Schema::compile(&json!({"patternProperties": {"^x-": {}}})).unwrap();
        let mut big = Map::new();
        for i in 0..200 {
            big.insert(format!("{i}-{}", "k".repeat(10_000)), json!(1));
        }
        let big = Value::Object(big);
        assert_eq!(s.is_valid_within(&big, 1_000), None);
        assert_eq!(s.is_valid_within(&big, MAX_STEPS), Some(true));
    }
}
