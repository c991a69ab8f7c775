//! Databases made and dropped on a PostgreSQL server, for the test suites
//! and the benchmarks, which each want a database of their own.

use super::pg;
use crate::store::StoreResult;
use sqlx::Connection;

/// `url` with its database replaced by `db`.
pub fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    let mut out = format!("{}/{db}", &base[..host_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// Makes the database `name` on the server `url` names; answers its URL.
/// `name` is the caller's own (letters, digits and `_`), never a user's.
pub async fn create_database(url: &str, name: &str) -> StoreResult<String> {
    let mut c = sqlx::PgConnection::connect(url).await.map_err(pg)?;
    sqlx::query(&format!("CREATE DATABASE \"{name}\""))
        .execute(&mut c)
        .await
        .map_err(pg)?;
    Ok(with_database(url, name))
}

/// Makes the database `name` as a copy of `template` (no session may be
/// connected to it), on the server `url` names; answers its URL. One
/// statement, where a new database takes every migration: the test suites
/// copy one they migrated once.
pub async fn create_database_from(url: &str, name: &str, template: &str) -> StoreResult<String> {
    let mut c = sqlx::PgConnection::connect(url).await.map_err(pg)?;
    sqlx::query(&format!(
        "CREATE DATABASE \"{name}\" TEMPLATE \"{template}\""
    ))
    .execute(&mut c)
    .await
    .map_err(pg)?;
    Ok(with_database(url, name))
}

/// Migrates the database at `url` to this version's schema on one
/// connection, closed after (so that the database can be a template).
pub async fn migrate(url: &str) -> StoreResult<()> {
    let mut c = sqlx::PgConnection::connect(url).await.map_err(pg)?;
    let migrate = async {
        crate::store::migrations::postgres()
            .await?
            .run(&mut c)
            .await
    };
    migrate
        .await
        .map_err(|e| crate::store::StoreError::Internal(format!("cannot migrate: {e}")))?;
    c.close().await.map_err(pg)
}

/// Drops the database `name`, ending its sessions.
pub async fn drop_database(url: &str, name: &str) -> StoreResult<()> {
    let mut c = sqlx::PgConnection::connect(url).await.map_err(pg)?;
    sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
        .execute(&mut c)
        .await
        .map_err(pg)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn urls_name_the_database() {
        assert_eq!(
            with_database("postgres://u@h:5432/postgres", "x"),
            "postgres://u@h:5432/x"
        );
        assert_eq!(with_database("postgres://h", "x"), "postgres://h/x");
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
    }
}
