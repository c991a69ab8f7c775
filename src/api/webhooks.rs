//! Webhooks: make (`POST /v1/webhooks`), list, delete, and see a
//! webhook's deliveries (`GET /v1/webhooks/{id}/deliveries`). All need
//! the scope `webhooks:write`: a webhook sends the tenant's events out.

use super::auth::Principal;
use super::body::JsonBody;
use super::error::ApiError;
use super::ApiState;
use crate::events::EventType;
use crate::store::clock::rfc3339;
use crate::store::{Delivery, NewWebhook, Scope, WebhookRecord};
use crate::webhooks::{guard, sign};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 500;
/// Longest the check of a webhook's host waits for its name to resolve.
const RESOLVE_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewWebhookBody {
    url: String,
    /// Event types (`job.completed`, …), or `["*"]` for all of them.
    events: Vec<String>,
    /// The key deliveries are signed with; made for the webhook when left
    /// out, and shown once.
    secret: Option<String>,
}

fn view(w: &WebhookRecord) -> Value {
    json!({
        "id": w.id,
        "url": w.url,
        "events": w.events,
        "created_at": rfc3339(w.created_at),
    })
}

fn delivery_view(d: &Delivery) -> Value {
    json!({
        "id": d.id,
        "seq": d.seq,
        "type": d.kind,
        "status": d.status,
        "attempts": d.attempts,
        "created_at": rfc3339(d.created_at),
        "next_at": d.next_at.filter(|_| d.status == crate::store::DeliveryStatus::Pending).map(rfc3339),
        "last_at": d.last_at.map(rfc3339),
        "last_status": d.last_status,
        "last_error": d.last_error,
    })
}

fn event_types(names: &[String]) -> Result<Vec<EventType>, ApiError> {
    if names.iter().any(|n| n == "*") {
        return Ok(EventType::ALL.to_vec());
    }
    if names.is_empty() {
        return Err(ApiError::BadRequest(
            "events must name at least one event type (or \"*\" for all)".into(),
        ));
    }
    let mut out = Vec::new();
    for n in names {
        let t: EventType = n.parse().map_err(ApiError::BadRequest)?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

pub async fn create(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    body: JsonBody<NewWebhookBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require(Scope::WebhooksWrite)?;
    let b = body.value;
    let events = event_types(&b.events)?;
    let allow_private = state.limits.webhook_allow_private;
    let url = guard::check_url(&b.url, allow_private).map_err(ApiError::BadRequest)?;
    match tokio::time::timeout(RESOLVE_WAIT, guard::check_resolves(&url, allow_private)).await {
        Ok(Ok(())) => {}
        Ok(Err(why)) => return Err(ApiError::BadRequest(why)),
        Err(_) => {
            return Err(ApiError::BadRequest(format!(
                "the url's host did not resolve within {} s",
                RESOLVE_WAIT.as_secs()
            )))
        }
    }
    let secret = match b.secret {
        Some(s) => {
            if s.len() < sign::MIN_SECRET_LEN
                || s.len() > sign::MAX_SECRET_LEN
                || s.chars().any(|c| c.is_control())
            {
                return Err(ApiError::BadRequest(format!(
                    "secret must be {} to {} characters of text (or leave it out for one to be made)",
                    sign::MIN_SECRET_LEN,
                    sign::MAX_SECRET_LEN
                )));
            }
            s
        }
        None => sign::new_secret(),
    };
    let w = state
        .store
        .webhook_insert(NewWebhook {
            id: format!("wh_{}", ulid::Ulid::generate()),
            tenant: who.tenant.clone(),
            url: b.url,
            events,
            secret,
        })
        .await?;
    state.hooks.changed();
    let mut v = view(&w);
    // Shown this once: the receiver needs it to check signatures.
    v["secret"] = json!(w.secret);
    Ok((StatusCode::CREATED, Json(v)))
}

pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::WebhooksWrite)?;
    let hooks = state.store.webhook_list(Some(&who.tenant)).await?;
    Ok(Json(
        json!({"webhooks": hooks.iter().map(view).collect::<Vec<_>>()}),
    ))
}

pub async fn delete(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    who.require(Scope::WebhooksWrite)?;
    if !state.store.webhook_delete(&who.tenant, &id).await? {
        return Err(ApiError::WebhookNotFound(crate::text::bounded(&id, 64)));
    }
    state.hooks.changed();
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliveriesQuery {
    limit: Option<u32>,
    /// The `next_cursor` of the page before.
    cursor: Option<i64>,
}

pub async fn deliveries(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    params: Result<Query<DeliveriesQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    who.require(Scope::WebhooksWrite)?;
    let Query(q) =
        params.map_err(|e| ApiError::BadRequest(format!("bad query string: {}", e.body_text())))?;
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    let known = state
        .store
        .webhook_list(Some(&who.tenant))
        .await?
        .iter()
        .any(|w| w.id == id);
    if !known {
        return Err(ApiError::WebhookNotFound(crate::text::bounded(&id, 64)));
    }
    let page = state
        .store
        .delivery_list(&who.tenant, &id, q.cursor, limit)
        .await?;
    let next = (page.len() == limit as usize)
        .then(|| page.last().map(|d| d.id))
        .flatten();
    Ok(Json(json!({
        "deliveries": page.iter().map(delivery_view).collect::<Vec<_>>(),
        "next_cursor": next,
    })))
}
