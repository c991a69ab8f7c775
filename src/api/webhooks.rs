//! Webhooks: make (`POST /v1/webhooks`), list, delete, and see a
//! webhook's deliveries (`GET /v1/webhooks/{id}/deliveries`). All need
//! the scope `webhooks:write`: a webhook sends the tenant's events out.

use super::auth::{Across, Principal};
use super::body::{JsonBody, QueryParams};
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::events::EventType;
use crate::store::clock::rfc3339;
use crate::store::DeliveryStatus;
use crate::store::{Delivery, NewWebhook, Scope, WebhookRecord};
use crate::webhooks::{guard, sign};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use utoipa::{IntoParams, ToSchema};

const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 500;
/// Longest the check of a webhook's host waits for its name to resolve.
const RESOLVE_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWebhookBody {
    /// An `http` or `https` URL that resolves to a public address (unless
    /// the server allows private ones).
    #[schema(example = "https://example.com/taskbox")]
    url: String,
    /// Event types (`job.completed`, …), or `["*"]` for all of them.
    #[schema(example = json!(["job.completed", "job.failed"]))]
    events: Vec<String>,
    /// The key deliveries are signed with (16 to 256 characters); made for
    /// the webhook when left out, and shown once.
    secret: Option<String>,
}

/// A webhook. Its secret is shown once, when it is made.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Webhook {
    pub id: String,
    pub tenant: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// The tenant's webhooks.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct WebhookList {
    pub webhooks: Vec<Webhook>,
}

/// One event's delivery to a webhook.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct DeliveryView {
    pub id: i64,
    /// The event's sequence number.
    pub seq: u64,
    #[serde(rename = "type")]
    pub kind: EventType,
    pub status: DeliveryStatus,
    pub attempts: u32,
    pub created_at: String,
    /// When it is tried next, while pending.
    pub next_at: Option<String>,
    pub last_at: Option<String>,
    /// The HTTP status of the last try, if it got one.
    pub last_status: Option<u16>,
    pub last_error: Option<String>,
}

/// A page of a webhook's deliveries, newest first.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct DeliveryPage {
    pub deliveries: Vec<DeliveryView>,
    /// Where the next page starts; null on the last.
    pub next_cursor: Option<i64>,
}

fn view(w: &WebhookRecord) -> Webhook {
    Webhook {
        id: w.id.clone(),
        tenant: w.tenant.clone(),
        url: w.url.clone(),
        events: w.events.clone(),
        created_at: rfc3339(w.created_at),
        secret: None,
    }
}

fn delivery_view(d: &Delivery) -> DeliveryView {
    DeliveryView {
        id: d.id,
        seq: d.seq,
        kind: d.kind,
        status: d.status,
        attempts: d.attempts,
        created_at: rfc3339(d.created_at),
        next_at: d
            .next_at
            .filter(|_| d.status == DeliveryStatus::Pending)
            .map(rfc3339),
        last_at: d.last_at.map(rfc3339),
        last_status: d.last_status,
        last_error: d.last_error.clone(),
    }
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

/// Makes a webhook: each of the tenant's events of the given types is
/// POSTed to it, signed. Needs `webhooks:write`.
#[utoipa::path(post, path = "/v1/webhooks", tag = "events", request_body = NewWebhookBody,
    responses((status = 201, description = "Made; the answer shows its secret, once", body = Webhook, links(
            ("deliveries" = (operation_id = "events_deliveries", parameters(("id" = "$response.body#/id")))),
            ("delete" = (operation_id = "events_delete", parameters(("id" = "$response.body#/id"))))
        )), Errors))]
pub async fn create(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    body: JsonBody<NewWebhookBody>,
) -> Result<(StatusCode, Json<Webhook>), ApiError> {
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
    v.secret = Some(w.secret);
    Ok((StatusCode::CREATED, Json(v)))
}

/// The tenant's webhooks. Needs `webhooks:write`.
#[utoipa::path(get, path = "/v1/webhooks", tag = "events", params(Across),
    responses((status = 200, body = WebhookList), Errors))]
