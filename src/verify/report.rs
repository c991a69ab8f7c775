//! A verification's report: each recorded job's outcome beside the
//! candidate's, whether they match, where their outputs first differ, and
//! the fuel of both. Pure: what ran is gathered elsewhere.
//!
//! Bounded whatever the runs returned: a run is kept as its verdict, the
//! sha256 of each output (canonical JSON), each failure's kind, code and a
//! cut message, and a preview of the first place the outputs differ, cut
//! to [`PREVIEW_BYTES`] and redacted; never an output whole. So a kept run
//! is at most [`MAX_KEPT_BYTES`] and a report at most that many a run
//! (issue 65: a report that kept outputs whole made 216 MB of 60 runs).

use crate::sandbox::Redactor;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Most bytes of a difference's preview: its path and both values' text.
pub const PREVIEW_BYTES: usize = 1024;
/// A preview's path, and each side's text, cut to these (as JSON writes
/// them, escapes counted): 128 + 2 × 440 ≤ [`PREVIEW_BYTES`].
const PATH_BYTES: usize = 128;
const SIDE_BYTES: usize = 440;
/// A failure's code and message, as a report keeps them.
const KIND_BYTES: usize = 64;
const CODE_BYTES: usize = 128;
const MESSAGE_BYTES: usize = 512;
/// Most bytes one kept run takes as JSON, whatever its outputs were.
pub const MAX_KEPT_BYTES: usize = 4096;

/// How a run ended, whole, as the runner has it for the moment it takes
/// to compare: never kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    Completed(Value),
    Failed {
        kind: String,
        code: String,
        message: String,
    },
    /// It neither completed nor failed (it snoozed, or waited): a
    /// verification does not follow it there.
    Stopped(String),
}

impl Ended {
    /// Two ends match when both completed with equal outputs (as JSON
    /// values: key order and spacing do not count), or both failed with
    /// the same kind and code (a message may carry a time or an address,
    /// which is not a change of behaviour).
    pub fn matches(&self, other: &Ended) -> bool {
        match (self, other) {
            (Ended::Completed(a), Ended::Completed(b)) => a == b,
            (
                Ended::Failed {
                    kind: ka, code: ca, ..
                },
                Ended::Failed {
                    kind: kb, code: cb, ..
                },
            ) => ka == kb && ca == cb,
            _ => false,
        }
    }
}

/// How a run ended, as a report keeps it: an output by its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Completed {
        /// `sha256:` and the hex sha256 of the output as canonical JSON
        /// (keys sorted, no spaces): equal outputs have equal hashes.
        output_sha256: String,
        /// The canonical output's length in bytes.
        output_bytes: usize,
    },
    Failed {
        kind: String,
        /// Cut to 128 bytes.
        code: String,
        /// Redacted, cut to 512 bytes.
        message: String,
    },
    Stopped {
        reason: String,
    },
}

impl Outcome {
    fn of(ended: &Ended, redactor: &Redactor) -> Outcome {
        match ended {
            Ended::Completed(v) => {
                let (output_sha256, output_bytes) = crate::canonical::sha256(v);
                Outcome::Completed {
                    output_sha256,
                    output_bytes,
                }
            }
            Ended::Failed {
                kind,
                code,
                message,
            } => Outcome::Failed {
                kind: shown(redactor, kind, KIND_BYTES),
                code: shown(redactor, code, CODE_BYTES),
                message: shown(redactor, message, MESSAGE_BYTES),
            },
            Ended::Stopped(reason) => Outcome::Stopped {
                reason: shown(redactor, reason, MESSAGE_BYTES),
            },
        }
    }

    pub fn failed(&self) -> bool {
        !matches!(self, Outcome::Completed { .. })
    }

    /// The output's hash, when it completed.
    fn sha256(&self) -> Option<String> {
        match self {
            Outcome::Completed { output_sha256, .. } => Some(output_sha256.clone()),
            _ => None,
        }
    }
}

