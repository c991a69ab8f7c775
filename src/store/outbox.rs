//! The outbox's PostgreSQL form; the outbox itself (the events one write
//! reports, and their row's layout) is the core's (`taskbox_core::outbox`).

pub use taskbox_core::outbox::*;

use crate::events::EventType;

/// The events of the rows a PostgreSQL statement wrote (columns `id`,
/// `task`, `queue`; expressions `attempt` and `detail`, a JSON object or
/// NULL) as one event row's body, in the layout `Outbox::push` writes.
pub fn pg_events(kind: EventType, attempt: &str, detail: &str) -> String {
    format!(
        "json_agg(json_build_array('{}', id, task, queue, {attempt}, {detail}) ORDER BY id)::text",
        kind.short()
    )
}
