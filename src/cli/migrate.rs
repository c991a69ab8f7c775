//! `taskbox migrate`: brings a database's schema to this version and exits,
//! for deployments that migrate once before starting processes with
//! `--no-migrate`.

use crate::quota::Quotas;
use crate::store::{self, Durability, StoreOptions, SystemClock};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// The database to migrate: postgres://… or sqlite://PATH.
    #[arg(long, env = "TASKBOX_DATABASE_URL")]
    pub database_url: String,
}

pub fn main(args: MigrateArgs) -> anyhow::Result<ExitCode> {
    crate::config::check_environment(std::env::vars(), &super::known_variables())
        .map_err(anyhow::Error::msg)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let store = store::open(
            &StoreOptions {
                url: args.database_url.clone(),
                durability: Durability::Full,
                quotas: Quotas::default(),
                migrate: true,
            },
            Arc::new(SystemClock),
        )
        .await?;
        store.close().await;
        println!("taskbox: the database is migrated to this version's schema");
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}
