//! Queues: `GET /v1/queues`, each of the tenant's queues with its jobs by
//! status and how long the oldest due job has waited.

use super::auth::Principal;
use super::error::ApiError;
use super::ApiState;
use crate::store::Scope;
use axum::extract::State;
use axum::Json;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::JobsRead)?;
    let now = state.store.now();
    let queues = state.store.queue_list(&who.tenant).await?;
    let queues: Vec<Value> = queues
        .iter()
        .map(|q| {
            let depth: Map<String, Value> = q
                .counts
                .iter()
                .map(|(s, n)| (s.as_str().to_owned(), json!(n)))
                .collect();
            json!({
                "name": q.queue,
                "depth": depth,
                "oldest_queued_age_ms": q.oldest_due_run_at.map(|t| (now - t).max(0)),
            })
        })
        .collect();
    Ok(Json(json!({ "queues": queues })))
}
