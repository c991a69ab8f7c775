//! The schema's migrations, embedded in the binary: the files under
//! `migrations/`, listed by build.rs, resolved as sqlx resolves a directory
//! (the same version, description and checksum), so that databases migrated
//! by earlier builds, which used sqlx's `migrate!`, open unchanged.

use std::borrow::Cow;

use futures_util::future::BoxFuture;
use sqlx::error::BoxDynError;
use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};

mod list {
    include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
}

/// SQLite's migrations (`migrations/sqlite`).
pub async fn sqlite() -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(list::SQLITE)).await
}

/// PostgreSQL's migrations (`migrations/postgres`).
pub async fn postgres() -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(list::POSTGRES)).await
}

/// Migrations as (version, description, SQL), in order.
#[derive(Debug)]
struct Embedded(&'static [(i64, &'static str, &'static str)]);

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(self) -> BoxFuture<'s, Result<Vec<Migration>, BoxDynError>> {
        let migrations = self
            .0
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    Cow::Borrowed(sql),
                    // sqlx's own marker for a migration run outside a transaction.
                    sql.starts_with("-- no-transaction"),
                )
            })
            .collect();
        Box::pin(std::future::ready(Ok(migrations)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file is embedded, in order, with the checksum sqlx gives the
    /// file when it reads the directory itself (as `migrate!` did).
    #[tokio::test]
    async fn embedded_migrations_are_the_directorys() {
        for (dir, embedded) in [("sqlite", sqlite().await), ("postgres", postgres().await)] {
            let embedded = embedded.unwrap();
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(dir);
            let read = Migrator::new(path.as_path()).await.unwrap();
            let key = |m: &Migration| {
                (
                    m.version,
                    m.description.to_string(),
                    m.checksum.to_vec(),
                    m.no_tx,
                )
            };
            let embedded: Vec<_> = embedded.iter().map(key).collect();
            let read: Vec<_> = read.iter().map(key).collect();
            assert!(embedded.len() > 20, "{dir}: {} migrations", embedded.len());
            assert_eq!(embedded, read, "{dir}");
        }
    }
}