/// `text` as a report shows it: redacted with the task's secrets, then cut
/// to `max` bytes as JSON writes it.
fn shown(redactor: &Redactor, text: &str, max: usize) -> String {
    crate::text::bounded_json(&redactor.apply(text), max)
}

/// The first place two outputs differ: a JSON pointer, and the JSON text
/// of the value at it on each side (absent: no field), redacted and cut
/// to [`PREVIEW_BYTES`] in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Difference {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
}

/// Where two JSON values differ, depth first: the first place, whole, and
/// how many places there are in all.
fn diff<'a>(recorded: &'a Value, candidate: &'a Value) -> (Option<Place<'a>>, usize) {
    let mut first = None;
    let mut total = 0;
    walk("", Some(recorded), Some(candidate), &mut first, &mut total);
    (first, total)
}

/// A place two values differ: its pointer and the value on each side.
type Place<'a> = (String, Option<&'a Value>, Option<&'a Value>);

fn walk<'a>(
    path: &str,
    a: Option<&'a Value>,
    b: Option<&'a Value>,
    first: &mut Option<Place<'a>>,
    total: &mut usize,
) {
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                walk(&p, x.get(k), y.get(k), first, total);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                walk(&format!("{path}/{i}"), x.get(i), y.get(i), first, total);
            }
        }
        (a, b) if a == b => {}
        (a, b) => {
            *total += 1;
            if first.is_none() {
                *first = Some((path.to_owned(), a, b));
            }
        }
    }
}

impl Difference {
    fn preview(path: &str, a: Option<&Value>, b: Option<&Value>, redactor: &Redactor) -> Self {
        let side = |v: Option<&Value>| v.map(|v| shown(redactor, &v.to_string(), SIDE_BYTES));
        Difference {
            path: shown(redactor, path, PATH_BYTES),
            recorded: side(a),
            candidate: side(b),
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
    /// The recorded output's hash (as in `Outcome`), when it completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_sha256: Option<String>,
    /// The candidate's output's hash, when it completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_sha256: Option<String>,
    pub recorded_fuel: u64,
    pub candidate_fuel: u64,
}

/// A run whose outcome differs: both outcomes, and where the outputs
/// first differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Different {
    pub job: String,
    pub recorded: Outcome,
    pub candidate: Outcome,
    /// The first place the outputs differ, when both completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<Difference>,
    /// How many places they differ at in all.
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

/// A recorded job and its candidate run, compared and cut to what a
/// report keeps (and a verification keeps each, to go on from after a
/// lost runner): at most [`MAX_KEPT_BYTES`] as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub job: String,
    pub version: u32,
    pub same: bool,
    pub recorded: Outcome,
    pub recorded_fuel: u64,
    pub candidate: Outcome,
    pub candidate_fuel: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<Difference>,
    #[serde(default)]
    pub diff_total: usize,
}

/// One side of a pair: how it ended and what it burned.
pub struct Side<'a> {
    pub ended: &'a Ended,
    pub fuel: u64,
}

