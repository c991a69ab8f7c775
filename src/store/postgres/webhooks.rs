//! Webhooks and their deliveries on PostgreSQL.

use super::db::{Db, DB_CLOCK};
use super::pg;
use crate::quota::Exceeded;
use crate::store::records::*;
use crate::store::webhook_rows::*;
use crate::store::{Millis, StoreError, StoreResult, MAX_WEBHOOKS};
use sqlx::PgPool;

/// `DELIVERY_COLUMNS` as `DeliveryRow` reads them.
const DELIVERY_SELECT: &str =
    "id, webhook, tenant, seq, type, body, status, attempts::int8 AS attempts, \
    created_at, next_at, last_at, last_status::int8 AS last_status, last_error";

pub async fn insert(db: &Db, w: NewWebhook) -> StoreResult<WebhookRecord> {
    let (mut tx, now) = db.begin().await?;
    // Two inserts for one tenant count one after the other.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/webhooks', 2))")
        .bind(&w.tenant)
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    let have: i64 = sqlx::query_scalar("SELECT count(*) FROM webhooks WHERE tenant = $1")
        .bind(&w.tenant)
        .fetch_one(&mut *tx)
        .await
        .map_err(pg)?;
    if u64::try_from(have).unwrap_or(0) >= MAX_WEBHOOKS {
        return Err(StoreError::QuotaExceeded(Exceeded {
            quota: "webhooks",
            limit: MAX_WEBHOOKS,
        }));
    }
    sqlx::query(
        "INSERT INTO webhooks (id, tenant, url, events, secret, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&w.id)
    .bind(&w.tenant)
    .bind(&w.url)
    .bind(event_types(&w.events))
    .bind(&w.secret)
    .bind(now)
    .execute(&mut *tx)
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(WebhookRecord {
        id: w.id,
        tenant: w.tenant,
        url: w.url,
        events: w.events,
        secret: w.secret,
        created_at: now,
    })
}

pub async fn list(pool: &PgPool, tenant: Option<&str>) -> StoreResult<Vec<WebhookRecord>> {
    let rows: Vec<WebhookRow> = sqlx::query_as(&format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE $1::text IS NULL OR tenant = $1 \
         ORDER BY created_at, id"
    ))
    .bind(tenant)
    .fetch_all(pool)
    .await
    .map_err(pg)?;
    rows.into_iter().map(WebhookRecord::try_from).collect()
}

pub async fn delete(pool: &PgPool, tenant: &str, id: &str) -> StoreResult<bool> {
    // Deliveries of a webhook that is gone are never taken, and the
    // pruner deletes them.
    let n = sqlx::query("DELETE FROM webhooks WHERE id = $1 AND tenant = $2")
        .bind(id)
        .bind(tenant)
        .execute(pool)
        .await
        .map_err(pg)?
        .rows_affected();
    Ok(n == 1)
}

pub async fn cursor(pool: &PgPool, name: &str) -> StoreResult<Option<i64>> {
    sqlx::query_scalar("SELECT gseq FROM event_cursors WHERE name = $1")
        .bind(name)
        .fetch_optional(pool)
        .await
        .map_err(pg)
}

