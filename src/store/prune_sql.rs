//! Retention, written once for both backends: ended jobs past their age
//! deleted with their attempts, stages and calls, a short write at a time,
//! and the components no task uses.

use super::exec::{args, Commit, Exec};
use super::records::{PruneParams, Pruned};
use super::{Collected, JobStore, Millis, StoreError, StoreResult};

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

/// Deletes the jobs of the JSON array `ids` that are still prunable (a
/// redrive may have queued one again since it was read), with their
/// attempts, stages and calls; answers how many jobs and attempts (an
/// attempt the job's row kept counts as one).
async fn delete(
    tx: &mut dyn Exec,
    ids: &str,
    completed_before: Option<Millis>,
    failed_before: Option<Millis>,
) -> StoreResult<(u64, u64)> {
    let d = tx.dialect();
    let sql = format!(
        "DELETE FROM jobs WHERE id IN ({}) AND {} RETURNING id, last_attempt IS NOT NULL",
        d.json_texts(1),
        prunable("$2", "$3")
    );
    let gone: Vec<(String, bool)> = tx
        .all(&sql, args![ids, completed_before, failed_before])
        .await?;
    if gone.is_empty() {
        return Ok((0, 0));
    }
    let kept = gone.iter().filter(|(_, k)| *k).count() as u64;
    let ids = json(gone.iter().map(|(id, _)| id.as_str()))?;
    let mut attempts = kept;
    for table in ["attempts", "job_steps", "job_calls"] {
        let sql = format!("DELETE FROM {table} WHERE job_id IN ({})", d.json_texts(1));
        let n = tx.execute(&sql, args![&ids]).await?;
        if table == "attempts" {
            attempts += n;
        }
    }
    Ok((gone.len() as u64, attempts))
}

fn json<'a>(ids: impl Iterator<Item = &'a str>) -> StoreResult<String> {
    serde_json::to_string(&ids.collect::<Vec<_>>()).map_err(|e| StoreError::Internal(e.to_string()))
}

impl dyn JobStore {
    /// One step of a pruning pass: deletes, with their attempts, the ended
    /// jobs among the next `scan` (by id) that ended before their status's
    /// cutoff. Read on a reader's connection, so that the write only
    /// deletes; not durable: a step lost to a crash is made again.
    pub async fn job_prune(&self, p: PruneParams) -> StoreResult<Pruned> {
        let sql = format!(
            "SELECT id, {} FROM jobs WHERE id > $1 AND id < $2 ORDER BY id LIMIT $3",
            prunable("$4", "$5")
        );
        let args = args![
            &p.after_id,
            &p.below_id,
            i64::from(p.scan),
            p.completed_before,
            p.failed_before
        ];
        // NULL where a cutoff is NULL: kept.
        let rows: Vec<(String, Option<bool>)> = self.read().await?.all(&sql, args).await?;
        let last_id = rows.last().map(|r| r.0.clone());
        let ids: Vec<&str> = rows
            .iter()
            .filter(|r| r.1 == Some(true))
            .map(|r| r.0.as_str())
            .collect();
        if ids.is_empty() {
            return Ok(Pruned {
                last_id,
                ..Pruned::default()
            });
        }
        let ids = json(ids.into_iter())?;
        let (c, f) = (p.completed_before, p.failed_before);
        let how = Commit::LAZY;
        let (jobs, attempts) = self
            .write(how, move |tx, _| {
                Box::pin(async move { delete(tx, &ids, c, f).await })
            })
            .await?;
        Ok(Pruned {
            jobs,
            attempts,
            last_id,
        })
    }

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
