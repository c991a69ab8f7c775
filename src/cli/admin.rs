//! `taskbox tenant …`: what an admin token does with tenants.

use super::client::{connect, PrintReply, ServerArgs};
use serde_json::json;
use std::process::ExitCode;

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
    /// tenant's, or NAME's (admin token). With --export: per task version and
    /// hour or day, summed from the attempt records.
    Usage {
        /// Whose (admin token); default: the token's own tenant (with --export and the
        /// admin token: every tenant).
        name: Option<String>,
        #[command(flatten)]
        export: super::tenant::ExportArgs,
        #[command(flatten)]
        out: super::tenant::Output,
    },
}

pub fn tenant_main(cmd: TenantCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TenantCmd::Set(args) => super::tenant::set(args),
        TenantCmd::Show { name, out } => super::tenant::show(name, out),
        TenantCmd::List(out) => super::tenant::list(out),
        TenantCmd::Usage { name, export, out } if export.export => {
            super::tenant::export(name, export, out)
        }
        TenantCmd::Usage { name, out, .. } => super::tenant::usage(name, out),
        TenantCmd::Create { name, server, json } => {
            let client = connect(&server)?;
            let reply = client
                .post(&["v1", "tenants"])
                .json(json!({ "name": name }))
                .send()?;
            if json {
                reply.print()?;
            } else {
                println!("created tenant {name}");
                eprintln!("mint a token for it with `taskbox token create --tenant {name}`");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
