//! `taskbox token create|list|revoke`: tenants' tokens, minted, listed
//! (never a secret) and revoked by the admin token.

use super::client::{api_error, connect, PrintReply, ServerArgs};
use super::table::{self, Table};
use crate::api::tokens::{TokenList, TokenMinted, TokenView};
use crate::store::Scope;
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
        /// When the token stops being accepted: an RFC 3339 time such as
        /// 2030-01-31T12:00:00Z, at most ten years ahead [default: never].
        #[arg(long, value_name = "TIME")]
        expires_at: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List every token (admin token): ids, tenants, scopes and times, never a secret.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a tenant's token by its id (admin token): every server refuses it within seconds.
    #[command(alias = "rm")]
    Revoke {
        /// The token's id (`tok_…`), as `taskbox token list` shows it.
        id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

pub fn main(cmd: TokenCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TokenCmd::Create {
            scopes,
            expires_at,
            server,
            json,
        } => create(scopes, expires_at, server, json),
        TokenCmd::List { server, json } => super::client::list(
            // Tokens are of every tenant; acting in one would only add a way to fail.
            &ServerArgs {
                tenant: None,
                ..server
            },
            "tokens",
            json,
            "no tokens",
            |l: TokenList| l.tokens,
            tokens_table,
        ),
        TokenCmd::Revoke { id, server } => {
            connect(&server)?
                .without_tenant()
                .delete(&["v1", "tokens", &id])
                .send()
                .map_err(|e| unknown_token(e, &id))?;
            println!("revoked token {id}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn create(
    scopes: Vec<String>,
    expires_at: Option<String>,
    server: ServerArgs,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let tenant = server
        .tenant
        .clone()
        .filter(|t| !t.is_empty())
        .context("say which tenant the token is for: --tenant NAME")?;
    // The tenant is in the body; acting in it as well would only add a way to fail.
    let client = connect(&server)?.without_tenant();
    let reply = client
        .post(&["v1", "tokens"])
        .json(token_body(&tenant, scopes, expires_at))
        .send()?;
    let minted: TokenMinted = reply.json()?;
    if json {
        reply.print()?;
    } else {
        println!("{}", minted.token);
    }
    let expires = match &minted.expires_at {
        Some(at) => format!("expires {at}"),
        None => "never expires".to_owned(),
    };
    eprintln!(
        "token {id} for tenant {tenant} with scopes {}; it {expires}. It is shown only \
         once: keep it now (e.g. export TASKBOX_TOKEN=…); revoke it with `taskbox token revoke {id}`",
        scope_list(&minted.scopes, ", "),
        id = minted.id,
    );
    Ok(ExitCode::SUCCESS)
}

/// `{"tenant", "scopes", "expires_at"?}`, every scope when none was named.
fn token_body(tenant: &str, mut scopes: Vec<String>, expires_at: Option<String>) -> Value {
    if scopes.is_empty() {
        scopes = SCOPES.iter().map(|s| (*s).to_owned()).collect();
    }
    scopes.dedup();
    let mut body = json!({ "tenant": tenant, "scopes": scopes });
    if let Some(at) = expires_at {
        body["expires_at"] = json!(at);
    }
    body
}

/// A 404 naming a token: say where the ids are.
fn unknown_token(e: impl Into<anyhow::Error>, id: &str) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    match api_error(&e) {
        Some(a) if a.code.as_deref() == Some("TOKEN_NOT_FOUND") => e.context(format!(
            "no token {id} (or it was revoked already); `taskbox token list` shows their ids"
        )),
        _ => super::client::older_server(e, "token revocation"),
    }
}

/// `jobs:read, jobs:queue`, with `sep` between.
fn scope_list(scopes: &[Scope], sep: &str) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(sep)
}

fn tokens_table(tokens: &[TokenView]) -> Table {
    let mut t = Table::new(&["ID", "TENANT", "SCOPES", "CREATED", "LAST USED", "EXPIRES"]);
    for k in tokens {
        let scopes = if k.admin {
            "all (admin)".to_owned()
        } else {
            scope_list(&k.scopes, ",")
        };
        let mut expires = table::time_cell(k.expires_at.as_deref());
        if k.expired {
            expires.push_str(" (expired)");
        }
        t.row(vec![
            k.id.clone(),
            if k.admin {
                "(admin)".to_owned()
            } else {
                k.tenant.clone().unwrap_or_else(|| "-".to_owned())
            },
            scopes,
            table::time_cell(Some(k.created_at.as_str())),
            table::time_cell(k.last_used_at.as_deref()),
            expires,
        ]);
    }
    t
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

    fn create_args(argv: &[&str]) -> Result<(Vec<String>, Option<String>), clap::Error> {
        let argv = ["token", "create", "--token", "t"]
            .iter()
            .chain(argv)
            .copied();
        Cli::try_parse_from(argv).map(|c| match c.cmd {
            TokenCmd::Create {
                scopes, expires_at, ..
            } => (scopes, expires_at),
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn scopes_repeat_or_split_on_commas() -> Result<(), clap::Error> {
        assert_eq!(
            create_args(&[
                "--tenant",
                "acme",
                "--scope",
                "jobs:read,jobs:queue",
                "--scope",
                "tasks:write"
            ])?
            .0,
            vec!["jobs:read", "jobs:queue", "tasks:write"]
        );
        assert!(create_args(&["--tenant", "acme", "--scope", "jobs:write"]).is_err());
        Ok(())
    }

    #[test]
    fn no_scope_means_all_and_an_expiry_is_sent_when_given() -> Result<(), clap::Error> {
        assert_eq!(
            token_body("acme", vec![], None),
            json!({"tenant": "acme", "scopes": SCOPES})
        );
        let (scopes, at) = create_args(&[
            "--tenant",
            "acme",
            "--scope",
            "jobs:read",
            "--expires-at",
            "2030-01-31T12:00:00Z",
        ])?;
        assert_eq!(
            token_body("acme", scopes, at),
            json!({"tenant": "acme", "scopes": ["jobs:read"], "expires_at": "2030-01-31T12:00:00Z"})
        );
        Ok(())
    }

    #[test]
    fn the_tenant_is_required_for_a_token() {
        // Only when TASKBOX_TENANT is unset can a missing --tenant be refused by clap.
        if std::env::var_os("TASKBOX_TENANT").is_none() {
            assert!(create_args(&[]).is_err());
        }
    }

    #[test]
    fn revoke_takes_an_id() {
        let c = Cli::try_parse_from(["token", "revoke", "tok_0123456789abcdef", "--token", "t"])
            .unwrap();
        assert!(matches!(c.cmd, TokenCmd::Revoke { id, .. } if id == "tok_0123456789abcdef"));
        assert!(Cli::try_parse_from(["token", "revoke", "--token", "t"]).is_err());
    }

    #[test]
    fn tokens_print_as_a_table() {
        let tokens: Vec<TokenView> = serde_json::from_value(json!([
            {"id": "tok_admin", "tenant": null, "admin": true, "scopes": SCOPES,
             "created_at": "2000-01-01T00:00:00.000Z", "last_used_at": "2000-01-03T00:00:00.000Z",
             "expires_at": null, "expired": false},
            {"id": "tok_1", "tenant": "acme", "admin": false, "scopes": ["jobs:read", "jobs:queue"],
             "created_at": "2000-01-01T00:00:00.000Z", "last_used_at": null,
             "expires_at": "2000-01-02T00:00:00.000Z", "expired": true},
        ]))
        .unwrap();
        assert_eq!(
            tokens_table(&tokens).lines(),
            vec![
                "ID         TENANT   SCOPES                CREATED                   LAST USED                 EXPIRES",
                "tok_admin  (admin)  all (admin)           2000-01-01T00:00:00.000Z  2000-01-03T00:00:00.000Z  -",
                "tok_1      acme     jobs:read,jobs:queue  2000-01-01T00:00:00.000Z  -                         2000-01-02T00:00:00.000Z (expired)",
            ]
        );
    }
}
