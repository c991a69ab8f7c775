//! `taskbox tenant …` and `taskbox token …`: what an admin token does.

use super::client::{print_json, Client, ServerArgs};
use anyhow::Context;
use serde_json::{json, Value};
use std::process::ExitCode;

/// Every scope a tenant token can carry.
pub const SCOPES: [&str; 8] = [
    "tasks:write",
    "jobs:queue",
    "jobs:run",
    "jobs:cancel",
    "jobs:read",
    "schedules:write",
    "webhooks:write",
    "secrets:write",
];

#[derive(Debug, clap::Subcommand)]
pub enum TenantCmd {
    /// Create a tenant (admin token).
    Create {
        /// The tenant's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Set a tenant's weight and quotas (admin token); creates it if new.
    Set(super::tenant::SetArgs),
    /// Show a tenant's weight and quotas, each with who set it (admin token).
    Show {
        /// The tenant's name.
        name: String,
        #[command(flatten)]
        out: super::tenant::Output,
    },
    /// List the tenants (admin token).
    List(super::tenant::Output),
    /// Fuel, wall time, attempts and jobs, this minute and the last: your
    /// tenant's, or NAME's (admin token).
    Usage {
        /// Whose (admin token); default: the token's own tenant.
        name: Option<String>,
        #[command(flatten)]
        out: super::tenant::Output,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum TokenCmd {
    /// Mint a token for a tenant (admin token); it is shown only once.
    // The shared --tenant flag names the tenant the token is for, so it is required here.
    #[command(mut_arg("tenant", |a| a
        .required(true)
        .help("The tenant the token is for")))]
    Create {
        /// What the token may do; repeat the flag or separate with commas [default: all scopes].
        #[arg(long = "scope", value_name = "SCOPE", value_delimiter = ',',
              value_parser = clap::builder::PossibleValuesParser::new(SCOPES))]
        scopes: Vec<String>,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn tenant_main(cmd: TenantCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TenantCmd::Set(args) => super::tenant::set(args),
        TenantCmd::Show { name, out } => super::tenant::show(name, out),
        TenantCmd::List(out) => super::tenant::list(out),
        TenantCmd::Usage { name, out } => super::tenant::usage(name, out),
        TenantCmd::Create { name, server, json } => {
            let client = Client::new(&server)?;
            let reply = client
                .post(&["v1", "tenants"])
                .json(json!({ "name": name }))
                .send()?;
            if json {
                print_json(&reply.body)?;
            } else {
                println!("created tenant {name}");
                eprintln!("mint a token for it with `taskbox token create --tenant {name}`");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub fn token_main(cmd: TokenCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TokenCmd::Create {
            scopes,
            server,
            json,
        } => {
            let tenant = server
                .tenant
                .clone()
                .filter(|t| !t.is_empty())
                .context("say which tenant the token is for: --tenant NAME")?;
            // The tenant is in the body; acting in it as well would only add a way to fail.
            let client = Client::new(&server)?.without_tenant();
            let reply = client
                .post(&["v1", "tokens"])
                .json(token_body(&tenant, scopes))
                .send()?;
            let token = reply.body["token"]
                .as_str()
                .context("the server's answer has no token")?;
            if json {
                print_json(&reply.body)?;
            } else {
                println!("{token}");
            }
            let granted = match &reply.body["scopes"] {
                Value::Array(s) => s
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                _ => String::from("?"),
            };
            eprintln!(
                "token for tenant {tenant} with scopes {granted}; it is shown only once: \
                 keep it now (e.g. export TASKBOX_TOKEN=…)"
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `{"tenant", "scopes"}`, every scope when none was named.
fn token_body(tenant: &str, mut scopes: Vec<String>) -> Value {
    if scopes.is_empty() {
        scopes = SCOPES.iter().map(|s| (*s).to_owned()).collect();
    }
    scopes.dedup();
    json!({ "tenant": tenant, "scopes": scopes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: TokenCmd,
    }

    fn scopes_of(argv: &[&str]) -> Result<Vec<String>, clap::Error> {
        let argv = ["token", "create", "--token", "t"]
            .iter()
            .chain(argv)
            .copied();
        Cli::try_parse_from(argv).map(|c| match c.cmd {
            TokenCmd::Create { scopes, .. } => scopes,
        })
    }

    #[test]
    fn scopes_repeat_or_split_on_commas() -> Result<(), clap::Error> {
        assert_eq!(
            scopes_of(&[
                "--tenant",
                "acme",
                "--scope",
                "jobs:read,jobs:queue",
                "--scope",
                "tasks:write"
            ])?,
            vec!["jobs:read", "jobs:queue", "tasks:write"]
        );
        assert!(scopes_of(&["--tenant", "acme", "--scope", "jobs:write"]).is_err());
        Ok(())
    }

    #[test]
    fn no_scope_means_all() {
        assert_eq!(
            token_body("acme", vec![]),
            json!({"tenant": "acme", "scopes": SCOPES})
        );
    }

    #[test]
    fn the_tenant_is_required_for_a_token() {
        // Only when TASKBOX_TENANT is unset can a missing --tenant be refused by clap.
        if std::env::var_os("TASKBOX_TENANT").is_none() {
            assert!(scopes_of(&[]).is_err());
        }
    }
}
