//! Retention, for both backends: which ended jobs a pruning pass deletes
//! (each backend deletes them its own way), and the components no task
//! uses, collected once for both.

use super::exec::{args, Commit};
use super::{Collected, JobStore, Millis, StoreResult};

/// Deletes the components uploaded before $1 that no task version pins.
pub const UNPINNED_COMPONENTS: &str = "DELETE FROM components WHERE created_at < $1 \
     AND NOT EXISTS (SELECT 1 FROM tasks t \
       WHERE t.tenant = components.tenant AND t.digest = components.digest)";

/// Deletes the blobs no component names any more, answering their digests.
pub const ORPHAN_BLOBS: &str = "DELETE FROM blobs WHERE NOT EXISTS ( \
       SELECT 1 FROM components c WHERE c.digest = blobs.digest) RETURNING digest";

/// Whether the job (its own row) ended before its status's cutoff; `c`
/// and `f` are the parameters of the completed (and cancelled) and the
/// failed cutoffs. A cutoff that is NULL keeps every job of its kind.
pub fn prunable(c: &str, f: &str) -> String {
    format!(
        "((status IN ('completed', 'cancelled') AND finished_at < {c}) \
         OR (status = 'failed' AND finished_at < {f}))"
    )
}

impl dyn JobStore {
    /// Deletes components uploaded before `uploaded_before` that no task
    /// version uses (a job pins a task version's digest, and versions are
    /// never deleted, so no job uses them either), and bytes no component
    /// names any longer; answers how many components, and the digests
    /// whose bytes went (no tenant has them: their compiled artifacts may
    /// go too).
    pub async fn component_collect(&self, uploaded_before: Millis) -> StoreResult<Collected> {
        self.write(Commit::BULK, move |tx, _| {
            Box::pin(async move {
                let n = tx
                    .execute(UNPINNED_COMPONENTS, args![uploaded_before])
                    .await?;
                let mut digests = Vec::new();
                if n > 0 {
                    let rows: Vec<(String,)> = tx.all(ORPHAN_BLOBS, &[]).await?;
                    digests = rows.into_iter().map(|(d,)| d).collect();
                }
                Ok(Collected {
                    components: n,
                    digests,
                })
            })
        })
        .await
    }
}
