//! Webhooks and their deliveries on SQLite: writes on the writer's
//! connection, reads on a reader's.

use super::{db, wdb};
use crate::quota::Exceeded;
use crate::store::records::*;
use crate::store::webhook_rows::*;
use crate::store::{Millis, StoreError, StoreResult, MAX_WEBHOOKS};
use rusqlite::{params, Connection, OptionalExtension};
use sqlx::SqliteConnection;

pub fn insert(conn: &Connection, now: Millis, w: NewWebhook) -> StoreResult<WebhookRecord> {
    let have: i64 = conn
        .prepare_cached("SELECT count(*) FROM webhooks WHERE tenant = ?1")
        .and_then(|mut s| s.query_row([&w.tenant], |r| r.get(0)))
        .map_err(wdb)?;
    if u64::try_from(have).unwrap_or(0) >= MAX_WEBHOOKS {
        return Err(StoreError::QuotaExceeded(Exceeded {
            quota: "webhooks",
            limit: MAX_WEBHOOKS,
        }));
    }
    conn.prepare_cached(
        "INSERT INTO webhooks (id, tenant, url, events, secret, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .and_then(|mut s| {
        s.execute(params![
            w.id,
            w.tenant,
            w.url,
            event_types(&w.events),
            w.secret,
            now
        ])
    })
    .map_err(wdb)?;
    Ok(WebhookRecord {
        id: w.id,
        tenant: w.tenant,
        url: w.url,
        events: w.events,
        secret: w.secret,
        created_at: now,
    })
}

pub async fn list(
    conn: &mut SqliteConnection,
    tenant: Option<&str>,
) -> StoreResult<Vec<WebhookRecord>> {
    let rows: Vec<WebhookRow> = sqlx::query_as(&format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE ?1 IS NULL OR tenant = ?1 \
         ORDER BY created_at, id"
    ))
    .bind(tenant)
    .fetch_all(conn)
    .await
    .map_err(db)?;
    rows.into_iter().map(WebhookRecord::try_from).collect()
}

/// Most pending deliveries a delete removes at once; the pruner takes the
/// rest (a sender never takes a delivery of a webhook that is gone).
const DELETE_PENDING: i64 = 10_000;

pub fn delete(conn: &Connection, tenant: &str, id: &str) -> StoreResult<bool> {
    let n = conn
        .prepare_cached("DELETE FROM webhooks WHERE id = ?1 AND tenant = ?2")
        .and_then(|mut s| s.execute(params![id, tenant]))
        .map_err(wdb)?;
    if n == 0 {
        return Ok(false);
    }
    conn.prepare_cached(
        "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries \
         WHERE webhook = ?1 ORDER BY id LIMIT ?2)",
    )
    .and_then(|mut s| s.execute(params![id, DELETE_PENDING]))
    .map_err(wdb)?;
    Ok(true)
}

pub fn cursor(conn: &Connection, name: &str) -> StoreResult<Option<i64>> {
    conn.prepare_cached("SELECT gseq FROM event_cursors WHERE name = ?1")
        .and_then(|mut s| s.query_row([name], |r| r.get(0)).optional())
        .map_err(wdb)
}

pub async fn read_cursor(conn: &mut SqliteConnection, name: &str) -> StoreResult<Option<i64>> {
    sqlx::query_scalar("SELECT gseq FROM event_cursors WHERE name = ?1")
        .bind(name)
        .fetch_optional(conn)
        .await
        .map_err(db)
}

pub fn insert_deliveries(
    conn: &Connection,
    now: Millis,
    name: &str,
    from: Option<i64>,
    to: i64,
    deliveries: Vec<NewDelivery>,
) -> StoreResult<bool> {
    if cursor(conn, name)? != from {
        return Ok(false);
    }
    conn.prepare_cached(
        "INSERT INTO event_cursors (name, gseq) VALUES (?1, ?2) \
         ON CONFLICT (name) DO UPDATE SET gseq = excluded.gseq",
    )
    .and_then(|mut s| s.execute(params![name, to]))
    .map_err(wdb)?;
    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO webhook_deliveries (webhook, tenant, seq, type, body, status, attempts, \
             created_at, next_at) VALUES (?1, ?2, ?3, ?4, ?5, 'pending', 0, ?6, ?6)",
        )
        .map_err(wdb)?;
    for d in deliveries {
        stmt.execute(params![
            d.webhook,
            d.tenant,
            i64::try_from(d.seq).unwrap_or(i64::MAX),
            d.kind.as_str(),
            d.body,
            now
        ])
        .map_err(wdb)?;
    }
    Ok(true)
}

