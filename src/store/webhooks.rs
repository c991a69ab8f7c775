//! Webhooks and their deliveries, for both backends: the rows, their
//! records, the statements and the transactions.

use super::db_row::db_row;
use super::dialect::Dialect;
use super::exec::{args, Commit};
use super::records::{
    Delivery, DeliveryStatus, DeliveryTry, NewDelivery, NewWebhook, WebhookRecord,
};
use super::{JobStore, Millis, StoreError, StoreResult, MAX_WEBHOOKS};
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

/// The webhooks with due deliveries by `$1`, at most
/// `$2`: a walk of `webhook_deliveries_pending` from one webhook to the
/// next (a seek each), then a seek for its first due (a scalar subquery:
/// as an `EXISTS`, PostgreSQL's planner hashed every due delivery, 42 ms
/// with 100,000 due).
const DUE_WEBHOOKS: &str = "WITH RECURSIVE w(id) AS ( \
           SELECT (SELECT min(webhook) FROM webhook_deliveries WHERE status = 'pending') \
           UNION ALL \
           SELECT (SELECT min(webhook) FROM webhook_deliveries \
                   WHERE status = 'pending' AND webhook > w.id) \
           FROM w WHERE w.id IS NOT NULL) \
         SELECT id FROM w WHERE id IS NOT NULL AND ( \
           SELECT min(d.next_at) FROM webhook_deliveries d \
           WHERE d.webhook = w.id AND d.status = 'pending') <= $1 \
         LIMIT $2";

/// Holds up to `$4` due deliveries of webhook `$2` (due by `$3`) until
/// `$1`, while the webhook exists, and answers them.
fn take(d: Dialect) -> String {
    let skip = d.skip_locked();
    format!(
        "UPDATE webhook_deliveries SET next_at = $1 WHERE id IN ( \
           SELECT id FROM webhook_deliveries \
           WHERE webhook = $2 AND status = 'pending' AND next_at <= $3 \
           ORDER BY next_at LIMIT $4{skip}) \
         AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = $2) \
         RETURNING {DELIVERY_COLUMNS}"
    )
}

/// A page of a webhook's deliveries, newest first, below id `$3`.
const LIST_DELIVERIES: &str = "SELECT id, webhook, tenant, seq, type, body, status, attempts, \
     created_at, next_at, last_at, last_status, last_error FROM webhook_deliveries \
     WHERE webhook = $1 AND tenant = $2 AND id < $3 ORDER BY id DESC LIMIT $4";

