//! The one UPDATE that writes an attempt's end, for every SQL backend: a
//! move (`store::transition`) becomes its SET list, guarded by the lease
//! token and the move's from-statuses, and its arguments in order. The
//! text depends only on the move's shape and the dialect, so it is built
//! once per shape and thread, and a backend's statement cache keys on it.

use super::attempt_sql;
pub use super::dialect::Dialect;
use super::transition::{Change, Move};
use super::Millis;
use crate::job::JobStatus;
use crate::store::rows::to_json;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// What every move of a job onto a task other than its own sets (a
/// fallback, a workflow's stage): it will end with that task's output,
/// which is not its pinned digest's on its input, so no later job may be
/// served it from the result cache (`enqueue::cache`).
pub const NO_CACHE_KEY: &str = "cache_key = NULL";

/// One argument of the statement, borrowed where it can be.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg<'a> {
    Text(&'a str),
    Owned(String),
    Int(i64),
    Bool(bool),
    /// A text column that may be NULL.
    OptText(Option<Cow<'a, str>>),
}

/// `status IN (…)` for a move's from-statuses: its guard, on the row
/// the statement names by id.
///
/// On PostgreSQL the column is hidden in an expression (`status || ''`)
/// so that the planner cannot read the guard as "scan the partial index
/// of that status": without fresh statistics (autovacuum off, or a queue
/// that changed since it last ran) it believes such an index holds a few
/// hundred rows, and hashed or bitmap-ANDed every running or queued job
/// into each batch of ends and claims (a claim's UPDATE cost 45 µs a row
/// with 100,000 queued, 9 µs with the guard hidden).
pub fn status_in(d: Dialect, from: &[JobStatus]) -> String {
    let list: Vec<String> = from.iter().map(|s| format!("'{}'", s.as_str())).collect();
    match d {
        Dialect::Sqlite => format!("status IN ({})", list.join(", ")),
        Dialect::Postgres | Dialect::PostgresMany => {
            format!("{} IN ({})", PG_STATUS, list.join(", "))
        }
    }
}

/// The job's status on PostgreSQL in a form no partial index matches
/// (`status_in` says why): for guards on rows found by their id.
pub const PG_STATUS: &str = "(jobs.status || '')";

/// Whether the queue of the job (row `jobs`) is paused.
const QUEUE_PAUSED: &str = "EXISTS (SELECT 1 FROM paused_queues pq \
    WHERE pq.tenant = jobs.tenant AND pq.queue = jobs.queue)";

/// The claim's mark on a job (row `jobs`) that goes back to the queue: a
/// paused queue's jobs are parked, out of the claim's index. On
/// PostgreSQL `paused`; on SQLite `available`, 2 (parked, out of both
/// claim indexes) when its queue is paused, else `due` (1: claimable now,
/// 0: scheduled).
pub fn back_in_queue(d: Dialect, due: &str) -> String {
    match d {
        Dialect::Sqlite => format!("available = CASE WHEN {QUEUE_PAUSED} THEN 2 ELSE {due} END"),
        Dialect::Postgres | Dialect::PostgresMany => format!("paused = {QUEUE_PAUSED}"),
    }
}

/// A key naming the move's shape: what its statement's text depends on.
fn shape(mv: &Move<'_>, d: Dialect) -> u64 {
    let mut k = mv.transition as u64 | u64::from(mv.cancel_wins) << 8 | (mv.to as u64) << 9;
    k |= (d as u64) << 13;
    for (i, c) in mv.changes.iter().enumerate() {
        let kind: u64 = match c {
            Change::Output(_) => 1,
            Change::Error(_) => 2,
            Change::RunAfter(_) => 3,
            Change::WaitingFor(_) => 4,
            Change::SpareAttempt => 5,
            Change::UncountAttempt => 6,
            Change::Snoozed => 7,
            Change::Fallback { .. } => 8,
            Change::ClearCancel => 9,
            Change::Attempt { .. } => 10,
        };
        k |= kind << (16 + 4 * i);
    }
    k
}

thread_local! {
    static TEXTS: RefCell<HashMap<u64, Arc<str>>> = RefCell::new(HashMap::new());
}

/// The statement and its arguments that end the attempt holding `token` on
/// job `id` as `mv` says. Where a pending cancel may turn the move
/// (`cancel_wins`) it answers the job's new status (`RETURNING status`);
/// otherwise the status is `mv.to` when it changed a row. No row: the
/// lease or the status fenced it out. (A completion, the hot path, is
/// cheaper without `RETURNING`.)
pub fn ending<'a>(
    mv: &Move<'a>,
    d: Dialect,
    now: Millis,
    id: &'a str,
    token: &'a str,
) -> (Arc<str>, Vec<Arg<'a>>) {
    let mut args: Vec<Arg<'a>> = Vec::with_capacity(24);
    let mut set: Vec<String> = Vec::new();
    let key = shape(mv, d);
    let cached = TEXTS.with(|t| t.borrow().get(&key).cloned());
    let want_text = cached.is_none();
    // Adds an argument, and answers its parameter's place.
    let mut add = |a: Arg<'a>| {
        args.push(a);
        args.len()
    };
    let to = add(Arg::Text(mv.to.as_str()));
    let at = add(Arg::Int(now));
    let cancelled = d.cancel_requested();
    if want_text {
        let to = d.param(to);
        set.push(if mv.cancel_wins {
            format!("status = CASE WHEN {cancelled} THEN 'cancelled' ELSE {to} END")
        } else {
            format!("status = {to}")
        });
        let at = d.param(at);
        if mv.to.is_terminal() {
            set.push(format!("finished_at = {at}"));
        } else if mv.cancel_wins {
            set.push(format!(
                "finished_at = CASE WHEN {cancelled} THEN {at} ELSE finished_at END"
            ));
        }
    }
    for c in &mv.changes {
        let text = match c {
            Change::Output(o) => {
                let n = add(Arg::Text(o));
                want_text.then(|| format!("output = {}", d.param(n)))
            }
            Change::Error(e) => {
                let n = add(Arg::Owned(to_json(e)));
                want_text.then(|| format!("error = {}", d.param(n)))
            }
            Change::RunAfter(ms) => {
                let n = add(Arg::Int(crate::time::after(now, *ms)));
                want_text.then(|| format!("run_at = {}", d.param(n)))
            }
            Change::WaitingFor(w) => {
                let n = add(Arg::Text(w));
                want_text.then(|| format!("waiting_for = {}", d.param(n)))
            }
            Change::SpareAttempt => want_text.then(|| "max_attempts = max_attempts + 1".into()),
            Change::UncountAttempt => want_text.then(|| "attempts = attempts - 1".into()),
            Change::Snoozed => want_text.then(|| "snoozes = snoozes + 1".into()),
            Change::Fallback {
                task,
                input,
                max_attempts,
            } => {
                let (name, version, digest, input, max) = (
                    add(Arg::Text(&task.name)),
                    add(Arg::Int(i64::from(task.version))),
                    add(Arg::Text(&task.digest)),
                    add(Arg::Text(input)),
                    add(Arg::Int(i64::from(*max_attempts))),
                );
                want_text.then(|| {
                    format!(
                        "fallback_task = {}, fallback_version = {}, fallback_digest = {}, \
                         fallback_input = {}, fallback_depth = fallback_depth + 1, \
                         stage_offset = attempts, max_attempts = attempts + {}, {}",
                        d.param(name),
                        d.int4(version),
                        d.param(digest),
                        d.param(input),
                        d.int4(max),
                        NO_CACHE_KEY,
                    )
                })
            }
            Change::ClearCancel => {
                want_text.then(|| format!("cancel_requested = {}", d.flag(false)))
            }
            Change::Attempt { record: a, log } => {
                let int8 = |v: u64| Arg::Int(i64::try_from(v).unwrap_or(i64::MAX));
                let json = |v: Option<String>| Arg::OptText(v.map(Cow::Owned));
                let n = [
                    add(Arg::Int(i64::from(a.attempt))),
                    add(Arg::Text(&a.task.name)),
                    add(Arg::Int(i64::from(a.task.version))),
                    add(Arg::Text(&a.task.digest)),
                    add(Arg::Int(a.started_at)),
                    add(Arg::Int(a.finished_at)),
                    add(Arg::Text(&a.outcome)),
                    add(json(a.error.as_ref().map(to_json))),
                    add(int8(a.fuel_used)),
                    add(int8(a.peak_memory_bytes)),
                    add(Arg::OptText(log.map(Cow::Borrowed))),
                    add(json(a.network.as_ref().map(to_json))),
                ];
                want_text.then(|| {
                    let set: Vec<String> = attempt_sql::FIELDS
                        .iter()
                        .zip(n)
                        .map(|((col, int4), n)| {
                            let p = if *int4 { d.int4(n) } else { d.param(n) };
                            format!("last_{col} = {p}")
                        })
                        .collect();
                    set.join(", ")
                })
            }
        };
        set.extend(text);
    }
    if mv.to == JobStatus::Queued {
        // SQLite's `available` marks queued rows the claim's index may take
        // at once.
        let due = match d {
            Dialect::Sqlite => d.param(add(Arg::Bool(mv.due_at_once()))),
            Dialect::Postgres | Dialect::PostgresMany => String::new(),
        };
        if want_text {
            set.push(back_in_queue(d, &due));
        }
    }
    let (id, token) = (add(Arg::Text(id)), add(Arg::Text(token)));
    let text = cached.unwrap_or_else(|| {
        let (from, returning) = match d {
            Dialect::PostgresMany => {
                // One array parameter per argument, typed by its kind.
                let arrays: Vec<String> = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| format!("${}::{}[]", i + 1, a.sql_type()))
                    .collect();
                let names: Vec<String> = (1..=args.len()).map(|i| format!("p{i}")).collect();
                (
                    format!(
                        " FROM unnest({}) AS v({})",
                        arrays.join(", "),
                        names.join(", ")
                    ),
                    if mv.cancel_wins {
                        " RETURNING jobs.id, jobs.status"
                    } else {
                        " RETURNING jobs.id"
                    },
                )
            }
            _ => (
                String::new(),
                if mv.cancel_wins {
                    " RETURNING status"
                } else {
                    ""
                },
            ),
        };
        let text: Arc<str> = format!(
            "UPDATE jobs SET {}, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL\
             {from} WHERE jobs.id = {} AND jobs.lease_token = {} AND {}{returning}",
            set.join(", "),
            d.param(id),
            d.param(token),
            status_in(d, mv.from),
        )
        .into();
        TEXTS.with(|t| t.borrow_mut().insert(key, text.clone()));
        text
    });
    (text, args)
}

