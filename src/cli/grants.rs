//! What an attempt run here (`taskbox run`, `taskbox job replay`) may
//! reach and read, as a task's `network` and `secrets` grant it on a
//! server: hosts by flag, secret values from the environment, never from
//! the command line.

use crate::sandbox::{AttemptRequest, NetworkConfig, NetworkGrant};
use anyhow::Context;
use clap::Args;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct GrantArgs {
    /// A host the guest's outbound HTTP may reach, as a task's `network.allow` lists it
    /// (`api.example.com`, `*.stripe.com`, `localhost:8080`); repeat for more. Without any,
    /// every request is refused.
    #[arg(long = "allow", value_name = "HOST")]
    pub allow: Vec<String>,
    /// Let listed hosts be loopback or private addresses (a server on this machine).
    #[arg(long)]
    pub allow_private: bool,
    /// A secret the guest may read through wasi:config/store, its value taken from the
    /// environment variable of the same name (never from the command line); repeat for more.
    #[arg(long = "secret", value_name = "NAME")]
    pub secrets: Vec<String>,
}

impl GrantArgs {
    /// The sandbox's outbound settings these flags ask for.
    pub fn network_config(&self) -> NetworkConfig {
        NetworkConfig {
            allow_private: self.allow_private,
            ..NetworkConfig::default()
        }
    }

    /// Grants `req` the hosts and secrets named, checked.
    pub fn apply(&self, req: &mut AttemptRequest, config: &NetworkConfig) -> anyhow::Result<()> {
        if !self.allow.is_empty() {
            let grant = NetworkGrant::resolve(&self.allow, None, None, config)
                .map_err(|e| anyhow::anyhow!("--allow: {}", e.join("; ")))?;
            req.network = Some(Arc::new(grant));
        }
        for name in &self.secrets {
            crate::secrets::rules::check_name(name)
                .map_err(|e| anyhow::anyhow!("--secret: {e}"))?;
            let value = std::env::var(name).with_context(|| {
                format!(
                    "--secret {name}: set the environment variable {name} to the secret's value"
                )
            })?;
            req.secrets.push((name.clone(), value));
        }
        req.tenant = Arc::from("local");
        Ok(())
    }
}
