//! Picks the backend from the database URL and opens it: the one place
//! that knows which stores this build has.

use super::postgres::{PgStore, PostgresOptions};
use super::sqlite::{SqliteOptions, SqliteStore};
use super::{Clock, JobStore};
use crate::quota::Quotas;
use std::sync::Arc;

/// How a store makes a commit durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// A commit is on disk before it is answered (SQLite
    /// `synchronous=FULL`, PostgreSQL `synchronous_commit=on`).
    Full,
    /// A power cut may lose the last commits, never corrupt the database
    /// (SQLite `synchronous=NORMAL`, PostgreSQL `synchronous_commit=off`).
    Normal,
}

/// How to open a store.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `sqlite://PATH` or `postgres://…`.
    pub url: String,
    pub durability: Durability,
    /// The quotas of tenants the admin set none for.
    pub quotas: Quotas,
    /// Migrate the schema at open (PostgreSQL; SQLite always migrates the
    /// file it owns).
    pub migrate: bool,
}

/// What a store can do beyond the seam's common ground.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// This process owns the database alone, so every job still running
    /// when it opens was left by an earlier run and is rescued at once,
    /// without waiting for its lease. False where other processes share
    /// the database.
    pub owns_database: bool,
}

/// The backends a database URL can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The backend a URL names by its scheme, if any.
    pub fn of(url: &str) -> Option<Backend> {
        let scheme = url.split_once(':')?.0;
        match scheme {
            "sqlite" => Some(Backend::Sqlite),
            "postgres" | "postgresql" => Some(Backend::Postgres),
            _ => None,
        }
    }
}

/// Why a store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(
        "--database-url {0:?} names no database this build knows; use sqlite://PATH or postgres://USER@HOST/DB"
    )]
    UnknownScheme(String),
    #[error(transparent)]
    Sqlite(#[from] super::sqlite::OpenError),
    #[error(transparent)]
    Postgres(#[from] super::postgres::OpenError),
}

/// Opens (creating and migrating where the backend does) the store the URL
/// names.
pub async fn open(
    opts: &StoreOptions,
    clock: Arc<dyn Clock>,
) -> Result<Arc<dyn JobStore>, OpenError> {
    match Backend::of(&opts.url) {
        Some(Backend::Sqlite) => {
            let store = SqliteStore::open(
                &SqliteOptions {
                    url: opts.url.clone(),
                    durability: opts.durability,
                    quotas: opts.quotas,
                },
                clock,
            )
            .await?;
            Ok(Arc::new(store))
        }
        Some(Backend::Postgres) => {
            // The database's clock decides; `clock` is for SQLite's tests.
            let store = PgStore::open(
                &PostgresOptions {
                    url: opts.url.clone(),
                    durability: opts.durability,
                    quotas: opts.quotas,
                    pool: super::postgres::DEFAULT_POOL,
                    migrate: opts.migrate,
                },
                None,
            )
            .await?;
            Ok(Arc::new(store))
        }
        None => Err(OpenError::UnknownScheme(opts.url.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_names_the_backend() {
        assert_eq!(Backend::of("sqlite:///tmp/x.db"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("sqlite://x.db"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("postgres://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of("postgresql://h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of("mysql://h/db"), None);
        assert_eq!(Backend::of("taskbox.db"), None);
    }
}
