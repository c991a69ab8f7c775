//! `taskbox init`: a new task project, ready for `taskbox build`.

use crate::project::{self, Language};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// The languages `init` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    Rust,
    Js,
    Ts,
    Python,
    Go,
}

impl From<Lang> for Language {
    fn from(l: Lang) -> Self {
        match l {
            Lang::Rust => Language::Rust,
            Lang::Js => Language::Js,
            Lang::Ts => Language::Ts,
            Lang::Python => Language::Python,
            Lang::Go => Language::Go,
        }
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "The project holds the task, an example input, a native test and a README; \
the guest SDK is vendored inside it (Rust: vendor/, the others: third_party/), so it builds with nothing \
but the language's toolchain."
)]
pub struct InitArgs {
    /// The task's language.
    #[arg(value_enum)]
    pub language: Lang,
    /// The new project's directory: missing or empty. Its name is the project's.
    pub dir: PathBuf,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn main(args: InitArgs) -> anyhow::Result<ExitCode> {
    let language = Language::from(args.language);
    let created = project::init(language, &args.dir)?;
    if args.json {
        let files: Vec<String> = created
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        let out = serde_json::json!({
            "name": created.name,
            "language": language.name(),
            "dir": args.dir,
            "files": files,
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "created {} task {} in {} ({} files)",
        language.name(),
        created.name,
        args.dir.display(),
        created.files.len()
    );
    println!(
        "\nnext:\n  cd {}\n  taskbox build\n  taskbox run dist/task.wasm --input @example.json",
        project::quote(args.dir.as_os_str())
    );
    Ok(ExitCode::SUCCESS)
}
