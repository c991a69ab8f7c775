//! Secrets on SQLite: puts and deletes on the writer's connection, reads
//! on a reader's. The rows hold sealed bytes only.

use super::{db, shared, wdb};
use crate::store::secret_rows::*;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};
use sqlx::SqliteConnection;

/// Replaces the tenant's secret of that name (its version one more), or
/// makes it at version 1 within `MAX_SECRETS`; `true` when it is new.
pub fn put(conn: &Connection, now: Millis, s: NewSecret) -> StoreResult<(SecretRecord, bool)> {
    let replaced: Option<(i64, i64)> = shared(conn, REPLACE)?
        .query_row(params![s.nonce, s.ciphertext, now, s.tenant, s.name], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map_err(wdb)?;
    if replaced.is_none() {
        check_room(
            shared(conn, COUNT)?
                .query_row([&s.tenant], |r| r.get(0))
                .map_err(wdb)?,
        )?;
        shared(conn, INSERT)?
            .execute(params![s.tenant, s.name, s.nonce, s.ciphertext, now])
            .map_err(wdb)?;
    }
    Ok(put_record(s, now, replaced))
}

pub async fn list(
    conn: &mut SqliteConnection,
    tenant: Option<&str>,
) -> StoreResult<Vec<SecretRecord>> {
    sqlx::query_as(&crate::store::secret_rows::list(tenant.is_some()))
        .bind(tenant)
        .fetch_all(conn)
        .await
        .map_err(db)
}

pub fn delete(conn: &Connection, tenant: &str, name: &str) -> StoreResult<bool> {
    Ok(shared(conn, DELETE)?
        .execute(params![tenant, name])
        .map_err(wdb)?
        == 1)
}

/// The sealed rows of those of `names` the tenant has, by name.
pub async fn get_many(
    conn: &mut SqliteConnection,
    tenant: &str,
    names: &[String],
) -> StoreResult<Vec<SealedSecret>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    // The names as one JSON array: one statement however many there are.
    let names = serde_json::to_string(names)
        .map_err(|e| crate::store::StoreError::Internal(format!("secret names as JSON: {e}")))?;
    sqlx::query_as(&format!(
        "SELECT {SEALED_COLUMNS} FROM secrets WHERE tenant = ?1 \
         AND name IN (SELECT value FROM json_each(?2)) ORDER BY name"
    ))
    .bind(tenant)
    .bind(names)
    .fetch_all(conn)
    .await
    .map_err(db)
}
