//! What an attempt's end writes besides its tallies, decided once for both
//! backends: the job's move, and its attempt, either kept on the job's row
//! by the move (`Move::keeps_attempt`) or as a row of `attempts`.

use super::records::{AttemptRecord, Finalize};
use super::rows::log_json;
use super::transition::Move;
use super::StoreResult;
use crate::attempt_log::AttemptLog;
use std::borrow::Cow;

/// An attempt's end, ready to bind: its attempt and its log's JSON.
pub struct Ending<'a> {
    f: &'a Finalize,
    attempt: Option<Cow<'a, AttemptRecord>>,
    log: Option<String>,
}

impl<'a> Ending<'a> {
    /// The end of `f`, its log kept only `with_log` (an end written again
    /// after its log could not be stored says so instead). An error when
    /// the log is too large to keep.
    pub fn of(f: &'a Finalize, with_log: bool) -> StoreResult<Ending<'a>> {
        let attempt = f.attempt.as_ref().map(|a| {
            if with_log {
                Cow::Borrowed(a)
            } else {
                Cow::Owned(AttemptRecord {
                    log: Some(AttemptLog::unstorable()),
                    ..a.clone()
                })
            }
        });
        let log = match &attempt {
            Some(a) => log_json(&f.id, a)?,
            None => None,
        };
        Ok(Ending { f, attempt, log })
    }

    /// The job's move, keeping the attempt on its row where it may.
    pub fn job_move(&self) -> Move<'_> {
        let mv = Move::of_ending(&self.f.action);
        match &self.attempt {
            Some(a) => mv.with_attempt(a, self.log.as_deref()),
            None => mv,
        }
    }

    /// The row of `attempts` the end writes, with its log's JSON: none
    /// when `mv` (this end's move) keeps the attempt on the job's row.
    pub fn attempt_row(&self, mv: &Move<'_>) -> Option<(&AttemptRecord, Option<&str>)> {
        match &self.attempt {
            Some(a) if !mv.keeps_attempt() => Some((a, self.log.as_deref())),
            _ => None,
        }
    }
}
