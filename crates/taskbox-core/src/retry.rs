//! A task's retry policy (the `retry` block of `PUT /v1/tasks/{name}`) and the
//! one decision it makes: after a failed attempt, run again when, or fail now.

use crate::job::{ErrorKind, JobError};
use serde::{Deserialize, Serialize};

/// Most attempts a task may ask for.
pub const MAX_ATTEMPTS_CEILING: u32 = 100;
/// Longest base delay a task may ask for: one day.
pub const MAX_DELAY_MS_CEILING: u64 = 24 * 60 * 60 * 1000;

/// How a task's failed attempts are retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (default 3).
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
    #[serde(default, deserialize_with = "crate::strict::object")]
    pub backoff: Backoff,
    /// Failure codes that fail the job at once (matched against the guest's code).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_retryable: Vec<String>,
}

fn default_max_attempts() -> u32 {
    3
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: default_max_attempts(),
            backoff: Backoff::default(),
            non_retryable: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BackoffKind {
    Fixed,
    Exponential,
}

/// The wait before the next attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Backoff {
    pub kind: BackoffKind,
    /// The first delay (and every delay, for `fixed`).
    pub delay_ms: u64,
    /// Growth per attempt for `exponential` (default 2.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    /// Cap on the delay (default 100 × `delay_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay_ms: Option<u64>,
    /// Random spread, as a fraction of the delay either way (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<f64>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            kind: BackoffKind::Exponential,
            delay_ms: 1000,
            factor: None,
            max_delay_ms: None,
            jitter: None,
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Queue the job again to run after this many milliseconds.
    RetryAfter(u64),
    /// Fail the job now.
    Fail(FailReason),
}

/// Why no further attempt is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    /// The guest said `retryable: false`.
    GuestSaidSo,
    /// The failure's code is in the task's `non_retryable` list.
    NonRetryableCode,
    /// The same code on the same input would fail the same way.
    Deterministic,
    /// Every attempt has been used.
    OutOfAttempts,
    /// The job's deadline has passed.
    DeadlineExceeded,
}

