//! Tokens on SQLite: inserts, revokes and uses recorded on the writer's
//! connection, reads on a reader's. Rows hold a token's hash, never its
//! text.

use super::{constraint, db, wdb, Constraint};
use crate::store::token_rows::*;
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};
use sqlx::SqliteConnection;

pub fn insert(conn: &Connection, now: Millis, t: NewToken) -> StoreResult<()> {
    let admin = t.tenant.is_none();
    if admin {
        conn.execute("DELETE FROM tokens WHERE admin = 1", [])
            .map_err(wdb)?;
    }
    conn.prepare_cached(
        "INSERT OR REPLACE INTO tokens (hash, id, tenant, scopes, admin, created_at, expires_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut s| {
        s.execute(params![
            t.hash,
            t.id,
            t.tenant,
            scopes_text(&t.scopes),
            admin,
            now,
            t.expires_at
        ])
    })
    .map_err(|e| match constraint(&e) {
        Some(Constraint::ForeignKey) => StoreError::NotFound,
        _ => wdb(e),
    })?;
    Ok(())
}

pub async fn get(conn: &mut SqliteConnection, hash: &str) -> StoreResult<Option<TokenRecord>> {
    let row: Option<RecordRow> = sqlx::query_as(&format!(
        "SELECT {RECORD_COLUMNS} FROM tokens WHERE hash = ?1"
    ))
    .bind(hash)
    .fetch_optional(conn)
    .await
    .map_err(db)?;
    Ok(row.map(record))
}

pub async fn list(conn: &mut SqliteConnection) -> StoreResult<Vec<TokenInfo>> {
    let rows: Vec<InfoRow> = sqlx::query_as(&format!(
        "SELECT {INFO_COLUMNS} FROM tokens ORDER BY admin DESC, tenant, created_at, id"
    ))
    .fetch_all(conn)
    .await
    .map_err(db)?;
    Ok(rows.into_iter().map(info).collect())
}

pub fn revoke(conn: &Connection, id: &str) -> StoreResult<Revocation> {
    let gone = conn
        .prepare_cached("DELETE FROM tokens WHERE id = ?1 AND admin = 0")
        .and_then(|mut s| s.execute([id]))
        .map_err(wdb)?;
    if gone > 0 {
        return Ok(Revocation::of(true, None));
    }
    let admin: Option<bool> = conn
        .prepare_cached("SELECT admin FROM tokens WHERE id = ?1")
        .and_then(|mut s| s.query_row([id], |r| r.get(0)).optional())
        .map_err(wdb)?;
    Ok(Revocation::of(false, admin))
}

pub fn touch(conn: &Connection, now: Millis, id: &str) -> StoreResult<()> {
    conn.prepare_cached(
        "UPDATE tokens SET last_used_at = ?2 \
         WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2)",
    )
    .and_then(|mut s| s.execute(params![id, now]))
    .map_err(wdb)?;
    Ok(())
}