pub async fn list(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(q): QueryParams<Across>,
) -> Result<Json<WebhookList>, ApiError> {
    who.require(Scope::WebhooksWrite)?;
    let hooks = state
        .store
        .webhook_list(who.listing(q.all_tenants)?)
        .await?;
    Ok(Json(WebhookList {
        webhooks: hooks.iter().map(view).collect(),
    }))
}

/// Deletes a webhook; its pending deliveries are dropped. Needs
/// `webhooks:write`.
#[utoipa::path(delete, path = "/v1/webhooks/{id}", tag = "events",
    params(("id" = String, Path, description = "The webhook's id")),
    responses((status = 204, description = "Deleted"), Errors))]
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

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Most deliveries in the page (1 to 500; default 50).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
    /// The `next_cursor` of the page before.
    cursor: Option<i64>,
}

/// A webhook's deliveries, newest first, with each one's tries. Needs
/// `webhooks:write`.
#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries", tag = "events",
    params(("id" = String, Path, description = "The webhook's id"), DeliveriesQuery),
    responses((status = 200, body = DeliveryPage), Errors))]
pub async fn deliveries(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path(id): Path<String>,
    QueryParams(q): QueryParams<DeliveriesQuery>,
) -> Result<Json<DeliveryPage>, ApiError> {
    who.require(Scope::WebhooksWrite)?;
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    if !is_own_webhook(&state, &who, &id).await? {
        return Err(ApiError::WebhookNotFound(crate::text::bounded(&id, 64)));
    }
    let page = state
        .store
        .delivery_list(&who.tenant, &id, q.cursor, limit)
        .await?;
    let next = (page.len() == limit as usize)
        .then(|| page.last().map(|d| d.id))
        .flatten();
    Ok(Json(DeliveryPage {
        deliveries: page.iter().map(delivery_view).collect(),
        next_cursor: next,
    }))
}

/// Sends a delivery again: due now, whatever came of it (delivered, dead
/// or still retrying); its tries go on counting, and it is retried while
/// its window lasts. Needs `webhooks:write`.
#[utoipa::path(post, path = "/v1/webhooks/{id}/deliveries/{delivery}/redeliver", tag = "events",
    params(("id" = String, Path, description = "The webhook's id"),
           ("delivery" = i64, Path, description = "The delivery's id")),
    responses((status = 200, description = "The delivery, due now", body = DeliveryView), Errors))]
pub async fn redeliver(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    Path((id, delivery)): Path<(String, String)>,
) -> Result<Json<DeliveryView>, ApiError> {
    who.require(Scope::WebhooksWrite)?;
    // Read here, not by the extractor: its refusal is not the API's shape.
    let delivery: i64 = delivery.parse().map_err(|_| {
        ApiError::BadRequest(format!(
            "delivery {:?} is not a delivery id (a whole number, as GET /v1/webhooks/{{id}}/deliveries lists them)",
            crate::text::bounded(&delivery, 32)
        ))
    })?;
    let webhook = crate::text::bounded(&id, 64);
    if !state
        .store
        .delivery_redeliver(&who.tenant, &id, delivery)
        .await?
    {
        return Err(if is_own_webhook(&state, &who, &id).await? {
            ApiError::DeliveryNotFound {
                webhook,
                id: delivery,
            }
        } else {
            ApiError::WebhookNotFound(webhook)
        });
    }
    let now = state
        .store
        .delivery_list(&who.tenant, &id, delivery.checked_add(1), 1)
        .await?;
    let d = now
        .first()
        .filter(|d| d.id == delivery)
        .ok_or(ApiError::DeliveryNotFound {
            webhook,
            id: delivery,
        })?;
    Ok(Json(delivery_view(d)))
}

/// Whether `id` is one of the caller's tenant's webhooks.
async fn is_own_webhook(state: &ApiState, who: &Principal, id: &str) -> Result<bool, ApiError> {
    Ok(state
        .store
        .webhook_list(Some(&who.tenant))
        .await?
        .iter()
        .any(|w| w.id == id))
}