impl RetryPolicy {
    /// Checks a policy a tenant sent; each problem in words they can act on.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        if !(1..=MAX_ATTEMPTS_CEILING).contains(&self.max_attempts) {
            problems.push(format!(
                "retry.max_attempts must be between 1 and {MAX_ATTEMPTS_CEILING}, not {}",
                self.max_attempts
            ));
        }
        let b = &self.backoff;
        if b.delay_ms > MAX_DELAY_MS_CEILING {
            problems.push(format!(
                "retry.backoff.delay_ms must be at most {MAX_DELAY_MS_CEILING} (one day), not {}",
                b.delay_ms
            ));
        }
        if let Some(f) = b.factor {
            if !(1.0..=100.0).contains(&f) {
                problems.push(format!(
                    "retry.backoff.factor must be between 1.0 and 100.0, not {f}"
                ));
            }
            if b.kind == BackoffKind::Fixed {
                problems.push("retry.backoff.factor applies only to kind \"exponential\"".into());
            }
        }
        if let Some(j) = b.jitter {
            if !(0.0..=1.0).contains(&j) {
                problems.push(format!(
                    "retry.backoff.jitter must be between 0.0 and 1.0, not {j}"
                ));
            }
        }
        if let Some(m) = b.max_delay_ms {
            if m < b.delay_ms {
                problems.push(format!(
                    "retry.backoff.max_delay_ms ({m}) must not be below delay_ms ({})",
                    b.delay_ms
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    /// After attempt number `attempt` (1-based) failed with `error`: retry
    /// when, or fail. `random` yields numbers in [0, 1) for the jitter.
    pub fn decide(&self, error: &JobError, attempt: u32, random: impl FnOnce() -> f64) -> Decision {
        if error.kind == ErrorKind::DeadlineExceeded {
            return Decision::Fail(FailReason::DeadlineExceeded);
        }
        if error.retryable == Some(false) {
            return Decision::Fail(FailReason::GuestSaidSo);
        }
        if self.non_retryable.contains(&error.code) {
            return Decision::Fail(FailReason::NonRetryableCode);
        }
        if error.kind.is_deterministic() {
            return Decision::Fail(FailReason::Deterministic);
        }
        if attempt >= self.max_attempts {
            return Decision::Fail(FailReason::OutOfAttempts);
        }
        Decision::RetryAfter(self.backoff.delay_ms_after(attempt, random()))
    }
}

/// A uniform random number in [0, 1): the draw a retry's jitter takes,
/// for every caller of [`RetryPolicy::decide`] that runs for real.
pub fn rand_unit() -> f64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

impl Backoff {
    /// The delay after attempt `attempt` (1-based) failed, `r` in [0, 1).
    pub fn delay_ms_after(&self, attempt: u32, r: f64) -> u64 {
        let base = self.delay_ms as f64;
        let cap = self
            .max_delay_ms
            .unwrap_or_else(|| self.delay_ms.saturating_mul(100)) as f64;
        let raw = match self.kind {
            BackoffKind::Fixed => base,
            BackoffKind::Exponential => {
                let exp = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
                base * self.factor.unwrap_or(2.0).powi(exp)
            }
        };
        let capped = raw.min(cap);
        let jitter = self.jitter.unwrap_or(0.1).clamp(0.0, 1.0);
        let spread = capped * jitter * (2.0 * r.clamp(0.0, 1.0) - 1.0);
        // `as` saturates: an infinite or huge product cannot wrap.
        (capped + spread).max(0.0).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(kind: ErrorKind, code: &str, retryable: Option<bool>) -> JobError {
        JobError {
            kind,
            code: code.into(),
            message: String::new(),
            retryable,
        }
    }

    fn no_jitter(kind: BackoffKind) -> Backoff {
        Backoff {
            kind,
            delay_ms: 100,
            factor: None,
            max_delay_ms: None,
            jitter: Some(0.0),
        }
    }

    #[test]
    fn exponential_grows_by_the_factor_up_to_the_cap() {
        let b = no_jitter(BackoffKind::Exponential);
        let delays: Vec<_> = (1..=9).map(|a| b.delay_ms_after(a, 0.5)).collect();
        assert_eq!(
            delays,
            [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]
        );
        assert_eq!(b.delay_ms_after(u32::MAX, 0.5), 10_000, "no overflow");
        let b = Backoff {
            factor: Some(3.0),
            max_delay_ms: Some(500),
            ..b
        };
        assert_eq!(
            (1..=4)
                .map(|a| b.delay_ms_after(a, 0.5))
                .collect::<Vec<_>>(),
            [100, 300, 500, 500]
        );
    }

    #[test]
    fn fixed_stays_put_and_jitter_spreads_both_ways() {
        let b = no_jitter(BackoffKind::Fixed);
        assert_eq!(b.delay_ms_after(7, 0.9), 100);
        let b = Backoff {
            jitter: Some(0.1),
            ..b
        };
        assert_eq!(b.delay_ms_after(1, 0.0), 90);
        assert_eq!(b.delay_ms_after(1, 0.5), 100);
        assert_eq!(b.delay_ms_after(1, 0.999_999), 110);
    }

    #[test]
    fn who_is_retried() {
        let p = RetryPolicy {
            non_retryable: vec!["card_declined".into()],
            ..RetryPolicy::default()
        };
        let at = |e: &JobError, attempt| p.decide(e, attempt, || 0.5);
        let task = failed(ErrorKind::TaskFailed, "flaky", Some(true));
        assert!(matches!(at(&task, 1), Decision::RetryAfter(_)));
        assert!(matches!(at(&task, 2), Decision::RetryAfter(_)));
        assert_eq!(at(&task, 3), Decision::Fail(FailReason::OutOfAttempts));
        assert_eq!(
            at(&failed(ErrorKind::TaskFailed, "x", Some(false)), 1),
            Decision::Fail(FailReason::GuestSaidSo)
        );
        assert_eq!(
            at(
                &failed(ErrorKind::TaskFailed, "card_declined", Some(true)),
                1
            ),
            Decision::Fail(FailReason::NonRetryableCode)
        );
        for kind in [
            ErrorKind::FuelExhausted,
            ErrorKind::MemoryLimit,
            ErrorKind::StackOverflow,
            ErrorKind::Trap,
            ErrorKind::InvalidOutput,
            ErrorKind::OutputTooLarge,
        ] {
            assert_eq!(
                at(&failed(kind, kind.as_str(), None), 1),
                Decision::Fail(FailReason::Deterministic)
            );
        }
        for kind in [ErrorKind::Timeout, ErrorKind::RunnerLost] {
            assert!(matches!(
                at(&failed(kind, kind.as_str(), None), 1),
                Decision::RetryAfter(_)
            ));
        }
        assert_eq!(
            at(
                &failed(ErrorKind::DeadlineExceeded, "deadline_exceeded", None),
                1
            ),
            Decision::Fail(FailReason::DeadlineExceeded)
        );
    }

    #[test]
    fn the_contract_shape_parses_and_unknown_fields_are_refused() {
        let p: RetryPolicy = serde_json::from_str(
            r#"{"max_attempts": 5, "backoff": {"kind": "fixed", "delay_ms": 250}, "non_retryable": ["bad_input"]}"#,
        )
        .unwrap();
        assert_eq!(p.max_attempts, 5);
        assert_eq!(p.backoff.kind, BackoffKind::Fixed);
        let err = serde_json::from_str::<RetryPolicy>(r#"{"max_attemps": 5}"#).unwrap_err();
        assert!(err.to_string().contains("max_attemps"), "{err}");
    }

    #[test]
    fn validation_names_each_problem() {
        let p = RetryPolicy {
            max_attempts: 0,
            backoff: Backoff {
                kind: BackoffKind::Fixed,
                delay_ms: 10,
                factor: Some(0.5),
                max_delay_ms: Some(5),
                jitter: Some(2.0),
            },
            non_retryable: vec![],
        };
        let problems = p.validate().unwrap_err();
        assert_eq!(problems.len(), 5, "{problems:#?}");
        assert!(RetryPolicy::default().validate().is_ok());
    }
}
