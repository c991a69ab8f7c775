//! Webhook and delivery rows as both backends read them, and their
//! conversion into records.

use super::records::{Delivery, DeliveryStatus, WebhookRecord};
use super::{Millis, StoreError, StoreResult};
use crate::events::EventType;

/// The columns of a webhook row, in `WebhookRow`'s order.
pub const WEBHOOK_COLUMNS: &str = "id, tenant, url, events, secret, created_at";

#[derive(sqlx::FromRow)]
pub struct WebhookRow {
    pub id: String,
    pub tenant: String,
    pub url: String,
    pub events: String,
    pub secret: String,
    pub created_at: i64,
}

impl TryFrom<WebhookRow> for WebhookRecord {
    type Error = StoreError;
    fn try_from(r: WebhookRow) -> StoreResult<Self> {
        Ok(WebhookRecord {
            events: serde_json::from_str(&r.events).map_err(|e| {
                StoreError::Internal(format!("unreadable event types of webhook {}: {e}", r.id))
            })?,
            id: r.id,
            tenant: r.tenant,
            url: r.url,
            secret: r.secret,
            created_at: r.created_at,
        })
    }
}

/// The event types as a webhook row keeps them.
pub fn event_types(events: &[EventType]) -> String {
    serde_json::to_string(events).unwrap_or_else(|_| "[]".into())
}

/// The columns of a delivery row, in `DeliveryRow`'s order.
pub const DELIVERY_COLUMNS: &str = "id, webhook, tenant, seq, type, body, status, attempts, \
    created_at, next_at, last_at, last_status, last_error";

#[derive(sqlx::FromRow)]
pub struct DeliveryRow {
    pub id: i64,
    pub webhook: String,
    pub tenant: String,
    pub seq: i64,
    #[sqlx(rename = "type")]
    pub kind: String,
    pub body: String,
    pub status: String,
    pub attempts: i64,
    pub created_at: i64,
    pub next_at: Option<i64>,
    pub last_at: Option<i64>,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
}

impl TryFrom<DeliveryRow> for Delivery {
    type Error = StoreError;
    fn try_from(r: DeliveryRow) -> StoreResult<Self> {
        let corrupt =
            |what: &str| StoreError::Internal(format!("unreadable {what} of delivery {}", r.id));
        Ok(Delivery {
            kind: r.kind.parse().map_err(|_| corrupt("event type"))?,
            status: DeliveryStatus::parse(&r.status).ok_or_else(|| corrupt("status"))?,
            id: r.id,
            webhook: r.webhook,
            tenant: r.tenant,
            seq: u64::try_from(r.seq).unwrap_or(0),
            body: r.body,
            attempts: u32::try_from(r.attempts).unwrap_or(0),
            created_at: r.created_at,
            next_at: r.next_at,
            last_at: r.last_at,
            last_status: r.last_status.and_then(|s| u16::try_from(s).ok()),
            last_error: r.last_error,
        })
    }
}

/// Where a try leaves its delivery: status, next_at.
pub fn after_try(error: Option<&str>, next_at: Option<Millis>) -> (DeliveryStatus, Option<Millis>) {
    match (error, next_at) {
        (None, _) => (DeliveryStatus::Delivered, None),
        (Some(_), Some(t)) => (DeliveryStatus::Pending, Some(t)),
        (Some(_), None) => (DeliveryStatus::Dead, None),
    }
}
