//! Webhook and delivery rows as both backends read them, their
//! conversion into records, and the statements both run.

use super::db_row::db_row;
use super::dialect::Dialect;
use super::records::{Delivery, DeliveryStatus, NewWebhook, WebhookRecord};
use super::{Millis, StoreError, StoreResult, MAX_WEBHOOKS};
use crate::events::EventType;
use std::sync::LazyLock;

pub const COUNT: &str = "SELECT count(*) FROM webhooks WHERE tenant = $1";
pub const INSERT: &str = "INSERT INTO webhooks (id, tenant, url, events, secret, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";
/// A tenant's webhooks, or every tenant's when `$1` is NULL.
pub static LIST: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE CAST($1 AS TEXT) IS NULL OR tenant = $1 \
         ORDER BY created_at, id"
    )
});
pub const DELETE: &str = "DELETE FROM webhooks WHERE id = $1 AND tenant = $2";
pub const CURSOR: &str = "SELECT gseq FROM event_cursors WHERE name = $1";
pub const NEXT_AT: &str = "SELECT min(next_at) FROM webhook_deliveries WHERE status = 'pending'";
/// Makes delivery `$2` of webhook `$3` of tenant `$4` due at `$1` again,
/// whatever came of it so far (its tries go on counting).
pub const REDELIVER: &str = "UPDATE webhook_deliveries SET status = 'pending', next_at = $1 \
     WHERE id = $2 AND webhook = $3 AND tenant = $4";

/// Refuses a new webhook past `MAX_WEBHOOKS` (`have`: the tenant's now).
pub fn check_room(have: i64) -> StoreResult<()> {
    super::tenants::within("webhooks", Some(MAX_WEBHOOKS), have, 1)
}

impl NewWebhook {
    /// The webhook as inserted at `now`.
    pub fn record(self, now: Millis) -> WebhookRecord {
        WebhookRecord {
            id: self.id,
            tenant: self.tenant,
            url: self.url,
            events: self.events,
            secret: self.secret,
            created_at: now,
        }
    }
}

/// `DELIVERY_COLUMNS` as `DeliveryRow` reads them (PostgreSQL's integers
/// are narrower than the row's).
pub fn delivery_select(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => DELIVERY_COLUMNS,
        Dialect::Postgres | Dialect::PostgresMany => {
            "id, webhook, tenant, seq, type, body, status, attempts::int8 AS attempts, \
             created_at, next_at, last_at, last_status::int8 AS last_status, last_error"
        }
    }
}

/// The webhooks with due deliveries by `now` (an expression), at most
/// `$2`: a walk of `webhook_deliveries_pending` from one webhook to the
/// next (a seek each), then a seek for its first due (a scalar subquery:
/// as an `EXISTS`, PostgreSQL's planner hashed every due delivery, 42 ms
/// with 100,000 due).
pub fn due_webhooks(now: &str) -> String {
    format!(
        "WITH RECURSIVE w(id) AS ( \
           SELECT (SELECT min(webhook) FROM webhook_deliveries WHERE status = 'pending') \
           UNION ALL \
           SELECT (SELECT min(webhook) FROM webhook_deliveries \
                   WHERE status = 'pending' AND webhook > w.id) \
           FROM w WHERE w.id IS NOT NULL) \
         SELECT id FROM w WHERE id IS NOT NULL AND ( \
           SELECT min(d.next_at) FROM webhook_deliveries d \
           WHERE d.webhook = w.id AND d.status = 'pending') <= {now} \
         LIMIT $2"
    )
}

/// Holds up to `$4` due deliveries of webhook `$2` (due by `$3`) until
/// `$1`, while the webhook exists, and answers them.
pub fn take(d: Dialect) -> String {
    let skip = match d {
        Dialect::Sqlite => "",
        Dialect::Postgres | Dialect::PostgresMany => " FOR UPDATE SKIP LOCKED",
    };
    format!(
        "UPDATE webhook_deliveries SET next_at = $1 WHERE id IN ( \
           SELECT id FROM webhook_deliveries \
           WHERE webhook = $2 AND status = 'pending' AND next_at <= $3 \
           ORDER BY next_at LIMIT $4{skip}) \
         AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = $2) \
         RETURNING {}",
        delivery_select(d)
    )
}

/// A page of a webhook's deliveries, newest first, below id `$3`.
pub fn list_deliveries(d: Dialect) -> String {
    format!(
        "SELECT {} FROM webhook_deliveries \
         WHERE webhook = $1 AND tenant = $2 AND id < $3 ORDER BY id DESC LIMIT $4",
        delivery_select(d)
    )
}

/// Deletes up to `$2` deliveries that ended before `$1` or whose webhook
/// is gone. PostgreSQL names them by `= ANY(ARRAY(…))`, which it plans
/// as seeks where an `IN` may become a join over the table.
pub fn prune(d: Dialect) -> String {
    let (open, close) = match d {
        Dialect::Sqlite => ("IN (", ")"),
        Dialect::Postgres | Dialect::PostgresMany => ("= ANY(ARRAY(", "))"),
    };
    format!(
        "DELETE FROM webhook_deliveries WHERE id {open}SELECT d.id FROM webhook_deliveries d \
         WHERE (d.status <> 'pending' AND d.created_at < $1) \
            OR NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook) \
         ORDER BY d.id LIMIT $2{close}"
    )
}

/// The columns of a webhook row, in `WebhookRow`'s order.
pub const WEBHOOK_COLUMNS: &str = "id, tenant, url, events, secret, created_at";

db_row! {
    pub struct WebhookRow {
        pub id: String,
        pub tenant: String,
        pub url: String,
        pub events: String,
        pub secret: String,
        pub created_at: i64,
    }
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

db_row! {
    pub struct DeliveryRow {
        pub id: i64,
        pub webhook: String,
        pub tenant: String,
        pub seq: i64,
        pub kind: String = "type",
        pub body: String,
        pub status: String,
        pub attempts: i64,
        pub created_at: i64,
        pub next_at: Option<i64>,
        pub last_at: Option<i64>,
        pub last_status: Option<i64>,
        pub last_error: Option<String>,
    }
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
