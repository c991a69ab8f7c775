//! What a PostgreSQL transaction needs and decides by: the pools, the
//! database's clock (or a test's), the default quotas.

use crate::quota::Quotas;
use crate::store::{Clock, Millis, StoreResult};
use sqlx::{PgPool, Postgres, Transaction};
use std::sync::Arc;

/// A transaction of the store's.
pub type Tx = Transaction<'static, Postgres>;

macro_rules! db_clock {
    () => {
        "(extract(epoch from clock_timestamp()) * 1000)::int8"
    };
}
/// The database's clock in Unix ms: what every transaction decides by.
pub const DB_CLOCK: &str = db_clock!();
/// `DB_CLOCK` read on its own.
pub const DB_NOW: &str = concat!("SELECT ", db_clock!());

/// What a transaction needs, also apart from any request (a batch runs in
/// a task of its own).
#[derive(Clone)]
pub struct Db {
    pub pool: PgPool,
    /// For `bulk::insert_now` alone, planned once (`PgStore::open`).
    pub enqueues: PgPool,
    pub clock: Option<Arc<dyn Clock>>,
    pub defaults: Quotas,
}

impl Db {
    /// A transaction and the time it decides by: the database's clock,
    /// unless a test's clock is given.
    pub async fn begin(&self) -> StoreResult<(Tx, Millis)> {
        let mut tx = self.pool.begin().await.map_err(super::pg)?;
        let now = match &self.clock {
            Some(c) => c.now(),
            None => sqlx::query_scalar(DB_NOW)
                .fetch_one(&mut *tx)
                .await
                .map_err(super::pg)?,
        };
        Ok((tx, now))
    }
}
