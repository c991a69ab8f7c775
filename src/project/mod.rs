//! A task author's project on disk: `taskbox init` writes a new one from a template,
//! `taskbox build` turns it into `dist/task.wasm` (and, where the language can derive it,
//! `dist/schema.json`) with the language's own toolchain.

mod build;
mod embedded;
mod go;
mod init;
mod js;
mod python;
mod rust;
mod toolchain;

pub use build::{build, detect, Built};
pub use init::{init, Created};
pub use toolchain::{quote, user_cache_dir, Step};

use std::path::PathBuf;

/// A language taskbox can start and build a task project in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Rust,
    Js,
    Ts,
    Python,
    Go,
}

impl Language {
    pub const ALL: [Language; 5] = [
        Language::Rust,
        Language::Js,
        Language::Ts,
        Language::Python,
        Language::Go,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Js => "js",
            Language::Ts => "ts",
            Language::Python => "python",
            Language::Go => "go",
        }
    }
}

/// Where a project's build puts what it makes, under the project's directory.
pub const DIST: &str = "dist";
/// The component a build makes, under `DIST`.
pub const COMPONENT: &str = "task.wasm";
/// The input's JSON Schema a build derives, under `DIST`.
pub const SCHEMA: &str = "schema.json";

/// Why a project could not be written or built. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(
        "{0} is not empty: `taskbox init` writes a new project into an empty or missing directory"
    )]
    NotEmpty(PathBuf),
    #[error(
        "{0} holds no task project taskbox knows: it looks for Cargo.toml (Rust), package.json \
         (JavaScript, TypeScript), app.py (Python) or go.mod (Go); start one with \
         `taskbox init rust|js|ts|python|go DIR`"
    )]
    Unknown(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{program}` is not installed or not on PATH: {hint}")]
    Missing { program: String, hint: &'static str },
    #[error("`{command}` failed ({status}){detail}")]
    Failed {
        command: String,
        status: String,
        detail: String,
    },
    #[error("{0}")]
    Output(String),
}

impl ProjectError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ProjectError {
        let path = path.into();
        move |source| ProjectError::Io { path, source }
    }
}
