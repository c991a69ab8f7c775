//! Secrets on SQLite: puts and deletes on the writer's connection, reads
//! on a reader's. The rows hold sealed bytes only.

use super::{db, wdb};
use crate::store::secret_rows::*;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};
use sqlx::SqliteConnection;

/// Replaces the tenant's secret of that name (its version one more), or
/// makes it at version 1 within `MAX_SECRETS`; `true` when it is new.
pub fn put(conn: &Connection, now: Millis, s: NewSecret) -> StoreResult<(SecretRecord, bool)> {
    let replaced: Option<(i64, i64)> = conn
        .prepare_cached(
            "UPDATE secrets SET version = version + 1, nonce = ?3, ciphertext = ?4, \
             updated_at = ?5 WHERE tenant = ?1 AND name = ?2 RETURNING version, created_at",
        )
        .and_then(|mut st| {
            st.query_row(params![s.tenant, s.name, s.nonce, s.ciphertext, now], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
        })
        .map_err(wdb)?;
    if let Some((v, created_at)) = replaced {
        let record = SecretRecord {
            name: s.name,
            version: version(v),
            created_at,
            updated_at: now,
        };
        return Ok((record, false));
    }
    let have: i64 = conn
        .prepare_cached("SELECT count(*) FROM secrets WHERE tenant = ?1")
        .and_then(|mut st| st.query_row([&s.tenant], |r| r.get(0)))
        .map_err(wdb)?;
    check_room(have)?;
    conn.prepare_cached(
        "INSERT INTO secrets (tenant, name, version, nonce, ciphertext, created_at, updated_at) \
         VALUES (?1, ?2, 1, ?3, ?4, ?5, ?5)",
    )
    .and_then(|mut st| st.execute(params![s.tenant, s.name, s.nonce, s.ciphertext, now]))
    .map_err(wdb)?;
    let record = SecretRecord {
        name: s.name,
        version: 1,
        created_at: now,
        updated_at: now,
    };
    Ok((record, true))
}

pub async fn list(conn: &mut SqliteConnection, tenant: &str) -> StoreResult<Vec<SecretRecord>> {
    sqlx::query_as(&format!(
        "SELECT {RECORD_COLUMNS} FROM secrets WHERE tenant = ?1 ORDER BY name"
    ))
    .bind(tenant)
    .fetch_all(conn)
    .await
    .map_err(db)
}

pub fn delete(conn: &Connection, tenant: &str, name: &str) -> StoreResult<bool> {
    let n = conn
        .prepare_cached("DELETE FROM secrets WHERE tenant = ?1 AND name = ?2")
        .and_then(|mut st| st.execute(params![tenant, name]))
        .map_err(wdb)?;
    Ok(n == 1)
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