pub async fn insert_deliveries(
    db: &Db,
    name: &str,
    from: Option<i64>,
    to: i64,
    deliveries: Vec<NewDelivery>,
) -> StoreResult<bool> {
    let (mut tx, now) = db.begin().await?;
    let moved = match from {
        None => sqlx::query(
            "INSERT INTO event_cursors (name, gseq) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(to)
        .execute(&mut *tx)
        .await
        .map_err(pg)?
        .rows_affected(),
        Some(from) => {
            sqlx::query("UPDATE event_cursors SET gseq = $3 WHERE name = $1 AND gseq = $2")
                .bind(name)
                .bind(from)
                .bind(to)
                .execute(&mut *tx)
                .await
                .map_err(pg)?
                .rows_affected()
        }
    };
    if moved != 1 {
        return Ok(false);
    }
    if !deliveries.is_empty() {
        let mut webhooks = Vec::with_capacity(deliveries.len());
        let mut tenants = Vec::with_capacity(deliveries.len());
        let mut seqs = Vec::with_capacity(deliveries.len());
        let mut kinds = Vec::with_capacity(deliveries.len());
        let mut bodies = Vec::with_capacity(deliveries.len());
        for d in deliveries {
            webhooks.push(d.webhook);
            tenants.push(d.tenant);
            seqs.push(i64::try_from(d.seq).unwrap_or(i64::MAX));
            kinds.push(d.kind.as_str());
            bodies.push(d.body);
        }
        sqlx::query(
            "INSERT INTO webhook_deliveries (webhook, tenant, seq, type, body, status, attempts, \
             created_at, next_at) \
             SELECT w, t, s, k, b, 'pending', 0, $6, $6 \
             FROM unnest($1::text[], $2::text[], $3::int8[], $4::text[], $5::text[]) \
               WITH ORDINALITY AS d(w, t, s, k, b, o) ORDER BY o",
        )
        .bind(webhooks)
        .bind(tenants)
        .bind(seqs)
        .bind(kinds)
        .bind(bodies)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(true)
}

/// The webhooks with due deliveries: a walk of `webhook_deliveries_pending`
/// from one webhook to the next (a seek each), then a seek for its first
/// due (a scalar subquery: as an `EXISTS` the planner hashed every due
/// delivery, 42 ms with 100,000 due).
pub async fn due_webhooks(db: &Db, limit: u32) -> StoreResult<Vec<String>> {
    let test_now = db.clock.as_ref().map(|c| c.now());
    sqlx::query_scalar(&format!(
        "WITH RECURSIVE w(id) AS ( \
           SELECT (SELECT min(webhook) FROM webhook_deliveries WHERE status = 'pending') \
           UNION ALL \
           SELECT (SELECT min(webhook) FROM webhook_deliveries \
                   WHERE status = 'pending' AND webhook > w.id) \
           FROM w WHERE w.id IS NOT NULL), \
         clock AS (SELECT coalesce($1::int8, {DB_CLOCK}) AS now) \
         SELECT id FROM w, clock WHERE id IS NOT NULL AND ( \
           SELECT min(d.next_at) FROM webhook_deliveries d \
           WHERE d.webhook = w.id AND d.status = 'pending') <= clock.now \
         LIMIT $2"
    ))
    .bind(test_now)
    .bind(i64::from(limit))
    .fetch_all(&db.pool)
    .await
    .map_err(pg)
}

pub async fn take(db: &Db, webhook: &str, limit: u32, hold_ms: u64) -> StoreResult<Vec<Delivery>> {
    let (mut tx, now) = db.begin().await?;
    let until = crate::time::after(now, hold_ms);
    let rows: Vec<DeliveryRow> = sqlx::query_as(&format!(
        "UPDATE webhook_deliveries SET next_at = $1 WHERE id IN ( \
           SELECT id FROM webhook_deliveries \
           WHERE webhook = $3 AND status = 'pending' AND next_at <= $2 \
           ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED) \
         AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = $3) \
         RETURNING {DELIVERY_SELECT}"
    ))
    .bind(until)
    .bind(now)
    .bind(webhook)
    .bind(i64::from(limit))
    .fetch_all(&mut *tx)
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    let mut got: Vec<Delivery> = rows
        .into_iter()
        .map(Delivery::try_from)
        .collect::<StoreResult<_>>()?;
    got.sort_by_key(|d| d.id);
    Ok(got)
}

pub async fn record(pool: &PgPool, tries: Vec<DeliveryTry>) -> StoreResult<()> {
    if tries.is_empty() {
        return Ok(());
    }
    let mut ids = Vec::with_capacity(tries.len());
    let mut statuses = Vec::with_capacity(tries.len());
    let mut next = Vec::with_capacity(tries.len());
    let mut at = Vec::with_capacity(tries.len());
    let mut codes = Vec::with_capacity(tries.len());
    let mut errors = Vec::with_capacity(tries.len());
    for t in tries {
        let (status, next_at) = after_try(t.error.as_deref(), t.next_at);
        ids.push(t.id);
        statuses.push(status.as_str());
        next.push(next_at);
        at.push(t.at);
        codes.push(t.status.map(i32::from));
        errors.push(t.error);
    }
    sqlx::query(
        "UPDATE webhook_deliveries d SET status = v.s, attempts = d.attempts + 1, \
         next_at = v.n, last_at = v.a, last_status = v.c, last_error = v.e \
         FROM unnest($1::int8[], $2::text[], $3::int8[], $4::int8[], $5::int4[], $6::text[]) \
           AS v(id, s, n, a, c, e) \
         WHERE d.id = v.id AND d.status = 'pending'",
    )
    .bind(ids)
    .bind(statuses)
    .bind(next)
    .bind(at)
    .bind(codes)
    .bind(errors)
    .execute(pool)
    .await
    .map_err(pg)?;
    Ok(())
}

pub async fn list_deliveries(
    pool: &PgPool,
    tenant: &str,
    webhook: &str,
    before: Option<i64>,
    limit: u32,
) -> StoreResult<Vec<Delivery>> {
    let rows: Vec<DeliveryRow> = sqlx::query_as(&format!(
        "SELECT {DELIVERY_SELECT} FROM webhook_deliveries \
         WHERE webhook = $1 AND tenant = $2 AND id < $3 ORDER BY id DESC LIMIT $4"
    ))
    .bind(webhook)
    .bind(tenant)
    .bind(before.unwrap_or(i64::MAX))
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .map_err(pg)?;
    rows.into_iter().map(Delivery::try_from).collect()
}

pub async fn next_at(pool: &PgPool) -> StoreResult<Option<Millis>> {
    sqlx::query_scalar("SELECT min(next_at) FROM webhook_deliveries WHERE status = 'pending'")
        .fetch_one(pool)
        .await
        .map_err(pg)
}

pub async fn prune(pool: &PgPool, before: Millis, limit: u32) -> StoreResult<u64> {
    let n = sqlx::query(
        "DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY( \
           SELECT d.id FROM webhook_deliveries d \
           WHERE (d.status <> 'pending' AND d.created_at < $1) \
              OR NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook) \
           ORDER BY d.id LIMIT $2))",
    )
    .bind(before)
    .bind(i64::from(limit))
    .execute(pool)
    .await
    .map_err(pg)?
    .rows_affected();
    Ok(n)
}
