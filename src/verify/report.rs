//! A verification's report: each recorded job's outcome beside the
//! candidate's, whether they match, where their outputs differ, and the
//! fuel of both. Pure: what ran is gathered elsewhere.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Most differences one run's diff lists; the rest are counted.
pub const MAX_DIFFS_PER_RUN: usize = 20;

/// How a run ended, as the report compares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Completed {
        #[schema(value_type = Value)]
        output: Value,
    },
    Failed {
        kind: String,
        code: String,
        message: String,
    },
    /// It neither completed nor failed (it snoozed, or waited): a
    /// verification does not follow it there.
    Stopped { reason: String },
}

impl Outcome {
    /// Two outcomes match when both completed with equal outputs (as JSON
    /// values: key order and number spelling do not count), or both failed
    /// with the same kind and code (a message may carry a time or an
    /// address, which is not a change of behaviour).
    pub fn matches(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Completed { output: a }, Outcome::Completed { output: b }) => a == b,
            (
                Outcome::Failed {
                    kind: ka, code: ca, ..
                },
                Outcome::Failed {
                    kind: kb, code: cb, ..
                },
            ) => ka == kb && ca == cb,
            _ => false,
        }
    }

    pub fn failed(&self) -> bool {
        !matches!(self, Outcome::Completed { .. })
    }
}

/// One place two outputs differ: a JSON pointer, and the value at it in
/// each (absent: `null` with `missing` naming the side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Difference {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Value>)]
    pub recorded: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Value>)]
    pub candidate: Option<Value>,
}

/// Where two JSON values differ, depth first, at most `max` places; the
/// second number is how many there were in all.
pub fn diff(recorded: &Value, candidate: &Value, max: usize) -> (Vec<Difference>, usize) {
    let mut out = Vec::new();
    let mut total = 0;
    walk(
        "",
        Some(recorded),
        Some(candidate),
        max,
        &mut out,
        &mut total,
    );
    (out, total)
}

fn walk(
    path: &str,
    a: Option<&Value>,
    b: Option<&Value>,
    max: usize,
    out: &mut Vec<Difference>,
    total: &mut usize,
) {
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                walk(&p, x.get(k), y.get(k), max, out, total);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                walk(&format!("{path}/{i}"), x.get(i), y.get(i), max, out, total);
            }
        }
        (a, b) if a == b => {}
        (a, b) => {
            *total += 1;
            if out.len() < max {
                out.push(Difference {
                    path: path.to_owned(),
                    recorded: a.cloned(),
                    candidate: b.cloned(),
                });
            }
        }
    }
}

/// One recorded job run again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Run {
    /// The recorded job.
    pub job: String,
    /// The version the recorded job ran.
    pub version: u32,
    pub same: bool,
    pub recorded_fuel: u64,
    pub candidate_fuel: u64,
}

/// A run whose outcome differs: both outcomes, and where the outputs differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Different {
    pub job: String,
    pub recorded: Outcome,
    pub candidate: Outcome,
    /// Where the outputs differ, when both completed (at most
    /// `MAX_DIFFS_PER_RUN` places; `diff_total` counts them all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<Difference>,
    #[serde(default)]
    pub diff_total: usize,
}

/// Fuel recorded and fuel now, summed over the runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FuelSums {
    pub recorded: u64,
    pub candidate: u64,
    /// candidate ÷ recorded (`null` when nothing was recorded).
    pub ratio: Option<f64>,
}

/// What a verification found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Report {
    pub task: String,
    /// The version whose limits the candidate ran under.
    pub version: u32,
    pub component: String,
    /// Recorded jobs run again.
    pub runs: usize,
    /// Runs whose outcome and output matched.
    pub same: usize,
    /// Runs whose outcome or output did not.
    pub different: usize,
    /// Runs the candidate did not complete.
    pub candidate_failures: usize,
    /// The task declares outbound HTTP or secrets: the candidate ran with
    /// every request refused and no secret, so its runs that need them
    /// differ for that reason.
    pub requests_refused: bool,
    pub fuel: FuelSums,
    /// Recorded jobs gone (pruned) before they were run again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    pub differences: Vec<Different>,
    /// Every run, in the order of the sample (newest recorded job first).
    pub each: Vec<Run>,
}

