//! The outbox's reads and pruning, for both backends: only rows that are
//! numbered and durable (`JobStore::readable_events`), so that no reader
//! sees an event a crash could take back. How rows are numbered is each
//! backend's own (SQLite's writer numbers them as it writes; PostgreSQL's
//! sequencer after they commit).

use super::dialect::Dialect;
use super::exec::{args, Commit};
use super::records::{EventColumns, EventRow};
use super::{JobStore, Millis, StoreResult};

const READ: &str = "SELECT gseq, tenant, seq, n, at, body FROM events \
     WHERE gseq > $1 AND gseq <= $2 ORDER BY gseq LIMIT $3";

const READ_TENANT: &str = "SELECT gseq, tenant, seq, n, at, body FROM events \
     WHERE tenant = $1 AND seq > $2 AND gseq <= $3 ORDER BY seq LIMIT $4";

/// Deletes up to `$2` of the oldest numbered rows, those recorded before
/// `$1`. PostgreSQL names them by `= ANY(ARRAY(…))`, which it plans as
/// seeks.
fn prune(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => {
            "DELETE FROM events WHERE gseq IN \
             (SELECT gseq FROM events ORDER BY gseq LIMIT $2) AND at < $1"
        }
        Dialect::Postgres | Dialect::PostgresMany => {
            "DELETE FROM events WHERE id = ANY(ARRAY( \
               SELECT id FROM events WHERE gseq IS NOT NULL ORDER BY gseq LIMIT $2)) AND at < $1"
        }
    }
}

fn rows(read: Vec<EventColumns>) -> Vec<EventRow> {
    read.into_iter().map(EventRow::from).collect()
}

impl dyn JobStore {
    /// Event rows after `after_gseq`, every tenant's, in order, up to
    /// `limit`: only rows that are in order and durable (a reader never
    /// sees an event that a crash could take back).
    pub async fn event_read(&self, after_gseq: i64, limit: u32) -> StoreResult<Vec<EventRow>> {
        let a = args![after_gseq, self.readable_events(), limit];
        Ok(rows(self.read().await?.all(READ, a).await?))
    }

    /// A tenant's event rows holding events after its sequence number
    /// `after` (the first may hold some up to it), in order, up to `limit`;
    /// readable ones only, as `event_read`.
    pub async fn event_read_tenant(
        &self,
        tenant: &str,
        after: u64,
        limit: u32,
    ) -> StoreResult<Vec<EventRow>> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let a = args![tenant, after, self.readable_events(), limit];
        Ok(rows(self.read().await?.all(READ_TENANT, a).await?))
    }

    /// Deletes up to `limit` event rows recorded before `before`, oldest
    /// first; answers how many.
    pub async fn event_prune(&self, before: Millis, limit: u32) -> StoreResult<u64> {
        // Not durable: a prune lost to a crash is made again.
        self.write(Commit::LAZY, move |tx, _| {
            Box::pin(async move {
                Ok(tx
                    .execute(prune(tx.dialect()), args![before, limit])
                    .await?)
            })
        })
        .await
    }
}
