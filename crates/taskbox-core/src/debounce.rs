//! Debounce keys: a job enqueued while another of its key is still pending
//! (queued, never started) replaces it, and starts `period_ms` after the
//! last enqueue but never later than `max_wait_ms` after the first. The
//! rule, and the statements that find and end the pending job, written once
//! for both backends.
//!
//! A chain of replacements keeps the time of its first enqueue (`since`),
//! so a steady stream still runs every `max_wait_ms`. The job replaced ends
//! `cancelled` (code `debounced`) and names its successor, so whoever waits
//! on it can follow; the successor names the job it replaced.

use crate::job::{ErrorKind, JobError, JobStatus, Transition};
use crate::time::Millis;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// Longest quiet time a debounce may wait for: a day.
pub const MAX_DEBOUNCE_PERIOD_MS: u64 = 86_400_000;
/// Longest a chain of replacements may hold its job back: a week.
pub const MAX_DEBOUNCE_WAIT_MS: u64 = 7 * 86_400_000;
/// `max_wait_ms` when none is given: so many periods.
pub const DEFAULT_WAIT_PERIODS: u64 = 10;

/// A job enqueued while another of its key is pending replaces it, and
/// runs `period_ms` after the last enqueue, but never later than
/// `max_wait_ms` after the first. As a task or a job declares it, `key` is
/// read as a concurrency key is (text, a `{field}` template or a JSON
/// pointer into the input).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"key": "{customer}", "period_ms": 2000, "max_wait_ms": 30000}))]
pub struct Debounce {
    pub key: String,
    /// How long after the last enqueue the job runs: 1 ms to a day.
    pub period_ms: u64,
    /// The most a chain of replacements holds its job back from the first
    /// enqueue: `period_ms` to a week; ten periods (at most a week) when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait_ms: Option<u64>,
}

impl Debounce {
    /// What is wrong with its period and wait, in words a user can act on
    /// (its key is checked where it is read).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.key.trim().is_empty() {
            out.push("debounce.key must not be empty".to_owned());
        }
        if self.period_ms == 0 || self.period_ms > MAX_DEBOUNCE_PERIOD_MS {
            out.push(format!(
                "debounce.period_ms must be between 1 and {MAX_DEBOUNCE_PERIOD_MS} (a day); it is {}",
                self.period_ms
            ));
        }
        if let Some(w) = self.max_wait_ms {
            if w < self.period_ms || w > MAX_DEBOUNCE_WAIT_MS {
                out.push(format!(
                    "debounce.max_wait_ms must be between period_ms ({}) and {MAX_DEBOUNCE_WAIT_MS} \
                     (a week); it is {w}",
                    self.period_ms
                ));
            }
        }
        out
    }

    /// `max_wait_ms`, or its default.
    pub fn max_wait(&self) -> u64 {
        self.max_wait_ms.unwrap_or_else(|| {
            self.period_ms
                .saturating_mul(DEFAULT_WAIT_PERIODS)
                .min(MAX_DEBOUNCE_WAIT_MS)
        })
    }
}

/// What a debounced job keeps (its `debounce` column): its debounce, with
/// the key made from its input, the time its chain began, the job it
/// replaced and, once replaced itself, its successor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Debounced {
    #[serde(flatten)]
    pub spec: Debounce,
    /// The first enqueue of its chain.
    pub since: Millis,
    /// The pending job it replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The job that replaced it (it ended `cancelled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
}

/// What the insert of a debounced job does to the pending one it found:
/// `END_PENDING`'s parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Replace {
    pub id: String,
    /// The pending job's `debounce`, naming its successor.
    pub ended: String,
    /// The error it ends with.
    pub error: JobError,
}

impl Replace {
    /// The status it ends in and the status it must still be in, as the
    /// transition table (`job.rs`) has a cancel of a queued job.
    pub fn statuses() -> (JobStatus, JobStatus) {
        let from = JobStatus::Queued;
        let to = from
            .after(Transition::Cancel)
            .unwrap_or(JobStatus::Cancelled);
        (to, from)
    }
}

impl Debounced {
    /// A new job's, before the insert looks for a pending one.
    pub fn new(spec: Debounce) -> Debounced {
        Debounced {
            spec,
            since: 0,
            replaced: None,
            successor: None,
        }
    }