impl Pair {
    /// `recorded` and `candidate` compared whole, kept cut: text the
    /// report shows is redacted with `redactor` (the task's secrets) before
    /// it is cut.
    pub fn of(
        job: String,
        version: u32,
        recorded: Side<'_>,
        candidate: Side<'_>,
        redactor: &Redactor,
    ) -> Pair {
        let same = recorded.ended.matches(candidate.ended);
        let (first_difference, diff_total) = match (recorded.ended, candidate.ended) {
            (Ended::Completed(a), Ended::Completed(b)) if !same => {
                let (first, total) = diff(a, b);
                (
                    first.map(|(path, a, b)| Difference::preview(&path, a, b, redactor)),
                    total,
                )
            }
            _ => (None, 0),
        };
        Pair {
            job,
            version,
            same,
            recorded: Outcome::of(recorded.ended, redactor),
            recorded_fuel: recorded.fuel,
            candidate: Outcome::of(candidate.ended, redactor),
            candidate_fuel: candidate.fuel,
            first_difference,
            diff_total,
        }
    }
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
            if p.same {
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
                same: p.same,
                recorded_sha256: p.recorded.sha256(),
                candidate_sha256: p.candidate.sha256(),
                recorded_fuel: p.recorded_fuel,
                candidate_fuel: p.candidate_fuel,
            });
            if !p.same {
                r.differences.push(Different {
                    job: p.job,
                    recorded: p.recorded,
                    candidate: p.candidate,
                    first_difference: p.first_difference,
                    diff_total: p.diff_total,
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

    fn done(v: Value) -> Ended {
        Ended::Completed(v)
    }

    fn failed(kind: &str, code: &str, message: &str) -> Ended {
        Ended::Failed {
            kind: kind.into(),
            code: code.into(),
            message: message.into(),
        }
    }

    fn pair(job: &str, recorded: &Ended, candidate: &Ended, fuel: (u64, u64)) -> Pair {
        pair_with(job, recorded, candidate, fuel, &Redactor::default())
    }

    fn pair_with(
        job: &str,
        recorded: &Ended,
        candidate: &Ended,
        fuel: (u64, u64),
        redactor: &Redactor,
    ) -> Pair {
        Pair::of(
            job.into(),
            1,
            Side {
                ended: recorded,
                fuel: fuel.0,
            },
            Side {
                ended: candidate,
                fuel: fuel.1,
            },
            redactor,
        )
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
                Ended::Stopped("snoozed".into()),
                Ended::Stopped("snoozed".into()),
                false,
            ),
        ];
        for (a, b, same) in cases {
            assert_eq!(a.matches(&b), same, "{a:?} vs {b:?}");
            assert_eq!(b.matches(&a), same, "{b:?} vs {a:?}");
            // What is kept says the same, and equal outputs hash alike.
            let p = pair("j", &a, &b, (0, 0));
            assert_eq!(p.same, same, "{a:?} vs {b:?}");
            if let (Ended::Completed(_), Ended::Completed(_)) = (&a, &b) {
                assert_eq!(p.recorded.sha256() == p.candidate.sha256(), same);
            }
        }
    }

    #[test]
    fn a_difference_is_the_first_place_by_pointer_and_a_count() {
        let p = pair(
            "j",
            &done(json!({"total": 10, "lines": [1, 2], "a/b": "x", "gone": true})),
            &done(json!({"total": 11, "lines": [1, 2, 3], "a/b": "y", "new": null})),
            (0, 0),
        );
        let d = p.first_difference.unwrap();
        assert_eq!(d.path, "/a~1b");
        assert_eq!(
            (d.recorded.as_deref(), d.candidate.as_deref()),
            (Some("\"x\""), Some("\"y\""))
        );
        assert_eq!(p.diff_total, 5);
        // A side that has nothing there has no field; one that has null
        // has its text.
        let p = pair(
            "j",
            &done(json!({"a": 1})),
            &done(json!({"b": null})),
            (0, 0),
        );
        let d = p.first_difference.unwrap();
        assert_eq!((d.path.as_str(), d.candidate), ("/a", None));
        // Values of other types: the place itself.
        let p = pair(
            "j",
            &done(json!({"a": [1]})),
            &done(json!({"a": {"0": 1}})),
            (0, 0),
        );
        assert_eq!(p.first_difference.unwrap().path, "/a");
        // Equal, or not both completed: no difference.
        assert_eq!(
            pair("j", &done(json!([1])), &done(json!([1])), (0, 0)).diff_total,
            0
        );
        let p = pair("j", &done(json!(1)), &failed("trap", "x", "y"), (0, 0));
        assert_eq!((p.first_difference, p.diff_total), (None, 0));
    }

    #[test]
    fn a_kept_run_is_bounded_and_redacted_whatever_the_outputs() {
        let secret = "s3cr3t-value-of-the-tenant";
        let redactor = Redactor::new(&[("KEY".into(), secret.into())]);
        // Outputs of a megabyte under a key of 100 kB, the secret in the
        // path and in both values; failures with long codes and messages.
        let key = format!("{secret}{}", "k".repeat(100_000));
        let big = |c: &str| {
            let mut m = serde_json::Map::new();
            m.insert(
                key.clone(),
                json!(format!("{secret}{}", c.repeat(1_000_000))),
            );
            Value::Object(m)
        };
        let long = format!("{secret}{}", "m".repeat(100_000));
        let cases = [
            (done(big("a")), done(big("b"))),
            (done(big("a")), failed("trap", &long, &long)),
            (failed(&long, &long, &long), done(big("b"))),
            (Ended::Stopped(long.clone()), Ended::Stopped(long.clone())),
            // What escaping makes longer: quotes, control characters.
            (
                done(json!({"q": "\"".repeat(10_000)})),
                done(json!({"q": "\u{1}".repeat(10_000)})),
            ),
            (
                failed(
                    &"\u{1}".repeat(10_000),
                    &"\"".repeat(10_000),
                    &"\u{1}".repeat(10_000),
                ),
                failed(
                    &"\\".repeat(10_000),
                    &"\u{2}".repeat(10_000),
                    &"\"".repeat(10_000),
                ),
            ),
        ];
        for (a, b) in &cases {
            let p = pair_with(&"j".repeat(26), a, b, (u64::MAX, u64::MAX), &redactor);
            let kept = serde_json::to_string(&p).unwrap();
            assert!(kept.len() <= MAX_KEPT_BYTES, "{} bytes kept", kept.len());
            assert!(!kept.contains(secret), "{kept}");
            if let Some(d) = &p.first_difference {
                let written = |s: &str| serde_json::to_string(s).unwrap().len() - 2;
                let preview = written(&d.path)
                    + d.recorded.as_deref().map_or(0, written)
                    + d.candidate.as_deref().map_or(0, written);
                assert!(preview <= PREVIEW_BYTES, "{preview} bytes of preview");
                if d.path != "/q" {
                    assert!(d.path.starts_with("/[redacted]"), "{}", d.path);
                    assert!(d.recorded.as_ref().unwrap().starts_with("\"[redacted]aaa"));
                }
            }
            // A kept run reads back as it was.
            assert_eq!(serde_json::from_str::<Pair>(&kept).unwrap(), p);
        }
    }

    #[test]
    fn a_report_counts_sums_and_lists_the_differences() {
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
                    &done(json!({"n": 1})),
                    &done(json!({"n": 1})),
                    (100, 90),
                ),
                pair(
                    "j2",
                    &done(json!({"n": 2})),
                    &done(json!({"n": 3})),
                    (100, 90),
                ),
                pair(
                    "j3",
                    &done(json!({"n": 3})),
                    &failed("trap", "unreachable", "boom"),
                    (100, 20),
                ),
                pair(
                    "j4",
                    &failed("task_failed", "bad", "a"),
                    &failed("task_failed", "bad", "b"),
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
        assert_eq!(
            r.differences[0].first_difference.as_ref().unwrap().path,
            "/n"
        );
        assert!(r.differences[1].first_difference.is_none());
        assert_eq!(r.each.len(), 4);
        assert!(r.each[0].same && !r.each[1].same);
        // Each run names both outputs by hash: equal for the same output.
        assert_eq!(r.each[0].recorded_sha256, r.each[0].candidate_sha256);
        assert_ne!(r.each[1].recorded_sha256, r.each[1].candidate_sha256);
        assert!(r.each[2].candidate_sha256.is_none() && r.each[3].recorded_sha256.is_none());
        assert_eq!(
            r.each[0].recorded_sha256.as_deref(),
            Some(crate::canonical::sha256(&json!({"n": 1})).0.as_str())
        );
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
