//! The product as the benches run it: the `taskbox` binary they start as
//! servers and workers (never this program), and the settings of a server
//! they run in their own process.

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::Command;
use taskbox::config::{CompileSettings, ServeConfig};

/// Which `taskbox` binary the benches use.
#[derive(Debug, Clone, clap::Args)]
pub struct Taskbox {
    /// The `taskbox` binary started as servers and workers, and whose `__compile` compiles for a server run here [default: the one beside this program]
    #[arg(long = "taskbox", value_name = "PATH")]
    pub path: Option<PathBuf>,
}

impl Taskbox {
    /// Where the binary is.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        let path = match &self.path {
            Some(p) => p.clone(),
            // `cargo build` puts every binary of the workspace in one
            // directory, and `taskbox bench` runs the one beside itself.
            None => std::env::current_exe()
                .context("cannot find this program's own path")?
                .with_file_name("taskbox"),
        };
        if !path.is_file() {
            anyhow::bail!(
                "{} is not there: build it (`cargo build --release` at the repository root builds both programs) or give --taskbox",
                path.display()
            );
        }
        Ok(path)
    }

    /// The binary as a child process, with none of the caller's `TASKBOX_*`
    /// variables: only what the caller sets may change what is measured or
    /// tested.
    pub fn command(&self) -> anyhow::Result<Command> {
        let mut cmd = Command::new(self.path()?);
        for (k, _) in std::env::vars() {
            if k.starts_with("TASKBOX_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("TASKBOX_LOG", "warn");
        Ok(cmd)
    }
}

/// A server in the bench's own process, on `data_dir` and `database_url`,
/// its API on a free local port and signed in to with `admin_token`, no
/// runners, every other setting the server's default. Its compiles run in
/// the `taskbox` binary's `__compile`, as a server's do (this program has
/// none). Callers change what they measure with `..` over it.
pub fn serve_config(
    data_dir: &Path,
    database_url: String,
    admin_token: &str,
    taskbox: &Taskbox,
) -> anyhow::Result<ServeConfig> {
    Ok(ServeConfig {
        admin_token: Some(admin_token.into()),
        max_instances: 64,
        compile: CompileSettings {
            exe: Some(taskbox.path()?),
            ..CompileSettings::default()
        },
        ..ServeConfig::embedded(data_dir, database_url)
    })
}