/// A recorded job and its candidate run, as the report takes them (and
/// a verification keeps each, to go on from after a lost runner).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub job: String,
    pub version: u32,
    pub recorded: Outcome,
    pub recorded_fuel: u64,
    pub candidate: Outcome,
    pub candidate_fuel: u64,
}

/// The head of a report: what was verified.
pub struct Subject {
    pub task: String,
    pub version: u32,
    pub component: String,
    pub requests_refused: bool,
}

impl Report {
    pub fn of(subject: Subject, pairs: Vec<Pair>, missing: Vec<String>) -> Report {
        let mut r = Report {
            task: subject.task,
            version: subject.version,
            component: subject.component,
            runs: pairs.len(),
            same: 0,
            different: 0,
            candidate_failures: 0,
            requests_refused: subject.requests_refused,
            fuel: FuelSums::default(),
            missing,
            differences: Vec::new(),
            each: Vec::with_capacity(pairs.len()),
        };
        for p in pairs {
            let same = p.recorded.matches(&p.candidate);
            if same {
                r.same += 1;
            } else {
                r.different += 1;
            }
            if p.candidate.failed() {
                r.candidate_failures += 1;
            }
            r.fuel.recorded = r.fuel.recorded.saturating_add(p.recorded_fuel);
            r.fuel.candidate = r.fuel.candidate.saturating_add(p.candidate_fuel);
            r.each.push(Run {
                job: p.job.clone(),
                version: p.version,
                same,
                recorded_fuel: p.recorded_fuel,
                candidate_fuel: p.candidate_fuel,
            });
            if !same {
                let (diff, diff_total) = match (&p.recorded, &p.candidate) {
                    (Outcome::Completed { output: a }, Outcome::Completed { output: b }) => {
                        diff(a, b, MAX_DIFFS_PER_RUN)
                    }
                    _ => (Vec::new(), 0),
                };
                r.differences.push(Different {
                    job: p.job,
                    recorded: p.recorded,
                    candidate: p.candidate,
                    diff,
                    diff_total,
                });
            }
        }
        r.fuel.ratio =
            (r.fuel.recorded > 0).then(|| r.fuel.candidate as f64 / r.fuel.recorded as f64);
        r
    }

