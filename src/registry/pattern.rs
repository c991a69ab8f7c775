//! The regular expressions of a tenant's schema (`pattern`, and the keys
//! of `patternProperties`): compiled under limits, and each given a cost
//! per byte of the text it scans, so that a check's bound counts pattern
//! work in proportion to the text.
//!
//! The regex crate never backtracks, but its linear time is linear in the
//! text *times* the pattern: a lazy DFA whose states blow up (`a[ab]{n}`
//! needs 2^n of them) falls back to simulating the NFA, one step per NFA
//! state per byte. Eleven bytes of pattern, `a[ab]{5000}`, made 5,006
//! states, and a megabyte of text took 10 s. So a pattern is
//! - refused at definition when a counted repetition passes
//!   [`MAX_REPEAT`] or the compiled program passes [`MAX_PROGRAM_BYTES`];
//! - *linear* when its whole DFA can be built within [`LINEAR_DFA_BYTES`]:
//!   the lazy DFA (given more room than that) then never falls back, and a
//!   byte costs about a nanosecond;
//! - otherwise charged by its NFA's states for every byte it scans.

use regex_automata::dfa::dense;
use regex_syntax::ast::{self, Ast, RepetitionKind, RepetitionRange};

/// Largest count a repetition (`{n}`, `{m,n}`, `{n,}`) may have.
pub const MAX_REPEAT: u32 = 1_000;
/// Largest compiled program a pattern may have (the regex crate's
/// `size_limit`).
pub const MAX_PROGRAM_BYTES: usize = 2 << 20;
/// The whole DFA of a linear pattern fits in this.
const LINEAR_DFA_BYTES: usize = 1 << 20;
/// Room for each pattern's lazy DFA (the regex crate's `dfa_size_limit`):
/// above [`LINEAR_DFA_BYTES`], so that a linear pattern's never fills.
pub const LAZY_DFA_BYTES: usize = 4 << 20;

/// What scanning text costs, in steps of a check's bound (about 10 ns of
/// a core each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// A DFA's walk: about a nanosecond a byte, charged 1/8 step.
    Linear,
    /// An NFA's simulation of this many states: about 2 ns a state and a
    /// byte (10 s for 5,006 states over a megabyte), charged a quarter
    /// step per state per byte.
    States(u64),
}

impl Cost {
    /// The steps scanning `bytes` of text costs.
    pub fn steps(self, bytes: usize) -> u64 {
        let bytes = bytes as u64;
        match self {
            Cost::Linear => bytes / 8 + 1,
            Cost::States(n) => bytes.saturating_mul(n.max(1)) / 4 + 1,
        }
    }
}

/// A tenant's pattern, compiled.
#[derive(Debug)]
pub struct Pattern {
    regex: regex::Regex,
    pub cost: Cost,
}

impl Pattern {
    /// Compiles `pattern` (ECMA 262 syntax, as JSON Schema has it) as the
    /// validator would, under the limits above; the error says which
    /// limit it passes and how to stay within it.
    pub fn compile(pattern: &str) -> Result<Pattern, String> {
        let shown = crate::text::bounded(pattern, 80);
        let translated = jsonschema_regex::to_rust_regex(pattern)
            .map_err(|()| format!("pattern {shown:?} is not a regular expression"))?;
        let parsed = ast::parse::Parser::new()
            .parse(&translated)
            .map_err(|e| format!("pattern {shown:?} is not a regular expression: {e}"))?;
        if let Some(n) = largest_repeat(&parsed) {
            if n > MAX_REPEAT {
                return Err(format!(
                    "pattern {shown:?} repeats {n} times; a counted repetition is at most \
                     {MAX_REPEAT} (use minLength/maxLength for lengths)"
                ));
            }
        }
        let regex = regex::RegexBuilder::new(&translated)
            .size_limit(MAX_PROGRAM_BYTES)
            .dfa_size_limit(LAZY_DFA_BYTES)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => format!(
                    "pattern {shown:?} compiles to more than {} KiB; simplify it (a Unicode \
                     class such as \\p{{L}} or . repeated is large: [A-Za-z] is not)",
                    MAX_PROGRAM_BYTES >> 10
                ),
                e => format!("pattern {shown:?} is not a regular expression: {e}"),
            })?;
        let cost = cost_of(&translated);
        Ok(Pattern { regex, cost })
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

