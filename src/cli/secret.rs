//! `taskbox secret …`: put, list and remove the tenant's secrets (needs the
//! secrets:write scope). A value is read from stdin or a file, never from
//! the command line, and is never printed.

use super::client::{api_error, connect, PrintReply, ServerArgs};
use super::table::{self, Table};
use crate::api::secrets::{Secret, SecretList};
use crate::secrets::rules::{self, MAX_VALUE_BYTES};
use anyhow::{bail, Context};
use clap::Subcommand;
use serde_json::json;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use zeroize::Zeroizing;

#[derive(Debug, Subcommand)]
pub enum SecretCmd {
    /// Put a secret: make it, or replace its value (its version goes up).
    #[command(
        after_help = "The value is read from stdin (typed, hidden, when stdin is a \
terminal; or piped: `printf %s \"$STRIPE_KEY\" | taskbox secret put STRIPE_KEY`), or from \
--value-file. It is never taken from a flag or an argument: a command line ends up in shell \
history and in `ps`, where others can read it. One line ending at the end of the value is \
dropped (echo and editors add one) unless --keep-newline. Tasks that declare the name \
(\"secrets\": [\"STRIPE_KEY\"]) read the value; nothing else ever shows it."
    )]
    Put {
        /// The secret's name: 1 to 64 of A-Z a-z 0-9 _ - ., starting with a letter or _.
        name: String,
        /// Read the value from this file instead of stdin.
        #[arg(long, value_name = "PATH")]
        value_file: Option<PathBuf>,
        /// Keep a line ending at the end of the value.
        #[arg(long)]
        keep_newline: bool,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the tenant's secrets: names, versions and times, never values.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a secret: tasks that declare it no longer see it.
    #[command(alias = "delete")]
    Rm {
        /// The secret's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

pub fn main(cmd: SecretCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        SecretCmd::Put {
            name,
            value_file,
            keep_newline,
            server,
            json,
        } => {
            // Said before a value is asked for.
            rules::check_name(&name)?;
            let client = connect(&server)?;
            let value = match &value_file {
                Some(path) => from_file(path)?,
                None if std::io::stdin().is_terminal() => typed(&name)?,
                None => from_stdin()?,
            };
            let value = trimmed(value, keep_newline);
            rules::check_value(&value).map_err(|e| {
                anyhow::anyhow!(
                    "{e}{}",
                    match &value_file {
                        Some(_) => "",
                        None => " (read from stdin; or give --value-file PATH)",
                    }
                )
            })?;
            let reply = client
                .put(&["v1", "secrets", &name])
                .json(json!({ "value": value.as_str() }))
                .send()
                .map_err(not_found)?;
            if json {
                reply.print()?;
            } else {
                let made = reply.status == 201;
                let secret: Secret = reply.json()?;
                println!(
                    "{} secret {} (version {})",
                    if made { "made" } else { "replaced" },
                    secret.name,
                    secret.version
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        SecretCmd::List { server, json } => super::client::list(
            &server,
            "secrets",
            json,
            "no secrets; put one with `taskbox secret put NAME` (the value on stdin)",
            |l: SecretList| l.secrets,
            secrets_table,
        ),
        SecretCmd::Rm { name, server } => {
            let client = connect(&server)?;
            client
                .delete(&["v1", "secrets", &name])
                .send()
                .map_err(|e| unknown_secret(e, &name))?;
            println!("removed secret {name}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Reads at most one byte past the largest value, so that a larger one is
/// told without reading it all.
fn read_bounded(from: impl Read, what: &str) -> anyhow::Result<Zeroizing<String>> {
    let mut bytes = Zeroizing::new(Vec::new());
    from.take(MAX_VALUE_BYTES as u64 + 3)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read the value from {what}"))?;
    // Checked here, where the length is known and the value still bytes.
    if bytes.len() > MAX_VALUE_BYTES + 2 {
        bail!(
            "the value in {what} is over {MAX_VALUE_BYTES} bytes (64 KiB), the most a secret holds"
        );
    }
    match std::str::from_utf8(&bytes) {
        Ok(text) => Ok(Zeroizing::new(text.to_owned())),
        Err(_) => bail!(
            "the value in {what} is not UTF-8 text; a secret holds text (encode binary values, \
             e.g. with base64)"
        ),
    }
}

fn from_file(path: &Path) -> anyhow::Result<Zeroizing<String>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open the value file {}", path.display()))?;
    read_bounded(file, &path.display().to_string())
}

fn from_stdin() -> anyhow::Result<Zeroizing<String>> {
    read_bounded(std::io::stdin().lock(), "stdin")
}

/// The value typed at the terminal, not echoed: one line.
fn typed(name: &str) -> anyhow::Result<Zeroizing<String>> {
    eprint!("value of {name} (hidden; Enter ends it): ");
    let line = {
        let _quiet = Quiet::stdin()?;
        let mut line = Zeroizing::new(String::new());
        std::io::stdin()
            .read_line(&mut line)
            .context("cannot read the value from the terminal")?;
        line
    };
    eprintln!();
    Ok(line)
}

/// The value without the one line ending a pipe or an editor adds.
fn trimmed(mut value: Zeroizing<String>, keep_newline: bool) -> Zeroizing<String> {
    if !keep_newline {
        let ending = if value.ends_with("\r\n") {
            2
        } else {
            usize::from(value.ends_with('\n'))
        };
        let len = value.len() - ending;
        value.truncate(len);
    }
    value
}

/// The terminal's echo turned off while this lives.
struct Quiet {
    #[cfg(unix)]
    was: libc::termios,
}

impl Quiet {
    #[cfg(unix)]
    fn stdin() -> anyhow::Result<Quiet> {
        // SAFETY: tcgetattr fills the termios it is given, which is plain
        // data; fd 0 is this process's stdin, a terminal (checked above).
        let mut was: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut was) } != 0 {
            bail!(
                "cannot turn off the terminal's echo to read the value unseen; pipe it in, or \
                 give --value-file"
            );
        }
        let mut quiet = was;
        quiet.c_lflag &= !libc::ECHO;
        quiet.c_lflag |= libc::ECHONL;
        // SAFETY: as above; `quiet` is a copy of what tcgetattr gave.
        if unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &quiet) } != 0 {
            bail!(
                "cannot turn off the terminal's echo to read the value unseen; pipe it in, or \
                 give --value-file"
            );
        }
        Ok(Quiet { was })
    }

    #[cfg(not(unix))]
    fn stdin() -> anyhow::Result<Quiet> {
        bail!("cannot read a value unseen from this terminal; pipe it in, or give --value-file")
    }
}

#[cfg(unix)]
impl Drop for Quiet {
    fn drop(&mut self) {
        // SAFETY: restores the settings tcgetattr read.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.was);
        }
    }
}

/// A 404 naming a secret: say where the names are.
fn unknown_secret(e: impl Into<anyhow::Error>, name: &str) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    match api_error(&e) {
        Some(a) if a.code.as_deref() == Some("SECRET_NOT_FOUND") => e.context(format!(
            "no secret {name} in this tenant; `taskbox secret list` shows their names"
        )),
        _ => not_found(e),
    }
}

fn not_found(e: impl Into<anyhow::Error>) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    super::client::older_server(e, "secrets")
}

