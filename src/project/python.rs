//! Building a Python task project: componentize-py over the vendored taskbox-sdk, and the
//! input's schema from the task's input dataclass by pydantic, run natively. Both come from
//! PyPI into a virtualenv in the user's cache.

use super::toolchain::{pypi_venv, Toolchain};
use super::ProjectError;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// What builds Python components (the componentize-py the guest examples are built with),
/// and what derives the schema.
const PACKAGES: [&str; 2] = ["componentize-py==0.25.1", "pydantic==2.14.4"];
const PYTHON_HINT: &str = "install Python 3.11 or later with its venv module (python3 -m venv), \
                           so that taskbox can install componentize-py from PyPI";
/// Where `taskbox init` vendors the SDK, relative to the project.
pub const SDK: &str = "third_party/taskbox-sdk";
/// The module componentize-py builds: the project's `app` and the SDK's export.
const ENTRY: &str = "taskbox_entry";
/// The SDK's world.
const WORLD: &str = "taskbox:sdk/guest";

/// Builds the project in `dir` into `out`; whether it wrote the input's schema to `schema_out`.
pub fn build(
    dir: &Path,
    out: &Path,
    schema_out: &Path,
    tc: &mut Toolchain<'_>,
) -> Result<bool, ProjectError> {
    let sdk = dir.join(SDK);
    if !sdk.join("src/taskbox/__init__.py").is_file() {
        return Err(ProjectError::Output(format!(
            "{} holds no taskbox SDK: `taskbox init python` vendors it there; copy it from a new \
             project, or start one with `taskbox init python DIR`",
            sdk.display()
        )));
    }
    let venv = pypi_venv(tc, "python-componentize-py", &PACKAGES, PYTHON_HINT)?;
    let bin = venv.join("bin");
    // The project first, so that its `app` is the one imported; then the SDK.
    let whole = |p: &Path| p.canonicalize().map_err(ProjectError::io(p));
    let path = std::env::join_paths([whole(dir)?, whole(&sdk)?.join("src")]).map_err(|e| {
        ProjectError::Output(format!("the project's path cannot be a PYTHONPATH: {e}"))
    })?;

    let wrote = schema(&bin, dir, &path, schema_out, tc)?;

    let wit = sdk.join("wit");
    tc.run(
        Command::new(bin.join("componentize-py"))
            .arg("-d")
            .arg(wit.join("task"))
            .arg("-d")
            .arg(wit.join("guest"))
            .args(["-w", WORLD, "componentize", ENTRY, "-p", "."])
            .arg("-p")
            .arg(Path::new(SDK).join("src"))
            .arg("-o")
            .arg(out)
            .current_dir(dir),
        PYTHON_HINT,
    )?;
    Ok(wrote)
}

/// Runs the SDK's schema writer natively; whether the task's input type gave a schema.
fn schema(
    bin: &Path,
    dir: &Path,
    path: &OsString,
    schema_out: &Path,
    tc: &mut Toolchain<'_>,
) -> Result<bool, ProjectError> {
    let said = tc.quiet(
        Command::new(bin.join("python"))
            .args(["-m", "taskbox._schema"])
            .arg(schema_out)
            .current_dir(dir)
            .env("PYTHONPATH", path),
        PYTHON_HINT,
    )?;
    if String::from_utf8_lossy(&said).trim() == "none" {
        tc.note(
            "no input schema: annotate the task's first parameter with a dataclass to derive one",
        );
        return Ok(false);
    }
    Ok(schema_out.is_file())
}
