//! `taskbox build`: a task project into `dist/task.wasm` with its language's own toolchain.

use crate::project::{self, Built, Step};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Args)]
#[command(
    after_help = "Each command the build runs is printed before it runs. What is missing \
(the wasm target, the language's packages) is installed from the package registries."
)]
pub struct BuildArgs {
    /// The project's directory.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Print what was built as JSON (the toolchain's progress stays on stderr).
    #[arg(long)]
    pub json: bool,
}

pub fn main(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let built = build(&args.dir)?;
    if args.json {
        println!("{}", serde_json::to_string(&built)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut made = format!(
        "{} ({})",
        built.component.display(),
        crate::cli::format::bytes(built.component_bytes)
    );
    if let Some(schema) = &built.schema {
        made.push_str(&format!(" and {}", schema.display()));
    }
    println!("built {made} in {:.1} s", built.seconds);
    let example = if args.dir == Path::new(".") {
        PathBuf::from("example.json")
    } else {
        args.dir.join("example.json")
    };
    if example.is_file() {
        println!(
            "run it: taskbox run {} --input @{}",
            built.component.display(),
            example.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds the project in `dir`, the steps on stderr.
pub(crate) fn build(dir: &Path) -> anyhow::Result<Built> {
    let mut report = |step: Step<'_>| match step {
        Step::Run(line) => eprintln!("==> {line}"),
        Step::Note(text) => eprintln!("note: {text}"),
    };
    Ok(project::build(dir, &mut report)?)
}