impl Arg<'_> {
    /// The PostgreSQL type of an array of this kind of argument.
    fn sql_type(&self) -> &'static str {
        match self {
            Arg::Text(_) | Arg::Owned(_) | Arg::OptText(_) => "text",
            Arg::Int(_) => "int8",
            Arg::Bool(_) => "bool",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{ErrorKind, JobError};
    use crate::store::records::Action;

    #[test]
    fn one_text_per_shape_whatever_the_values() {
        let a = Action::Retry {
            delay_ms: 5,
            error: JobError::new(ErrorKind::Timeout, "one"),
        };
        let b = Action::Retry {
            delay_ms: 9,
            error: JobError::new(ErrorKind::Trap, "two"),
        };
        let (ma, mb) = (Move::of_ending(&a), Move::of_ending(&b));
        let (ta, aa) = ending(&ma, Dialect::Sqlite, 100, "j1", "t1");
        let (tb, ab) = ending(&mb, Dialect::Sqlite, 100, "j2", "t2");
        assert!(Arc::ptr_eq(&ta, &tb), "the text is built once");
        assert_ne!(aa, ab);
        let placeholders = ta.matches('?').count();
        assert_eq!(placeholders, aa.len(), "{ta}");
        let (tp, ap) = ending(&ma, Dialect::Postgres, 100, "j1", "t1");
        assert_eq!(tp.matches('$').count(), ap.len(), "{tp}");
        assert!(tp.contains("CASE WHEN jobs.cancel_requested THEN"), "{tp}");
        assert!(!tp.contains("available"), "{tp}");
    }

    #[test]
    fn a_fallback_drops_the_jobs_cache_key() {
        let fallback = Action::Fallback {
            task: crate::store::TaskRef {
                name: "rescue".into(),
                version: 1,
                digest: "sha256:ab".into(),
            },
            input: "{}".into(),
            max_attempts: 1,
            error: JobError::new(ErrorKind::TaskFailed, "no"),
        };
        let mv = Move::of_ending(&fallback);
        for d in [Dialect::Sqlite, Dialect::Postgres] {
            let (text, _) = ending(&mv, d, 7, "j", "t");
            assert!(text.contains(NO_CACHE_KEY), "{text}");
        }
    }

    #[test]
    fn a_completion_is_guarded_by_running_and_sets_its_output() {
        let done = Action::Complete {
            output: "{\"ok\":1}".into(),
        };
        let mv = Move::of_ending(&done);
        let (text, args) = ending(&mv, Dialect::Postgres, 7, "j", "t");
        // Hidden from the planner's partial indexes (`status_in`).
        assert!(
            text.contains("(jobs.status || '') IN ('running')"),
            "{text}"
        );
        assert!(text.contains("finished_at = $2"), "{text}");
        assert!(!text.contains("RETURNING"), "{text}");
        assert!(args.contains(&Arg::Text("{\"ok\":1}")));
        assert_eq!(args.last(), Some(&Arg::Text("t")));
    }
}
