//! Tokens on SQLite: inserts, revokes and uses recorded on the writer's
//! connection, reads on a reader's. Rows hold a token's hash, never its
//! text.

use super::{constraint, db, shared, wdb, Constraint};
use crate::store::dialect::Dialect::Sqlite;
use crate::store::token_rows::{self as sql, *};
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};
use sqlx::SqliteConnection;
use std::sync::LazyLock;

static LIST: LazyLock<String> = LazyLock::new(|| sql::list(Sqlite));

pub fn insert(conn: &Connection, now: Millis, t: NewToken) -> StoreResult<()> {
    let admin = t.tenant.is_none();
    if admin {
        shared(conn, DELETE_ADMIN)?.execute([]).map_err(wdb)?;
    }
    let scopes = scopes_text(&t.scopes);
    shared(conn, INSERT)?
        .execute(params![
            t.hash,
            t.id,
            t.tenant,
            scopes,
            admin,
            now,
            t.expires_at
        ])
        .map_err(|e| match constraint(&e) {
            Some(Constraint::ForeignKey) => StoreError::NotFound,
            _ => wdb(e),
        })?;
    Ok(())
}

pub async fn get(conn: &mut SqliteConnection, hash: &str) -> StoreResult<Option<TokenRecord>> {
    let row: Option<RecordRow> = sqlx::query_as(GET.as_str())
        .bind(hash)
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    Ok(row.map(record))
}

pub async fn admin_exists(conn: &mut SqliteConnection) -> StoreResult<bool> {
    let row: Option<i32> = sqlx::query_scalar(ADMIN_EXISTS)
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    Ok(row.is_some())
}

pub async fn list(conn: &mut SqliteConnection) -> StoreResult<Vec<TokenInfo>> {
    let rows: Vec<InfoRow> = sqlx::query_as(LIST.as_str())
        .fetch_all(conn)
        .await
        .map_err(db)?;
    Ok(rows.into_iter().map(info).collect())
}

pub fn revoke(conn: &Connection, id: &str) -> StoreResult<Revocation> {
    let gone: Option<String> = shared(conn, REVOKE)?
        .query_row([id], |r| r.get(0))
        .optional()
        .map_err(wdb)?;
    if gone.is_some() {
        return Ok(Revocation::of(true, None));
    }
    let admin: Option<bool> = shared(conn, IS_ADMIN)?
        .query_row([id], |r| r.get(0))
        .optional()
        .map_err(wdb)?;
    Ok(Revocation::of(false, admin))
}

pub fn touch(conn: &Connection, now: Millis, id: &str) -> StoreResult<()> {
    shared(conn, TOUCH)?
        .execute(params![now, id])
        .map_err(wdb)?;
    Ok(())
}