/// Deletes up to `$2` deliveries that ended before `$1` or whose webhook
/// is gone. PostgreSQL names them by `= ANY(ARRAY(…))`, which it plans
/// as seeks where an `IN` may become a join over the table.
fn prune(d: Dialect) -> String {
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

/// Makes each delivery of the JSON array `$1` pending, due at `$2`.
fn insert_deliveries(d: Dialect) -> String {
    let rows = d.json_rows(
        1,
        "d",
        &[
            ("w", "text"),
            ("t", "text"),
            ("s", "int8"),
            ("k", "text"),
            ("b", "text"),
        ],
    );
    format!(
        "INSERT INTO webhook_deliveries (webhook, tenant, seq, type, body, status, attempts, \
         created_at, next_at) SELECT d.w, d.t, d.s, d.k, d.b, 'pending', 0, $2, $2 \
         FROM {rows} ORDER BY d.o"
    )
}

/// Records each try of the JSON array `$1`.
fn record_tries(d: Dialect) -> String {
    let rows = d.json_rows(
        1,
        "v",
        &[
            ("id", "int8"),
            ("s", "text"),
            ("n", "int8"),
            ("a", "int8"),
            ("c", "int4"),
            ("e", "text"),
        ],
    );
    format!(
        "UPDATE webhook_deliveries SET status = v.s, attempts = webhook_deliveries.attempts + 1, \
         next_at = v.n, last_at = v.a, last_status = v.c, last_error = v.e \
         FROM {rows} WHERE webhook_deliveries.id = v.id AND webhook_deliveries.status = 'pending'"
    )
}

impl dyn JobStore {
    pub async fn webhook_insert(&self, w: NewWebhook) -> StoreResult<WebhookRecord> {
        self.write(Commit::PROMPT, move |tx, now| {
            Box::pin(async move {
                // Two inserts for one tenant count one after the other.
                super::tenants::hold(tx, &w.tenant, "webhooks").await?;
                let have: Option<i64> = tx.scalar(COUNT, args![&w.tenant]).await?;
                super::tenants::within("webhooks", Some(MAX_WEBHOOKS), have.unwrap_or(0), 1)?;
                let events = event_types(&w.events);
                let a = args![&w.id, &w.tenant, &w.url, &events, &w.secret, now];
                tx.execute(INSERT, a).await?;
                Ok(w.record(now))
            })
        })
        .await
    }

    /// A tenant's webhooks, oldest first; `None`: every tenant's.
    pub async fn webhook_list(&self, tenant: Option<&str>) -> StoreResult<Vec<WebhookRecord>> {
        let rows: Vec<WebhookRow> = self.read().await?.all(&LIST, args![tenant]).await?;
        rows.into_iter().map(WebhookRecord::try_from).collect()
    }

    /// Deletes a tenant's webhook and its deliveries not yet made;
    /// `false` when it has no such webhook. (Deliveries of a webhook that
    /// is gone are never taken, and the pruner deletes them.)
    pub async fn webhook_delete(&self, tenant: &str, id: &str) -> StoreResult<bool> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.write(Commit::PROMPT, move |tx, _| {
            Box::pin(async move { Ok(tx.execute(DELETE, args![&id, &tenant]).await? == 1) })
        })
        .await
    }

    /// Where the outbox reader `name` stands (`None`: it never read).
    /// Read apart from the writer: the move that follows checks it again.
    pub async fn event_cursor(&self, name: &str) -> StoreResult<Option<i64>> {
        self.read().await?.scalar(CURSOR, args![name]).await
    }

    /// Moves the reader `name` from `from` (`None`: it never read) to
    /// `to` and records the deliveries it made of the rows between, in
    /// one transaction; `false`, writing nothing, when another moved it
    /// first: so each event is made into deliveries once.
    pub async fn delivery_insert(
        &self,
        name: &str,
        from: Option<i64>,
        to: i64,
        deliveries: Vec<NewDelivery>,
    ) -> StoreResult<bool> {
        let name = name.to_owned();
        let rows: Vec<serde_json::Value> = deliveries
            .into_iter()
            .map(|d| {
                serde_json::json!({
                    "w": d.webhook, "t": d.tenant, "s": i64::try_from(d.seq).unwrap_or(i64::MAX),
                    "k": d.kind.as_str(), "b": d.body,
                })
            })
            .collect();
        // Not durable on SQLite: lost to a power cut with the cursor's
        // move, the deliveries are made again from the outbox (each is
        // sent at least once anyway).
        self.write(Commit::LAZY, move |tx, now| {
            Box::pin(async move {
                let moved = match from {
                    None => {
                        let sql = "INSERT INTO event_cursors (name, gseq) VALUES ($1, $2) \
                                   ON CONFLICT (name) DO NOTHING";
                        tx.execute(sql, args![&name, to]).await?
                    }
                    Some(from) => {
                        let sql =
                            "UPDATE event_cursors SET gseq = $3 WHERE name = $1 AND gseq = $2";
                        tx.execute(sql, args![&name, from, to]).await?
                    }
                };
                if moved != 1 {
                    return Ok(false);
                }
                if !rows.is_empty() {
                    let json = serde_json::Value::Array(rows).to_string();
                    let sql = insert_deliveries(tx.dialect());
                    tx.execute(&sql, args![&json, now]).await?;
                }
                Ok(true)
            })
        })
        .await
    }

    /// The webhooks that have pending deliveries due now, up to `limit`,
    /// by id (one index seek each, whatever their backlogs).
    pub async fn delivery_due_webhooks(&self, limit: u32) -> StoreResult<Vec<String>> {
        let now = self.now();
        let mut c = self.read().await?;
        let rows: Vec<(String,)> = c.all(DUE_WEBHOOKS, args![now, limit]).await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// Takes up to `limit` of a webhook's pending deliveries that are due,
    /// oldest due first, and holds each for `hold_ms` (its `next_at`), so
    /// that no other sender takes it meanwhile.
    pub async fn delivery_take(
        &self,
        webhook: &str,
        limit: u32,
        hold_ms: u64,
    ) -> StoreResult<Vec<Delivery>> {
        let webhook = webhook.to_owned();
        // Not durable: a take lost to a crash is taken again.
        self.write(Commit::LAZY, move |tx, now| {
            Box::pin(async move {
                let until = crate::time::after(now, hold_ms);
                let sql = take(tx.dialect());
                let rows: Vec<DeliveryRow> =
                    tx.all(&sql, args![until, &webhook, now, limit]).await?;
                let mut got = rows
                    .into_iter()
                    .map(Delivery::try_from)
                    .collect::<StoreResult<Vec<_>>>()?;
                got.sort_by_key(|d| d.id);
                Ok(got)
            })
        })
        .await
    }

    /// Records a try of each delivery: delivered, failed and due again,
    /// or dead.
    pub async fn delivery_record(&self, tries: Vec<DeliveryTry>) -> StoreResult<()> {
        if tries.is_empty() {
            return Ok(());
        }
        let rows: Vec<serde_json::Value> = tries
            .into_iter()
            .map(|t| {
                let (status, next_at) = DeliveryStatus::after_try(t.error.as_deref(), t.next_at);
                serde_json::json!({
                    "id": t.id, "s": status.as_str(), "n": next_at, "a": t.at,
                    "c": t.status, "e": t.error,
                })
            })
            .collect();
        let json = serde_json::Value::Array(rows).to_string();
        // Not durable: a try lost to a power cut is made again (a delivery
        // is sent at least once).
        self.write(Commit::LAZY, move |tx, _| {
            Box::pin(async move {
                let sql = record_tries(tx.dialect());
                tx.execute(&sql, args![&json]).await?;
                Ok(())
            })
        })
        .await
    }

    /// A webhook's deliveries, newest first, before `before` (an id).
    pub async fn delivery_list(
        &self,
        tenant: &str,
        webhook: &str,
        before: Option<i64>,
        limit: u32,
    ) -> StoreResult<Vec<Delivery>> {
        let a = args![webhook, tenant, before.unwrap_or(i64::MAX), limit];
        let rows: Vec<DeliveryRow> = self.read().await?.all(LIST_DELIVERIES, a).await?;
        rows.into_iter().map(Delivery::try_from).collect()
    }

    /// When the next pending delivery is due, if any.
    pub async fn delivery_next_at(&self) -> StoreResult<Option<Millis>> {
        let next: Option<Option<i64>> = self.read().await?.scalar(NEXT_AT, &[]).await?;
        Ok(next.flatten())
    }

    /// Makes a tenant's delivery due now again, pending, delivered or
    /// dead: another try, and retries while its window lasts. `false`:
    /// the tenant has no such delivery of that webhook.
    pub async fn delivery_redeliver(
        &self,
        tenant: &str,
        webhook: &str,
        id: i64,
    ) -> StoreResult<bool> {
        let (tenant, webhook) = (tenant.to_owned(), webhook.to_owned());
        self.write(Commit::BULK, move |tx, now| {
            Box::pin(async move {
                let a = args![now, id, &webhook, &tenant];
                Ok(tx.execute(REDELIVER, a).await? == 1)
            })
        })
        .await
    }

    /// Deletes up to `limit` delivered or dead deliveries made before
    /// `before`, oldest first; answers how many.
    pub async fn delivery_prune(&self, before: Millis, limit: u32) -> StoreResult<u64> {
        self.write(Commit::LAZY, move |tx, _| {
            Box::pin(async move {
                let sql = prune(tx.dialect());
                tx.execute(&sql, args![before, limit])
                    .await
                    .map_err(StoreError::from)
            })
        })
        .await
    }
}