fn secrets_table(secrets: &[Secret]) -> Table {
    let mut t = Table::new(&["NAME", "VERSION", "CREATED", "UPDATED"]).right(&[1]);
    for s in secrets {
        t.row(vec![
            s.name.clone(),
            s.version.to_string(),
            table::time_cell(Some(s.created_at.as_str())),
            table::time_cell(Some(s.updated_at.as_str())),
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
        cmd: SecretCmd,
    }

    #[test]
    fn a_value_is_never_a_flag_or_an_argument() {
        for argv in [
            &["x", "put", "K", "--value", "v"][..],
            &["x", "put", "K", "v"][..],
        ] {
            assert!(Cli::try_parse_from(argv).is_err(), "{argv:?}");
        }
        assert!(Cli::try_parse_from(["x", "put", "K", "--value-file", "f"]).is_ok());
        assert!(Cli::try_parse_from(["x", "delete", "K"]).is_ok());
    }

    #[test]
    fn one_line_ending_is_dropped_unless_kept() {
        let t = |v: &str, keep| trimmed(Zeroizing::new(v.to_owned()), keep).to_string();
        assert_eq!(t("v\n", false), "v");
        assert_eq!(t("v\r\n", false), "v");
        assert_eq!(t("v\n\n", false), "v\n");
        assert_eq!(t("v\n", true), "v\n");
        assert_eq!(t("v", false), "v");
    }

    #[test]
    fn values_read_are_bounded_text() {
        let ok = read_bounded(&b"sk_live\n"[..], "stdin").unwrap();
        assert_eq!(ok.as_str(), "sk_live\n");
        let big = vec![b'x'; MAX_VALUE_BYTES + 3];
        let err = read_bounded(&big[..], "stdin").unwrap_err().to_string();
        assert!(err.contains("over 65536 bytes"), "{err}");
        let err = read_bounded(&[0xff, 0xfe][..], "stdin")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not UTF-8"), "{err}");
    }

    #[test]
    fn secrets_print_as_a_table() {
        let secrets: Vec<Secret> = serde_json::from_value(serde_json::json!([
            {"tenant": "acme", "name": "A", "version": 12, "created_at": "2000-01-01T00:00:00.000Z",
             "updated_at": "2000-01-02T00:00:00.000Z"},
            {"tenant": "acme", "name": "STRIPE_KEY", "version": 1, "created_at": "2000-01-01T00:00:00.000Z",
             "updated_at": "2000-01-01T00:00:00.000Z"},
        ]))
        .unwrap();
        assert_eq!(
            secrets_table(&secrets).lines(),
            vec![
                "NAME        VERSION  CREATED                   UPDATED",
                "A                12  2000-01-01T00:00:00.000Z  2000-01-02T00:00:00.000Z",
                "STRIPE_KEY        1  2000-01-01T00:00:00.000Z  2000-01-01T00:00:00.000Z",
            ]
        );
    }
}
