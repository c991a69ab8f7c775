//! Named leases, for both backends: one statement takes or renews a
//! lease, and only where its holder may, by the store's clock, so that
//! many processes on one database agree on who holds each.

use super::exec::{args, Commit};
use super::{JobStore, Lease, LeaseRow, StoreResult};

/// Takes or renews the lease: inserts it (term 1), or updates it when
/// `holder` holds it or it has expired; the term goes up unless its own
/// holder renews it unexpired. Returns the row when it was taken or
/// renewed, nothing while another holds it. $1 name, $2 holder, $3 now,
/// $4 expires_at.
const TAKE: &str = "INSERT INTO leases (name, holder, term, taken_at, expires_at) \
         VALUES ($1, $2, 1, $3, $4) \
         ON CONFLICT (name) DO UPDATE SET \
           term = CASE WHEN leases.holder = excluded.holder AND leases.expires_at > $3 \
                  THEN leases.term ELSE leases.term + 1 END, \
           taken_at = CASE WHEN leases.holder = excluded.holder AND leases.expires_at > $3 \
                  THEN leases.taken_at ELSE $3 END, \
           holder = excluded.holder, \
           expires_at = excluded.expires_at \
         WHERE leases.holder = excluded.holder OR leases.expires_at <= $3 \
         RETURNING name, holder, term, taken_at, expires_at";

/// Expires the lease now if `holder` holds it: $1 name, $2 holder, $3 now.
const DROP: &str = "UPDATE leases SET expires_at = $3 \
     WHERE name = $1 AND holder = $2 AND expires_at > $3";

const GET: &str = "SELECT name, holder, term, taken_at, expires_at FROM leases WHERE name = $1";

impl dyn JobStore {
    /// Takes or renews the lease `name` for `holder` until `ttl_ms` from
    /// now: answers it when `holder` holds it now (renewed, its term kept)
    /// or took it (free or expired: the term goes up), and `None` while
    /// another holds it unexpired.
    pub async fn lease_take(
        &self,
        name: &str,
        holder: &str,
        ttl_ms: u64,
    ) -> StoreResult<Option<Lease>> {
        let (n, h) = (name.to_owned(), holder.to_owned());
        // Not durable: a renewal lost to a power cut only shortens a lease
        // that this process, SQLite's only one, takes again.
        self.write(Commit::QUICK, move |tx, now| {
            Box::pin(async move {
                let until = crate::time::after(now, ttl_ms);
                let row: Option<LeaseRow> = tx.optional(TAKE, args![&n, &h, now, until]).await?;
                Ok(row.map(Lease::from))
            })
        })
        .await
    }

    /// Lets the lease go at once if `holder` holds it (a process that
    /// stops), so another takes it without waiting for it to expire;
    /// answers whether it did.
    pub async fn lease_drop(&self, name: &str, holder: &str) -> StoreResult<bool> {
        let (n, h) = (name.to_owned(), holder.to_owned());
        self.write(Commit::PROMPT, move |tx, now| {
            Box::pin(async move { Ok(tx.execute(DROP, args![&n, &h, now]).await? == 1) })
        })
        .await
    }

    /// The lease as it stands, expired or not; `None` when never taken.
    pub async fn lease_get(&self, name: &str) -> StoreResult<Option<Lease>> {
        let row: Option<LeaseRow> = self.read().await?.optional(GET, args![name]).await?;
        Ok(row.map(Lease::from))
    }
}
