//! What the store's answers count for in the process's figures: the one
//! place that reads store types for `metrics`, so that `metrics` takes
//! plain numbers and sits below the store that calls it.

use crate::metrics::{self, AttemptFigures};
use crate::store::{Action, Finalize, Finalized, Inserted};
use std::time::Duration;

/// Counts the jobs an insert created (not those it answered with a job
/// that was there already).
pub fn inserted<'a>(inserted: impl IntoIterator<Item = &'a Inserted>) {
    let m = metrics::get();
    for i in inserted {
        if let Inserted::Created(j) = i {
            m.enqueued(&j.tenant, &j.queue, 1);
        }
    }
}

/// An attempt's end as it was written (`result`): the attempt it records,
/// and the job's end if it ended.
pub fn finalized(f: &Finalize, result: &Finalized) {
    let Finalized::Done(status) = result else {
        return;
    };
    let m = metrics::get();
    let queue = f.names.queue.as_str();
    if let Some(a) = &f.attempt {
        let outcome = match &a.error {
            Some(e) if a.outcome != "completed" => e.kind.as_str(),
            _ => a.outcome.as_str(),
        };
        let network = a.network.unwrap_or_default();
        m.attempt(AttemptFigures {
            tenant: &f.tenant,
            queue,
            outcome,
            ran_for: Duration::from_millis(
                u64::try_from(a.finished_at - a.started_at).unwrap_or(0),
            ),
            fuel: a.fuel_used,
            peak_memory: (a.peak_memory_bytes > 0).then_some(a.peak_memory_bytes),
            requests_sent: network.requests,
            requests_refused: network.refused,
            bytes_sent: network.bytes_sent,
            bytes_received: network.bytes_received,
        });
    }
    if status.is_terminal() {
        let kind = match &f.action {
            Action::Fail { error } => error.kind.as_str(),
            Action::Conclude {
                error: Some(error), ..
            } => error.kind.as_str(),
            _ => "",
        };
        m.ended(&f.tenant, queue, status.as_str(), kind);
    }
}