    /// As the job's `debounce` column keeps it.
    pub fn to_text(&self) -> String {
        // Plain fields always write.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The column's text; `None` for text that does not read.
    pub fn from_text(text: &str) -> Option<Debounced> {
        serde_json::from_str(text).ok()
    }

    /// How the insert of job `id` at `now` ends `pending` (the key's
    /// pending job and its column), if it found one.
    pub fn replace(&self, id: &str, pending: &(String, Option<String>)) -> Replace {
        let (old, text) = pending;
        let mut ended = text
            .as_deref()
            .and_then(Debounced::from_text)
            .unwrap_or_else(|| self.clone());
        ended.successor = Some(id.to_owned());
        Replace {
            id: old.clone(),
            ended: ended.to_text(),
            error: JobError::with_code(
                ErrorKind::TaskFailed,
                "debounced",
                format!("debounced: replaced by job {id}, which runs in its place"),
            ),
        }
    }

    /// The job's chain and its `run_at`, at `now`: it goes on from the
    /// pending job it replaced (`replaced`: its id and column), or begins.
    /// It runs a period after now, but never later than `max_wait` after
    /// the chain's first enqueue, and never before `not_before` (a later
    /// time the enqueue asked for).
    pub fn settle(
        &mut self,
        now: Millis,
        not_before: Millis,
        replaced: Option<(String, Option<String>)>,
    ) -> Millis {
        self.since = now;
        self.replaced = None;
        if let Some((id, text)) = replaced {
            if let Some(before) = text.as_deref().and_then(Debounced::from_text) {
                self.since = before.since.min(now);
            }
            self.replaced = Some(id);
        }
        let quiet = crate::time::after(now, self.spec.period_ms);
        let cap = crate::time::after(self.since, self.spec.max_wait());
        quiet.min(cap).max(now).max(not_before)
    }
}

/// The pending job of a tenant's debounce key ($1 tenant, $2 key): queued
/// and never started (a retry in line is not pending: it ran). Answers its
/// id and `debounce`. Reads the `jobs_debounce` index.
pub static PENDING: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT id, debounce FROM jobs WHERE tenant = $1 AND debounce_key = $2 \
         AND status = '{}' AND attempts = 0 ORDER BY created_at LIMIT 1",
        JobStatus::Queued.as_str()
    )
});

#[cfg(test)]
mod tests {
    use super::*;

    fn d(period_ms: u64, max_wait_ms: Option<u64>) -> Debounced {
        Debounced::new(Debounce {
            key: "k".into(),
            period_ms,
            max_wait_ms,
        })
    }

    #[test]
    fn a_job_runs_a_period_after_the_last_enqueue_and_never_past_the_wait() {
        // The first of its key: a period on.
        let mut first = d(1000, Some(3000));
        assert_eq!(first.settle(10_000, 10_000, None), 11_000);
        assert_eq!(first.since, 10_000);
        let first_text = first.to_text();
        // Each replacement moves the run on, within the chain's wait.
        let mut next = d(1000, Some(3000));
        let pending = ("a".to_owned(), Some(first_text));
        assert_eq!(next.settle(10_900, 10_900, Some(pending.clone())), 11_900);
        assert_eq!((next.since, next.replaced.as_deref()), (10_000, Some("a")));
        let mut late = d(1000, Some(3000));
        let chained = ("b".to_owned(), Some(next.to_text()));
        assert_eq!(late.settle(12_500, 12_500, Some(chained)), 13_000);
        // Past the wait already (its job was not yet claimed): now.
        let mut overdue = d(1000, Some(3000));
        let old = ("c".to_owned(), Some(late.to_text()));
        assert_eq!(overdue.settle(14_000, 14_000, Some(old)), 14_000);
        // A later time the enqueue asked for holds.
        let mut asked = d(1000, None);
        assert_eq!(asked.settle(0, 5_000, None), 5_000);
        // The pending job names its successor, and says so in its error.
        let r = next.replace("z", &pending);
        assert_eq!(r.id, "a");
        let ended = Debounced::from_text(&r.ended).unwrap();
        assert_eq!(ended.successor.as_deref(), Some("z"));
        assert_eq!(ended.since, 10_000);
        assert_eq!(r.error.code, "debounced");
        assert!(r.error.message.contains("job z"), "{}", r.error.message);
    }

    #[test]
    fn limits_are_checked_and_the_wait_defaults_to_ten_periods() {
        assert!(d(1000, None).spec.problems().is_empty());
        assert_eq!(d(1000, None).spec.max_wait(), 10_000);
        assert_eq!(
            d(MAX_DEBOUNCE_PERIOD_MS, None).spec.max_wait(),
            MAX_DEBOUNCE_WAIT_MS
        );
        assert_eq!(d(0, None).spec.problems().len(), 1);
        assert_eq!(d(MAX_DEBOUNCE_PERIOD_MS + 1, None).spec.problems().len(), 1);
        assert_eq!(d(1000, Some(999)).spec.problems().len(), 1);
        assert_eq!(
            d(1000, Some(MAX_DEBOUNCE_WAIT_MS + 1))
                .spec
                .problems()
                .len(),
            1
        );
        let mut blank = d(1000, Some(1000));
        blank.spec.key = " ".into();
        assert_eq!(blank.spec.problems().len(), 1);
        let text = d(5, Some(6)).to_text();
        assert_eq!(Debounced::from_text(&text), Some(d(5, Some(6))));
        assert_eq!(Debounced::from_text("{}"), None);
    }
}
