//! The SQL of retention shared by both backends: which ended jobs a
//! pruning pass deletes.

/// Whether the job (its own row) ended before its status's cutoff; `c`
/// and `f` are the parameters of the completed (and cancelled) and the
/// failed cutoffs. A cutoff that is NULL keeps every job of its kind.
pub fn prunable(c: &str, f: &str) -> String {
    format!(
        "((status IN ('completed', 'cancelled') AND finished_at < {c}) \
         OR (status = 'failed' AND finished_at < {f}))"
    )
}