/// The rows of a statement that answers `DELIVERY_COLUMNS`.
fn read_deliveries(
    stmt: &mut rusqlite::CachedStatement<'_>,
    params: impl rusqlite::Params,
) -> StoreResult<Vec<Delivery>> {
    let rows: Vec<DeliveryRow> = stmt
        .query_map(params, |r| {
            Ok(DeliveryRow {
                id: r.get(0)?,
                webhook: r.get(1)?,
                tenant: r.get(2)?,
                seq: r.get(3)?,
                kind: r.get(4)?,
                body: r.get(5)?,
                status: r.get(6)?,
                attempts: r.get(7)?,
                created_at: r.get(8)?,
                next_at: r.get(9)?,
                last_at: r.get(10)?,
                last_status: r.get(11)?,
                last_error: r.get(12)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(wdb)?;
    rows.into_iter().map(Delivery::try_from).collect()
}

/// The webhooks with due deliveries: a walk of `webhook_deliveries_pending`
/// from one webhook to the next (a seek each), then a seek for its first due.
const DUE_WEBHOOKS: &str = "WITH RECURSIVE w(id) AS ( \
       SELECT (SELECT min(webhook) FROM webhook_deliveries WHERE status = 'pending') \
       UNION ALL \
       SELECT (SELECT min(webhook) FROM webhook_deliveries \
               WHERE status = 'pending' AND webhook > w.id) \
       FROM w WHERE w.id IS NOT NULL) \
     SELECT id FROM w WHERE id IS NOT NULL AND ( \
       SELECT min(d.next_at) FROM webhook_deliveries d \
       WHERE d.webhook = w.id AND d.status = 'pending') <= ?1 \
     LIMIT ?2";

pub async fn due_webhooks(
    conn: &mut SqliteConnection,
    now: Millis,
    limit: u32,
) -> StoreResult<Vec<String>> {
    sqlx::query_scalar(DUE_WEBHOOKS)
        .bind(now)
        .bind(limit)
        .fetch_all(conn)
        .await
        .map_err(db)
}

pub fn take(
    conn: &Connection,
    now: Millis,
    webhook: &str,
    limit: u32,
    hold_ms: u64,
) -> StoreResult<Vec<Delivery>> {
    let until = crate::time::after(now, hold_ms);
    let mut stmt = conn
        .prepare_cached(&format!(
            "UPDATE webhook_deliveries SET next_at = ?1 WHERE id IN ( \
               SELECT id FROM webhook_deliveries \
               WHERE webhook = ?3 AND status = 'pending' AND next_at <= ?2 \
               ORDER BY next_at LIMIT ?4) \
             AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = ?3) \
             RETURNING {DELIVERY_COLUMNS}"
        ))
        .map_err(wdb)?;
    let mut got = read_deliveries(&mut stmt, params![until, now, webhook, limit])?;
    got.sort_by_key(|d| d.id);
    Ok(got)
}

pub fn record(conn: &Connection, tries: Vec<DeliveryTry>) -> StoreResult<()> {
    let mut stmt = conn
        .prepare_cached(
            "UPDATE webhook_deliveries SET status = ?1, attempts = attempts + 1, next_at = ?2, \
             last_at = ?3, last_status = ?4, last_error = ?5 \
             WHERE id = ?6 AND status = 'pending'",
        )
        .map_err(wdb)?;
    for t in tries {
        let (status, next_at) = after_try(t.error.as_deref(), t.next_at);
        stmt.execute(params![
            status.as_str(),
            next_at,
            t.at,
            t.status,
            t.error,
            t.id
        ])
        .map_err(wdb)?;
    }
    Ok(())
}

pub async fn list_deliveries(
    conn: &mut SqliteConnection,
    tenant: &str,
    webhook: &str,
    before: Option<i64>,
    limit: u32,
) -> StoreResult<Vec<Delivery>> {
    let rows: Vec<DeliveryRow> = sqlx::query_as(&format!(
        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
         WHERE webhook = ?1 AND tenant = ?2 AND id < ?3 ORDER BY id DESC LIMIT ?4"
    ))
    .bind(webhook)
    .bind(tenant)
    .bind(before.unwrap_or(i64::MAX))
    .bind(limit)
    .fetch_all(conn)
    .await
    .map_err(db)?;
    rows.into_iter().map(Delivery::try_from).collect()
}

pub async fn next_at(conn: &mut SqliteConnection) -> StoreResult<Option<Millis>> {
    sqlx::query_scalar("SELECT min(next_at) FROM webhook_deliveries WHERE status = 'pending'")
        .fetch_one(conn)
        .await
        .map_err(db)
}

pub fn prune(conn: &Connection, before: Millis, limit: u32) -> StoreResult<u64> {
    let n = conn
        .prepare_cached(
            "DELETE FROM webhook_deliveries WHERE id IN (SELECT d.id FROM webhook_deliveries d \
             WHERE (d.status != 'pending' AND d.created_at < ?1) \
                OR NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook) \
             ORDER BY d.id LIMIT ?2)",
        )
        .and_then(|mut s| s.execute(params![before, limit]))
        .map_err(wdb)?;
    Ok(n as u64)
}
