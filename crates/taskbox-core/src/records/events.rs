//! The outbox's rows and heads, webhooks and their deliveries.

use super::*;

pub use crate::events::EventRow;

/// An event row's columns as both backends read them: gseq, tenant,
/// seq, n, at, body.
pub type EventColumns = (i64, String, i64, i64, i64, String);

impl From<EventColumns> for EventRow {
    fn from((gseq, tenant, seq, n, at, body): EventColumns) -> EventRow {
        EventRow {
            gseq,
            tenant,
            seq: u64::try_from(seq).unwrap_or(0),
            n: u32::try_from(n).unwrap_or(0),
            at,
            body,
        }
    }
}

/// Where the outbox stands: what readers can read now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventHeads {
    /// The last row any reader can read (0: none yet).
    pub gseq: i64,
    /// The tenant's last readable sequence number, when one was asked for.
    pub seq: u64,
    /// The tenant's first sequence number still kept (older ones were
    /// pruned); `seq + 1` when none is.
    pub first: u64,
}

/// A webhook to record: where a tenant's events go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWebhook {
    pub id: String,
    pub tenant: String,
    pub url: String,
    /// The event types it wants (never empty).
    pub events: Vec<crate::events::EventType>,
    /// The key its deliveries are signed with.
    pub secret: String,
}

/// A webhook as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRecord {
    pub id: String,
    pub tenant: String,
    pub url: String,
    pub events: Vec<crate::events::EventType>,
    pub secret: String,
    pub created_at: Millis,
}

/// One event to send to one webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub webhook: String,
    pub tenant: String,
    pub seq: u64,
    pub kind: crate::events::EventType,
    /// The request body, JSON text, sent as it is on every try.
    pub body: String,
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Not answered 2xx yet; tried again at `next_at`.
    Pending,
    Delivered,
    /// Its time ran out without a 2xx.
    Dead,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Dead => "dead",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryStatus> {
        [
            DeliveryStatus::Pending,
            DeliveryStatus::Delivered,
            DeliveryStatus::Dead,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
    }
}

/// A delivery as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: i64,
    pub webhook: String,
    pub tenant: String,
    pub seq: u64,
    pub kind: crate::events::EventType,
    pub body: String,
    pub status: DeliveryStatus,
    /// Tries so far.
    pub attempts: u32,
    pub created_at: Millis,
    /// When it is tried next (pending), or when its sender's hold on it
    /// ends (being sent).
    pub next_at: Option<Millis>,
    pub last_at: Option<Millis>,
    /// The HTTP status of the last try, if it got one.
    pub last_status: Option<u16>,
    /// What went wrong with the last try.
    pub last_error: Option<String>,
}

/// How one try of a delivery went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryTry {
    pub id: i64,
    pub at: Millis,
    /// The HTTP status, if the endpoint answered.
    pub status: Option<u16>,
    /// `None`: answered 2xx, delivered.
    pub error: Option<String>,
    /// When to try again after a failure; `None` after a failure: dead.
    pub next_at: Option<Millis>,
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

/// Where a try leaves its delivery: status, next_at.
impl DeliveryStatus {
    pub fn after_try(
        error: Option<&str>,
        next_at: Option<Millis>,
    ) -> (DeliveryStatus, Option<Millis>) {
        match (error, next_at) {
            (None, _) => (DeliveryStatus::Delivered, None),
            (Some(_), Some(t)) => (DeliveryStatus::Pending, Some(t)),
            (Some(_), None) => (DeliveryStatus::Dead, None),
        }
    }
}
