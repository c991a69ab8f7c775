//! `taskbox build`: which language a project is, its toolchain's build, and a check that the
//! result is a component the server would take.

use super::toolchain::Toolchain;
use super::{go, js, python, rust, Language, ProjectError, Step, COMPONENT, DIST, SCHEMA};
use crate::sandbox::{inspect, Shape};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a build made.
#[derive(Debug, serde::Serialize)]
pub struct Built {
    pub language: &'static str,
    /// `DIR/dist/task.wasm`.
    pub component: PathBuf,
    pub component_bytes: u64,
    /// `DIR/dist/schema.json`, when the language derived one.
    pub schema: Option<PathBuf>,
    pub seconds: f64,
}

/// The language of the project in `dir`.
pub fn detect(dir: &Path) -> Result<Language, ProjectError> {
    if dir.join("Cargo.toml").is_file() {
        return Ok(Language::Rust);
    }
    if dir.join("go.mod").is_file() {
        return Ok(Language::Go);
    }
    if dir.join("package.json").is_file() {
        return Ok(if js::is_typescript(dir) {
            Language::Ts
        } else {
            Language::Js
        });
    }
    if dir.join("app.py").is_file() {
        return Ok(Language::Python);
    }
    Err(ProjectError::Unknown(dir.to_owned()))
}

/// Builds the project in `dir` into `dir/dist`, telling `report` each step.
pub fn build(dir: &Path, report: &mut dyn FnMut(Step<'_>)) -> Result<Built, ProjectError> {
    let start = Instant::now();
    let language = detect(dir)?;
    let dist = dir.join(DIST);
    std::fs::create_dir_all(&dist).map_err(ProjectError::io(&dist))?;
    let schema = dist.join(SCHEMA);
    // The tools run in other directories (a test runs in its package's): they get paths whole.
    let whole = dist.canonicalize().map_err(ProjectError::io(&dist))?;
    // A schema an earlier build wrote never outlives the build that no longer derives one.
    let _ = std::fs::remove_file(&schema);
    let mut tc = Toolchain::new(report);
    let (made, has_schema) = match language {
        Language::Rust => rust::build(dir, &whole.join(SCHEMA), &mut tc)?,
        Language::Go => (go::build(dir, &whole.join(COMPONENT), &mut tc)?, false),
        Language::Js | Language::Ts => {
            let out = whole.join(COMPONENT);
            let schema = js::build(dir, &whole, &out, &whole.join(SCHEMA), &mut tc)?;
            (out, schema)
        }
        Language::Python => {
            let out = whole.join(COMPONENT);
            let schema = python::build(dir, &out, &whole.join(SCHEMA), &mut tc)?;
            (out, schema)
        }
    };
    let component = dist.join(COMPONENT);
    // What it says it made: under `dir` as given, `dist/…` for the current directory.
    let shown = |p: &Path| {
        p.strip_prefix(".")
            .map(Path::to_owned)
            .unwrap_or_else(|_| p.to_owned())
    };
    if made != whole.join(COMPONENT) {
        std::fs::copy(&made, &component).map_err(ProjectError::io(&made))?;
    }
    let bytes = std::fs::read(&component).map_err(ProjectError::io(&component))?;
    check(&bytes)?;
    if bytes.len() > inspect::DEFAULT_MAX_COMPONENT_BYTES {
        tc.note(&format!(
            "{DIST}/{COMPONENT} is {} MiB: a server takes it only when started with \
             --max-component-bytes {} or more (the default is {} MiB)",
            bytes.len() >> 20,
            bytes.len(),
            inspect::DEFAULT_MAX_COMPONENT_BYTES >> 20
        ));
    }
    Ok(Built {
        language: language.name(),
        component_bytes: bytes.len() as u64,
        component: shown(&component),
        schema: has_schema.then(|| shown(&schema)),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The server's first look at an upload, here: a build whose result no server would take fails.
fn check(bytes: &[u8]) -> Result<(), ProjectError> {
    inspect::inspect(bytes, inspect::MAX_COMPONENT_BYTES_CEILING, |module, _| {
        module == "wasi_snapshot_preview1"
    })
    .map(|_: Shape| ())
    .map_err(|e| {
        ProjectError::Output(format!(
            "the build made {DIST}/{COMPONENT}, but the server would refuse it: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_a_project_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let err = detect(dir.path()).unwrap_err();
        assert!(err.to_string().contains("taskbox init"), "{err}");
        std::fs::write(dir.path().join("app.py"), "").unwrap();
        assert_eq!(detect(dir.path()).unwrap(), Language::Python);
        std::fs::write(dir.path().join("package.json"), "").unwrap();
        assert_eq!(detect(dir.path()).unwrap(), Language::Js);
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/task.ts"), "").unwrap();
        assert_eq!(detect(dir.path()).unwrap(), Language::Ts);
        std::fs::write(dir.path().join("go.mod"), "").unwrap();
        assert_eq!(detect(dir.path()).unwrap(), Language::Go);
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(detect(dir.path()).unwrap(), Language::Rust);
    }

    #[test]
    fn a_result_the_server_would_refuse_fails_the_build() {
        let err = check(b"not wasm").unwrap_err();
        assert!(err.to_string().contains("would refuse"), "{err}");
    }
}
