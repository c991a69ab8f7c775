//! A runner's heartbeat, written once for both backends: its leases
//! extended and its jobs' progress recorded, each fenced by the lease
//! token, in one statement each for any number of jobs.

use super::exec::{args, Commit, Exec};
use super::records::{HeartbeatParams, HeartbeatReply};
use super::rows::to_json;
use super::{JobStore, Millis, StoreError, StoreResult};
use crate::job::JobStatus;
use std::collections::HashSet;

/// The running jobs of the JSON array ?1 (`{id, token, progress}`)
/// still under their lease token, their rows locked in id order so that
/// two writers of the same rows never wait for each other in a cycle;
/// `more` narrows them further.
fn held(tx: &dyn Exec, more: &str) -> String {
    let d = tx.dialect();
    format!(
        "WITH h AS (SELECT id, token, progress FROM {}), \
         held AS (SELECT j.id, h.progress FROM jobs j JOIN h ON j.id = h.id \
                  AND j.lease_token = h.token WHERE (j.status || '') = '{}'{more} \
                  ORDER BY j.id{}) ",
        d.json_rows(
            1,
            "r",
            &[("id", "text"), ("token", "text"), ("progress", "text")]
        ),
        JobStatus::Running.as_str(),
        d.lock_rows_of("j"),
    )
}

/// Records progress and extends leases; answers the jobs whose lease is
/// gone or whose cancellation was asked for.
pub async fn beat(
    tx: &mut dyn Exec,
    now: Millis,
    p: HeartbeatParams,
) -> StoreResult<HeartbeatReply> {
    if !p.progress.is_empty() {
        let rows: Vec<serde_json::Value> = p
            .progress
            .iter()
            .map(|(id, token, progress)| {
                serde_json::json!({"id": id, "token": token, "progress": to_json(progress)})
            })
            .collect();
        let sql = format!(
            "{}UPDATE jobs SET progress = held.progress FROM held WHERE jobs.id = held.id",
            held(tx, "")
        );
        tx.execute(&sql, args![&json(&rows)?]).await?;
    }
    let mut reply = HeartbeatReply::default();
    if p.leases.is_empty() {
        return Ok(reply);
    }
    let rows: Vec<serde_json::Value> = p
        .leases
        .iter()
        .map(|(id, token)| serde_json::json!({"id": id, "token": token}))
        .collect();
    let sql = format!(
        "{}UPDATE jobs SET lease_expires_at = $3 FROM held WHERE jobs.id = held.id \
         RETURNING jobs.id, jobs.cancel_requested",
        held(tx, " AND j.lease_owner = $2")
    );
    let expires = crate::time::after(now, p.lease_ms);
    let rows: Vec<(String, bool)> = tx
        .all(&sql, args![&json(&rows)?, &p.owner, expires])
        .await?;
    let mut kept = HashSet::with_capacity(rows.len());
    for (id, cancel) in rows {
        if cancel {
            reply.cancel.push(id.clone());
        }
        kept.insert(id);
    }
    reply.lost = p
        .leases
        .iter()
        .filter(|(id, _)| !kept.contains(id))
        .map(|(id, _)| id.clone())
        .collect();
    Ok(reply)
}

fn json(rows: &[serde_json::Value]) -> StoreResult<String> {
    serde_json::to_string(rows).map_err(|e| StoreError::Internal(e.to_string()))
}

impl dyn JobStore {
    /// Extends the leases this owner holds and records progress; answers
    /// the jobs whose lease is gone or whose cancellation was asked for.
    /// Its loss in a power cut costs nothing: the next beat writes it again.
    pub async fn job_heartbeat(&self, p: HeartbeatParams) -> StoreResult<HeartbeatReply> {
        self.write(Commit::LAZY, move |tx, now| Box::pin(beat(tx, now, p)))
            .await
    }
}
