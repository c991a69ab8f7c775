//! The CLI's side of the server commands: the flags that say where the
//! server is and who asks, made into the API client crate's blocking client;
//! printing answers; reading errors through anyhow's layers.

pub use taskbox_client::blocking::Client;
pub use taskbox_client::{ApiError, Reply};

/// Where the server is and who is asking; every server subcommand flattens these.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// The taskbox server's base URL (http, or https behind a TLS proxy).
    #[arg(long, env = "TASKBOX_URL", default_value = taskbox_client::DEFAULT_URL)]
    pub url: String,
    /// The bearer token: the admin token, or one minted by `taskbox token create`.
    #[arg(long, env = "TASKBOX_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Act in this tenant (admin token only; other tokens belong to one tenant).
    #[arg(long, env = "TASKBOX_TENANT")]
    pub tenant: Option<String>,
}

/// Checks the flags and prepares a client; nothing is sent yet.
pub fn connect(args: &ServerArgs) -> anyhow::Result<Client> {
    let mut builder = taskbox_client::Client::builder(&args.url, args.token.clone())
        .user_agent(concat!("taskbox-cli/", env!("CARGO_PKG_VERSION")))
        // The process's TLS provider, as every client of this binary has it.
        .http(crate::http::client());
    if let Some(tenant) = &args.tenant {
        builder = builder.tenant(tenant);
    }
    Ok(Client::build(builder)?)
}

/// The server's error answer behind a CLI error, whatever context was added on the way.
pub fn api_error(e: &anyhow::Error) -> Option<&ApiError> {
    e.downcast_ref::<taskbox_client::Error>()
        .and_then(taskbox_client::Error::api)
}

/// A failure worth waiting out: no answer, or the server asking for a pause.
pub fn is_transient(e: &anyhow::Error) -> bool {
    e.downcast_ref::<taskbox_client::Error>()
        .is_some_and(taskbox_client::Error::is_transient)
}

/// What `--json` shows of an answer: its body as the server sent it.
pub trait PrintReply {
    /// Prints the body (and a newline, when it ends without one).
    fn print(&self) -> anyhow::Result<()>;
}

impl PrintReply for Reply {
    fn print(&self) -> anyhow::Result<()> {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(&self.body)?;
        if !self.body.ends_with(b"\n") {
            out.write_all(b"\n")?;
        }
        out.flush()?;
        Ok(())
    }
}

/// Prints JSON pretty on stdout: what `--json` shows.
pub fn print_json(v: &serde_json::Value) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// `taskbox RESOURCE list`: `GET /v1/RESOURCE`; the answer as it came
/// (`--json`), or read as the API's list type `L`, whose items `items`
/// takes out and `table` shows (or `empty` on stderr when there is none).
pub fn list<L: serde::de::DeserializeOwned, I>(
    server: &ServerArgs,
    resource: &str,
    json: bool,
    empty: &str,
    items: impl FnOnce(L) -> Vec<I>,
    table: impl Fn(&[I]) -> super::table::Table,
) -> anyhow::Result<std::process::ExitCode> {
    let reply = connect(server)?
        .get(&["v1", resource])
        .send()
        .map_err(|e| older_server(e, resource))?;
    if json {
        reply.print()?;
    } else {
        let all = items(reply.json()?);
        if all.is_empty() {
            eprintln!("{empty}");
        } else {
            table(&all).print();
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A 404 for the route itself (no error code) is a server from before
/// `what` (webhooks, schedules, …): say so, and what to do.
pub fn older_server(e: impl Into<anyhow::Error>, what: &str) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    if api_error(&e).is_some_and(|a| a.status == 404 && a.code.is_none()) {
        e.context(format!(
            "this server has no {what} (404): it is older than this taskbox; upgrade it"
        ))
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_flags_clash_with_no_subcommand_flag() {
        use clap::CommandFactory;
        // clap checks duplicate flags only when a command is built; build them all.
        crate::cli::Cli::command().debug_assert();
    }

    #[test]
    fn a_missing_token_says_what_to_set() {
        let args = ServerArgs {
            url: "http://127.0.0.1:1".into(),
            token: None,
            tenant: None,
        };
        let err = connect(&args).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("set TASKBOX_TOKEN")));
    }

    #[test]
    fn a_closed_port_is_transient_and_names_the_url() {
        // Port 1 on loopback: nothing listens there in a test environment.
        let args = ServerArgs {
            url: "http://127.0.0.1:1".into(),
            token: Some("t".into()),
            tenant: None,
        };
        let client = connect(&args).expect("flags are valid");
        let err: anyhow::Error = client
            .get(&["v1", "tasks"])
            .send()
            .expect_err("nothing listens")
            .into();
        let err = err.context("listing tasks");
        assert!(is_transient(&err), "{err:#}");
        assert!(api_error(&err).is_none());
        let text = format!("{err:#}");
        assert!(text.contains("http://127.0.0.1:1/"), "{text}");
        assert!(text.contains("taskbox serve"), "{text}");
    }
}
