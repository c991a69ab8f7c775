//! The `taskbox` binary that benches and the fault harness start as
//! servers and workers: the product itself, never this program.

use anyhow::Context;
use std::path::PathBuf;
use std::process::Command;

/// Which `taskbox` binary to start.
#[derive(Debug, Clone, clap::Args)]
pub struct Taskbox {
    /// The `taskbox` binary started as server and workers [default: the one beside this program]
    #[arg(long = "taskbox", value_name = "PATH")]
    pub path: Option<PathBuf>,
}

impl Taskbox {
    /// The binary as a child process, with none of the caller's `TASKBOX_*`
    /// variables: only what the caller sets may change what is measured or
    /// tested.
    pub fn command(&self) -> anyhow::Result<Command> {
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
        let mut cmd = Command::new(path);
        for (k, _) in std::env::vars() {
            if k.starts_with("TASKBOX_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("TASKBOX_LOG", "warn");
        Ok(cmd)
    }
}
