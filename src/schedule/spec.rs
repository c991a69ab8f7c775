//! A schedule's definition as `PUT /v1/schedules/{name}` takes it, and the
//! checks that need no store: its cron expression and time zone, what it
//! runs, its overlap policy and catch-up window.

use super::cron_expr::{CronError, CronExpr};
use crate::registry::spec::check_name;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long after a slot it may still fire (after downtime, or a leader's
/// takeover), unless the schedule says: a minute.
pub const DEFAULT_CATCHUP_MS: u64 = 60_000;
/// The longest catch-up window a schedule may ask for: a week.
pub const MAX_CATCHUP_MS: u64 = 7 * 24 * 60 * 60 * 1000;

/// What a slot does while the schedule's last job is still active.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// No job: the slot is skipped (and counted).
    #[default]
    Skip,
    /// A job, whatever runs.
    Allow,
    /// One slot waits for the last job to end, then fires; more are skipped.
    BufferOne,
}

impl Overlap {
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Skip => "skip",
            Overlap::Allow => "allow",
            Overlap::BufferOne => "buffer_one",
        }
    }
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

fn yes() -> bool {
    true
}

/// A schedule's definition. Unknown fields are refused, so that a
/// misspelled one is not silently ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSpec {
    /// 5 fields (minute hour day-of-month month day-of-week), or 6–7 with
    /// seconds first and a year last.
    pub cron: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    #[serde(default = "empty_object")]
    pub input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// An IANA zone; UTC when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(default)]
    pub overlap: Overlap,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup_window_ms: Option<u64>,
    /// Whether it fires; pause and resume change it afterwards, so the
    /// stored definition leaves it out.
    #[serde(default = "yes", skip_serializing)]
    pub enabled: bool,
    /// A task run first, on `{"schedule", "slot", "input"}`: its output is
    /// the slot's job's input, or `{"skip": true}` skips the slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
}

/// Why a definition was refused: a bad cron expression or time zone (400),
/// or another problem with the definition (422).
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error(transparent)]
    Cron(#[from] CronError),
    #[error("{0}")]
    Invalid(String),
}

impl ScheduleSpec {
    /// Checks the definition; answers its cron expression.
    pub fn check(&self) -> Result<CronExpr, SpecError> {
        let cron = CronExpr::parse(&self.cron, self.timezone.as_deref())?;
        let invalid = SpecError::Invalid;
        match (&self.task, &self.workflow) {
            (Some(_), Some(_)) => {
                return Err(invalid("give \"task\" or \"workflow\", not both".into()));
            }
            (None, None) => {
                return Err(invalid(
                    "the schedule needs \"task\" or \"workflow\": the name of what it runs".into(),
                ));
            }
            (None, Some(workflow)) => check_name("workflow", workflow).map_err(invalid)?,
            (Some(task), None) => check_name("task", task).map_err(invalid)?,
        }
        if let Some(before) = &self.before {
            check_name("before task", before).map_err(invalid)?;
        }
        if let Some(queue) = &self.queue {
            check_name("queue", queue).map_err(invalid)?;
        }
        if self.catchup_window_ms.is_some_and(|w| w > MAX_CATCHUP_MS) {
            return Err(invalid(format!(
                "catchup_window_ms must be at most {MAX_CATCHUP_MS} (a week)"
            )));
        }
        Ok(cron)
    }

    /// The task a slot's job runs.
    /// The name of the task or workflow it runs.
    pub fn target(&self) -> &str {
        self.task
            .as_deref()
            .or(self.workflow.as_deref())
            .unwrap_or_default()
    }

    pub fn catchup_ms(&self) -> u64 {
        self.catchup_window_ms.unwrap_or(DEFAULT_CATCHUP_MS)
    }

    /// The definition as a schedule row keeps it.
    pub fn to_stored(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }

    /// A stored definition, read back.
    pub fn from_stored(s: &str) -> Result<ScheduleSpec, String> {
        serde_json::from_str(s).map_err(|e| format!("unreadable schedule definition: {e}"))
    }

    /// Whether a new definition moves the slots (so the next one is
    /// computed anew rather than kept).
    pub fn same_slots(&self, other: &ScheduleSpec) -> bool {
        self.cron == other.cron && self.timezone == other.timezone
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(v: Value) -> Result<ScheduleSpec, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn a_definition_is_checked_and_kept() {
        let s = spec(json!({"cron": "*/5 * * * *", "task": "report", "overlap": "buffer_one"}))
            .unwrap();
        s.check().unwrap();
        assert_eq!(s.overlap, Overlap::BufferOne);
        assert_eq!(s.catchup_ms(), DEFAULT_CATCHUP_MS);
        let back = ScheduleSpec::from_stored(&s.to_stored()).unwrap();
        assert_eq!(back, s);
        assert!(!s.to_stored().contains("enabled"));
    }

    #[test]
    fn a_bad_definition_names_its_problem() {
        let e = spec(json!({"cron": "* * * *", "task": "t"}))
            .unwrap()
            .check();
        assert!(matches!(e, Err(SpecError::Cron(_))), "{e:?}");
        let e = spec(json!({"cron": "* * * * *", "task": "t", "timezone": "Mars/Base"}))
            .unwrap()
            .check();
        assert!(e.unwrap_err().to_string().contains("Mars/Base"));
        let e = spec(json!({"cron": "* * * * *"})).unwrap().check();
        assert!(e.unwrap_err().to_string().contains("\"task\""));
        let e = spec(
            json!({"cron": "* * * * *", "task": "t", "catchup_window_ms": MAX_CATCHUP_MS + 1}),
        )
        .unwrap()
        .check();
        assert!(e.unwrap_err().to_string().contains("catchup_window_ms"));
        let e = spec(json!({"cron": "* * * * *", "task": "Bad Name"}))
            .unwrap()
            .check();
        assert!(e.unwrap_err().to_string().contains("Bad Name"));
        let e = spec(json!({"cron": "* * * * *", "task": "t", "overlapp": "skip"}));
        assert!(e.unwrap_err().contains("overlapp"));
        let e = spec(json!({"cron": "* * * * *", "task": "t", "overlap": "sometimes"}));
        assert!(e.unwrap_err().contains("sometimes"));
    }
}