    /// Whether every run matched.
    pub fn all_same(&self) -> bool {
        self.different == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn done(v: Value) -> Outcome {
        Outcome::Completed { output: v }
    }

    fn failed(kind: &str, code: &str, message: &str) -> Outcome {
        Outcome::Failed {
            kind: kind.into(),
            code: code.into(),
            message: message.into(),
        }
    }

    #[test]
    fn outcomes_match_by_value_and_by_kind_and_code() {
        let cases = [
            (
                done(json!({"a": 1, "b": [1, 2]})),
                done(json!({"b": [1, 2], "a": 1})),
                true,
            ),
            (done(json!({"a": 1})), done(json!({"a": 1.5})), false),
            (done(json!(null)), done(json!({})), false),
            (
                failed("task_failed", "bad", "at 12:00"),
                failed("task_failed", "bad", "at 12:01"),
                true,
            ),
            (
                failed("task_failed", "bad", "x"),
                failed("task_failed", "worse", "x"),
                false,
            ),
            (
                failed("timeout", "timeout", "x"),
                failed("trap", "timeout", "x"),
                false,
            ),
            (done(json!({})), failed("trap", "unreachable", "x"), false),
            (
                Outcome::Stopped {
                    reason: "snoozed".into(),
                },
                Outcome::Stopped {
                    reason: "snoozed".into(),
                },
                false,
            ),
        ];
        for (a, b, same) in cases {
            assert_eq!(a.matches(&b), same, "{a:?} vs {b:?}");
            assert_eq!(b.matches(&a), same, "{b:?} vs {a:?}");
        }
    }

    #[test]
    fn a_diff_names_each_place_by_pointer() {
        let (d, total) = diff(
            &json!({"total": 10, "lines": [1, 2], "a/b": "x", "gone": true}),
            &json!({"total": 11, "lines": [1, 2, 3], "a/b": "y", "new": null}),
            MAX_DIFFS_PER_RUN,
        );
        let paths: Vec<&str> = d.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["/a~1b", "/gone", "/lines/2", "/new", "/total"]);
        assert_eq!(total, 5);
        assert_eq!(d[1].candidate, None);
        assert_eq!(d[3].recorded, None);
        assert_eq!(d[3].candidate, Some(Value::Null));
        assert_eq!(d[4].recorded, Some(json!(10)));
        // Past the cap, counted only.
        let many_a = json!((0..30).collect::<Vec<_>>());
        let many_b = json!((1..31).collect::<Vec<_>>());
        let (d, total) = diff(&many_a, &many_b, MAX_DIFFS_PER_RUN);
        assert_eq!((d.len(), total), (MAX_DIFFS_PER_RUN, 30));
        // Equal values: nothing; values of other types: the place itself.
        assert_eq!(diff(&json!({"a": [1]}), &json!({"a": [1]}), 5).1, 0);
        let (d, _) = diff(&json!({"a": [1]}), &json!({"a": {"0": 1}}), 5);
        assert_eq!(d[0].path, "/a");
    }

    #[test]
    fn a_report_counts_sums_and_lists_the_differences() {
        let pair = |job: &str, recorded: Outcome, candidate: Outcome, fuel: (u64, u64)| Pair {
            job: job.into(),
            version: 1,
            recorded,
            recorded_fuel: fuel.0,
            candidate,
            candidate_fuel: fuel.1,
        };
        let r = Report::of(
            Subject {
                task: "t".into(),
                version: 2,
                component: "sha256:c".into(),
                requests_refused: false,
            },
            vec![
                pair(
                    "j1",
                    done(json!({"n": 1})),
                    done(json!({"n": 1})),
                    (100, 90),
                ),
                pair(
                    "j2",
                    done(json!({"n": 2})),
                    done(json!({"n": 3})),
                    (100, 90),
                ),
                pair(
                    "j3",
                    done(json!({"n": 3})),
                    failed("trap", "unreachable", "boom"),
                    (100, 20),
                ),
                pair(
                    "j4",
                    failed("task_failed", "bad", "a"),
                    failed("task_failed", "bad", "b"),
                    (0, 0),
                ),
            ],
            vec!["gone".into()],
        );
        assert_eq!(r.missing, ["gone"]);
        assert_eq!(
            (r.runs, r.same, r.different, r.candidate_failures),
            (4, 2, 2, 2)
        );
        assert!(!r.all_same());
        assert_eq!(
            (r.fuel.recorded, r.fuel.candidate, r.fuel.ratio),
            (300, 200, Some(200.0 / 300.0))
        );
        let jobs: Vec<&str> = r.differences.iter().map(|d| d.job.as_str()).collect();
        assert_eq!(jobs, ["j2", "j3"]);
        assert_eq!(r.differences[0].diff[0].path, "/n");
        assert!(r.differences[1].diff.is_empty());
        assert_eq!(r.each.len(), 4);
        assert!(r.each[0].same && !r.each[1].same);
        // Nothing recorded: no ratio.
        let empty = Report::of(
            Subject {
                task: "t".into(),
                version: 1,
                component: "c".into(),
                requests_refused: true,
            },
            Vec::new(),
            Vec::new(),
        );
        assert!(empty.all_same());
        assert_eq!(empty.fuel.ratio, None);
    }
}
