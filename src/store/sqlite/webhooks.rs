//! Webhooks and their deliveries on SQLite: writes on the writer's
//! connection, reads on a reader's.

use super::{db, shared, wdb};
use crate::store::dialect::Dialect::Sqlite;
use crate::store::records::*;
use crate::store::webhook_rows::{self as sql, *};
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};
use sqlx::SqliteConnection;
use std::sync::LazyLock;

pub fn insert(conn: &Connection, now: Millis, w: NewWebhook) -> StoreResult<WebhookRecord> {
    check_room(
        shared(conn, COUNT)?
            .query_row([&w.tenant], |r| r.get(0))
            .map_err(wdb)?,
    )?;
    let events = event_types(&w.events);
    shared(conn, INSERT)?
        .execute(params![w.id, w.tenant, w.url, events, w.secret, now])
        .map_err(wdb)?;
    Ok(w.record(now))
}

pub async fn list(
    conn: &mut SqliteConnection,
    tenant: Option<&str>,
) -> StoreResult<Vec<WebhookRecord>> {
    let rows: Vec<WebhookRow> = sqlx::query_as(LIST.as_str())
        .bind(tenant)
        .fetch_all(conn)
        .await
        .map_err(db)?;
    rows.into_iter().map(WebhookRecord::try_from).collect()
}

/// Deliveries of a webhook that is gone are never taken, and the pruner
/// deletes them.
pub fn delete(conn: &Connection, tenant: &str, id: &str) -> StoreResult<bool> {
    Ok(shared(conn, DELETE)?
        .execute(params![id, tenant])
        .map_err(wdb)?
        == 1)
}

pub fn cursor(conn: &Connection, name: &str) -> StoreResult<Option<i64>> {
    shared(conn, CURSOR)?
        .query_row([name], |r| r.get(0))
        .optional()
        .map_err(wdb)
}

pub async fn read_cursor(conn: &mut SqliteConnection, name: &str) -> StoreResult<Option<i64>> {
    sqlx::query_scalar(CURSOR)
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

static DUE_WEBHOOKS: LazyLock<String> = LazyLock::new(|| sql::due_webhooks("$1"));
static TAKE: LazyLock<String> = LazyLock::new(|| sql::take(Sqlite));
static LIST_DELIVERIES: LazyLock<String> = LazyLock::new(|| sql::list_deliveries(Sqlite));
static PRUNE: LazyLock<String> = LazyLock::new(|| sql::prune(Sqlite));

pub async fn due_webhooks(
    conn: &mut SqliteConnection,
    now: Millis,
    limit: u32,
) -> StoreResult<Vec<String>> {
    sqlx::query_scalar(DUE_WEBHOOKS.as_str())
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
    let mut stmt = shared(conn, &TAKE)?;
    let mut got = read_deliveries(&mut stmt, params![until, webhook, now, limit])?;
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

pub fn redeliver(
    conn: &Connection,
    tenant: &str,
    webhook: &str,
    id: i64,
    now: Millis,
) -> StoreResult<bool> {
    let n = conn
        .execute(REDELIVER, params![now, id, webhook, tenant])
        .map_err(wdb)?;
    Ok(n == 1)
}

pub async fn list_deliveries(
    conn: &mut SqliteConnection,
    tenant: &str,
    webhook: &str,
    before: Option<i64>,
    limit: u32,
) -> StoreResult<Vec<Delivery>> {
    let rows: Vec<DeliveryRow> = sqlx::query_as(LIST_DELIVERIES.as_str())
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
    sqlx::query_scalar(NEXT_AT)
        .fetch_one(conn)
        .await
        .map_err(db)
}

pub fn prune(conn: &Connection, before: Millis, limit: u32) -> StoreResult<u64> {
    let n = shared(conn, &PRUNE)?
        .execute(params![before, limit])
        .map_err(wdb)?;
    Ok(n as u64)
}