/// Linear if the pattern's whole DFA (both searches: anchored and not)
/// can be built within [`LINEAR_DFA_BYTES`]; otherwise charged by its
/// NFA's states.
fn cost_of(translated: &str) -> Cost {
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .determinize_size_limit(Some(LINEAR_DFA_BYTES))
                .dfa_size_limit(Some(LINEAR_DFA_BYTES)),
        )
        .build(translated);
    if dfa.is_ok() {
        return Cost::Linear;
    }
    let states = regex_automata::nfa::thompson::Compiler::new()
        .configure(
            regex_automata::nfa::thompson::Config::new().nfa_size_limit(Some(MAX_PROGRAM_BYTES)),
        )
        .build(translated)
        .map_or(u64::MAX / 4, |nfa| nfa.states().len() as u64);
    Cost::States(states)
}

/// The largest count of any counted repetition in the pattern.
fn largest_repeat(parsed: &Ast) -> Option<u32> {
    struct Largest(Option<u32>);
    impl ast::Visitor for Largest {
        type Output = Option<u32>;
        type Err = ();
        fn finish(self) -> Result<Option<u32>, ()> {
            Ok(self.0)
        }
        fn visit_pre(&mut self, a: &Ast) -> Result<(), ()> {
            if let Ast::Repetition(r) = a {
                if let RepetitionKind::Range(range) = &r.op.kind {
                    let n = match *range {
                        RepetitionRange::Exactly(n) | RepetitionRange::AtLeast(n) => n,
                        RepetitionRange::Bounded(m, n) => m.max(n),
                    };
                    self.0 = Some(self.0.map_or(n, |l| l.max(n)));
                }
            }
            Ok(())
        }
    }
    ast::visit(parsed, Largest(None)).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_repetition_and_size_are_capped() {
        let e = Pattern::compile("a[ab]{5000}").unwrap_err();
        assert!(
            e.contains("repeats 5000 times") && e.contains("a[ab]{5000}"),
            "{e}"
        );
        let e = Pattern::compile(r"\p{L}{900}").unwrap_err();
        assert!(e.contains("KiB"), "{e}");
        assert!(Pattern::compile("a{1000}").is_ok());
        assert!(Pattern::compile("x{2,1000}").is_ok());
        let e = Pattern::compile("(").unwrap_err();
        assert!(e.contains("not a regular expression"), "{e}");
    }

    #[test]
    fn a_pattern_whose_dfa_blows_up_is_charged_by_its_states() {
        for linear in [
            "^[a-z]+$",
            r"^\p{L}+$",
            "^[a-z0-9._%+-]+@[a-z0-9.-]+$",
            "x{1000}y",
        ] {
            let p = Pattern::compile(linear).unwrap();
            assert_eq!(p.cost, Cost::Linear, "{linear}");
        }
        let p = Pattern::compile("a[ab]{1000}").unwrap();
        let Cost::States(n) = p.cost else {
            panic!("{:?}", p.cost)
        };
        assert!(n > 1000, "{n}");
        // A megabyte through it is far past a check's bound; a kilobyte
        // is not.
        assert!(p.cost.steps(1 << 20) > crate::registry::schema::MAX_STEPS);
        assert!(p.cost.steps(1 << 10) < crate::registry::schema::MAX_STEPS);
        assert!(Cost::Linear.steps(1 << 20) < crate::registry::schema::MAX_STEPS);
    }

    #[test]
    fn ecma_syntax_is_translated_as_the_validator_does() {
        // In ECMA 262 \d is ASCII only.
        let p = Pattern::compile(r"^\d+$").unwrap();
        assert!(p.is_match("123"));
        assert!(!p.is_match("١٢٣"));
    }
}
