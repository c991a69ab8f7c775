//! `taskbox bench …`: runs the `taskbox-bench` program found beside this
//! one, with the same arguments. The benches and the fault harness are a
//! crate of their own (`crates/taskbox-bench`), which depends on this one,
//! so this binary cannot link them; `cargo build` at the workspace's root
//! builds both programs into one directory (DESIGN §9).

use anyhow::Context;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The bench and its flags, as `taskbox-bench` takes them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<OsString>,
}

pub fn main(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let bench = std::env::current_exe()
        .context("cannot find this program's own path")?
        .with_file_name("taskbox-bench");
    if !bench.is_file() {
        anyhow::bail!(
            "{} is not there: `cargo build --release` at the repository root builds it beside taskbox",
            bench.display()
        );
    }
    // The bench takes this process's place: its output, exit status and
    // signals are the caller's, as when the benches were in this binary.
    let err = std::process::Command::new(&bench).args(args.args).exec();
    Err(err).with_context(|| format!("cannot run {}", bench.display()))
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn passed(argv: &[&str]) -> Vec<String> {
        let argv = ["taskbox", "bench"].iter().chain(argv).copied();
        match Cli::try_parse_from(argv).map(|c| c.command) {
            Ok(Command::Bench(b)) => b
                .args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            other => panic!("not a bench: {other:?}"),
        }
    }

    #[test]
    fn every_argument_after_bench_goes_to_the_bench_program() {
        let argv = [
            "queue",
            "--only",
            "burn-down",
            "--json",
            "--database-url",
            "postgres://postgres@127.0.0.1:5432/postgres",
            "--workers",
            "2",
        ];
        assert_eq!(passed(&argv), argv);
        // Its help is the bench program's, not this one's.
        assert_eq!(passed(&["--help"]), ["--help"]);
        assert_eq!(passed(&["faults", "-h"]), ["faults", "-h"]);
    }
}
