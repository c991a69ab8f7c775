//! Webhooks and their deliveries on PostgreSQL.

use super::db::{Db, DB_CLOCK};
use super::pg;
use crate::store::dialect::Dialect::Postgres;
use crate::store::records::*;
use crate::store::webhook_rows::{self as sql, *};
use crate::store::{Millis, StoreResult};
use sqlx::PgPool;
use std::sync::LazyLock;

static DUE_WEBHOOKS: LazyLock<String> =
    LazyLock::new(|| sql::due_webhooks(&format!("(SELECT coalesce($1::int8, {DB_CLOCK}))")));
static TAKE: LazyLock<String> = LazyLock::new(|| sql::take(Postgres));
static LIST_DELIVERIES: LazyLock<String> = LazyLock::new(|| sql::list_deliveries(Postgres));
static PRUNE: LazyLock<String> = LazyLock::new(|| sql::prune(Postgres));

pub async fn insert(db: &Db, w: NewWebhook) -> StoreResult<WebhookRecord> {
    let (mut tx, now) = db.begin().await?;
    // Two inserts for one tenant count one after the other.
    super::tenants::hold(&mut tx, &w.tenant, "webhooks").await?;
    let have: i64 = sqlx::query_scalar(COUNT)
        .bind(&w.tenant)
        .fetch_one(&mut *tx)
        .await
        .map_err(pg)?;
    check_room(have)?;
    sqlx::query(INSERT)
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
    Ok(w.record(now))
}

pub async fn list(pool: &PgPool, tenant: Option<&str>) -> StoreResult<Vec<WebhookRecord>> {
    let rows: Vec<WebhookRow> = sqlx::query_as(LIST.as_str())
        .bind(tenant)
        .fetch_all(pool)
        .await
        .map_err(pg)?;
    rows.into_iter().map(WebhookRecord::try_from).collect()
}

pub async fn delete(pool: &PgPool, tenant: &str, id: &str) -> StoreResult<bool> {
    // Deliveries of a webhook that is gone are never taken, and the
    // pruner deletes them.
    let n = sqlx::query(DELETE)
        .bind(id)
        .bind(tenant)
        .execute(pool)
        .await
        .map_err(pg)?
        .rows_affected();
    Ok(n == 1)
}

pub async fn cursor(pool: &PgPool, name: &str) -> StoreResult<Option<i64>> {
    sqlx::query_scalar(CURSOR)
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

pub async fn due_webhooks(db: &Db, limit: u32) -> StoreResult<Vec<String>> {
    let test_now = db.clock.as_ref().map(|c| c.now());
    sqlx::query_scalar(DUE_WEBHOOKS.as_str())
        .bind(test_now)
        .bind(i64::from(limit))
        .fetch_all(&db.pool)
        .await
        .map_err(pg)
}

pub async fn take(db: &Db, webhook: &str, limit: u32, hold_ms: u64) -> StoreResult<Vec<Delivery>> {
    let (mut tx, now) = db.begin().await?;
    let until = crate::time::after(now, hold_ms);
    let rows: Vec<DeliveryRow> = sqlx::query_as(TAKE.as_str())
        .bind(until)
        .bind(webhook)
        .bind(now)
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

pub async fn redeliver(
    pool: &PgPool,
    tenant: &str,
    webhook: &str,
    id: i64,
    now: Millis,
) -> StoreResult<bool> {
    let done = sqlx::query(REDELIVER)
        .bind(now)
        .bind(id)
        .bind(webhook)
        .bind(tenant)
        .execute(pool)
        .await
        .map_err(pg)?;
    Ok(done.rows_affected() == 1)
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
    let rows: Vec<DeliveryRow> = sqlx::query_as(LIST_DELIVERIES.as_str())
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
    sqlx::query_scalar(NEXT_AT)
        .fetch_one(pool)
        .await
        .map_err(pg)
}

pub async fn prune(pool: &PgPool, before: Millis, limit: u32) -> StoreResult<u64> {
    let n = sqlx::query(PRUNE.as_str())
        .bind(before)
        .bind(i64::from(limit))
        .execute(pool)
        .await
        .map_err(pg)?
        .rows_affected();
    Ok(n)
}
