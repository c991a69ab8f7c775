//! The SQL of tenants, tokens, components and task versions on SQLite.

use super::db;
use super::rows::TaskRow;
use crate::store::records::*;
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::SqliteConnection;

pub async fn tenant_insert(
    conn: &mut SqliteConnection,
    now: Millis,
    name: String,
) -> StoreResult<Tenant> {
    let done = sqlx::query("INSERT OR IGNORE INTO tenants (name, created_at) VALUES (?1, ?2)")
        .bind(&name)
        .bind(now)
        .execute(conn)
        .await
        .map_err(db)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict(format!(
            "tenant {name:?} exists already"
        )));
    }
    Ok(Tenant {
        name,
        created_at: now,
    })
}

pub async fn token_insert(
    conn: &mut SqliteConnection,
    now: Millis,
    t: NewToken,
) -> StoreResult<()> {
    let admin = t.tenant.is_none();
    if admin {
        sqlx::query("DELETE FROM tokens WHERE admin = 1")
            .execute(&mut *conn)
            .await
            .map_err(db)?;
    }
    let scopes: Vec<&str> = t.scopes.iter().map(|s| s.as_str()).collect();
    sqlx::query(
        "INSERT OR REPLACE INTO tokens (hash, tenant, scopes, admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .bind(&t.hash)
    .bind(&t.tenant)
    .bind(scopes.join(" "))
    .bind(admin)
    .bind(now)
    .execute(conn)
    .await
    .map_err(|e| match &e {
        sqlx::Error::Database(d) if d.is_foreign_key_violation() => StoreError::NotFound,
        _ => db(e),
    })?;
    Ok(())
}

pub fn token_from_row(tenant: Option<String>, scopes: String, admin: bool) -> TokenRecord {
    TokenRecord {
        tenant,
        // A scope this version does not know grants nothing.
        scopes: scopes.split_whitespace().filter_map(Scope::parse).collect(),
        admin,
    }
}

pub async fn component_insert(
    conn: &mut SqliteConnection,
    now: Millis,
    c: NewComponent,
) -> StoreResult<(ComponentRecord, bool)> {
    sqlx::query("INSERT OR IGNORE INTO blobs (digest, bytes) VALUES (?1, ?2)")
        .bind(&c.digest)
        .bind(&c.bytes)
        .execute(&mut *conn)
        .await
        .map_err(db)?;
    let done = sqlx::query(
        "INSERT OR IGNORE INTO components (tenant, digest, size, abi, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .bind(&c.tenant)
    .bind(&c.digest)
    .bind(c.bytes.len() as i64)
    .bind(&c.abi)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db)?;
    let (size, abi, created_at): (i64, String, i64) = sqlx::query_as(
        "SELECT size, abi, created_at FROM components WHERE tenant = ?1 AND digest = ?2",
    )
    .bind(&c.tenant)
    .bind(&c.digest)
    .fetch_one(conn)
    .await
    .map_err(db)?;
    Ok((
        ComponentRecord {
            digest: c.digest,
            size: u64::try_from(size).unwrap_or(0),
            abi,
            created_at,
        },
        done.rows_affected() == 1,
    ))
}

pub async fn task_insert(
    conn: &mut SqliteConnection,
    now: Millis,
    t: NewTask,
) -> StoreResult<TaskRecord> {
    let row: TaskRow = sqlx::query_as(
        "INSERT INTO tasks (tenant, name, version, digest, spec, created_at) \
         VALUES (?1, ?2, (SELECT COALESCE(MAX(version), 0) + 1 FROM tasks WHERE tenant = ?1 AND name = ?2), ?3, ?4, ?5) \
         RETURNING tenant, name, version, digest, spec, created_at",
    )
    .bind(&t.tenant)
    .bind(&t.name)
    .bind(&t.digest)
    .bind(&t.spec)
    .bind(now)
    .fetch_one(conn)
    .await
    .map_err(db)?;
    Ok(row.into())
}
