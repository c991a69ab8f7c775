//! The SQL of retention shared by both backends: which ended jobs a
//! pruning pass deletes.

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
