//! Building a Rust task project: cargo for `wasm32-wasip2` (the target added with rustup when
//! missing), and the input's schema from the taskbox-sdk's `task!`, run natively.

use super::toolchain::Toolchain;
use super::ProjectError;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";
const CARGO_HINT: &str = "install Rust with rustup (https://rustup.rs), then run this again";

/// Builds the crate in `dir`; the component it made, and the schema if the crate uses
/// taskbox-sdk's `task!` (written to `schema_out`).
pub fn build(
    dir: &Path,
    schema_out: &Path,
    tc: &mut Toolchain<'_>,
) -> Result<(PathBuf, bool), ProjectError> {
    add_target(tc)?;
    let manifest = dir.join("Cargo.toml");
    let json = tc.stdout(
        Command::new("cargo")
            .args([
                "build",
                "--release",
                "--target",
                TARGET,
                "--message-format=json-render-diagnostics",
            ])
            .arg("--manifest-path")
            .arg(&manifest),
        CARGO_HINT,
    )?;
    let component = component_of(&json, &manifest)?;
    let text = std::fs::read_to_string(&manifest).map_err(ProjectError::io(&manifest))?;
    if !text.contains("taskbox-sdk") {
        tc.note("no input schema: the crate does not use taskbox-sdk, whose `task!` derives it");
        return Ok((component, false));
    }
    tc.quiet(
        Command::new("cargo")
            .args(["test", "--lib", "--quiet", "--manifest-path"])
            .arg(&manifest)
            .args(["--", "__taskbox_input_schema"])
            .env("TASKBOX_SCHEMA_OUT", schema_out),
        CARGO_HINT,
    )?;
    if !schema_out.is_file() {
        tc.note("no input schema: the crate's tests did not write one (is `taskbox_sdk::task!` in src/lib.rs?)");
    }
    Ok((component, schema_out.is_file()))
}

/// Adds the wasm target with rustup unless it is there; without rustup, cargo will say.
fn add_target(tc: &mut Toolchain<'_>) -> Result<(), ProjectError> {
    if !Toolchain::exists("rustup") {
        tc.note("rustup not found: assuming the wasm32-wasip2 target is installed");
        return Ok(());
    }
    let installed = tc.quiet(
        Command::new("rustup").args(["target", "list", "--installed"]),
        CARGO_HINT,
    )?;
    if String::from_utf8_lossy(&installed)
        .lines()
        .any(|l| l.trim() == TARGET)
    {
        return Ok(());
    }
    tc.run(
        Command::new("rustup").args(["target", "add", TARGET]),
        CARGO_HINT,
    )
}

/// The `.wasm` that cargo's messages say the project's own cdylib became.
fn component_of(messages: &[u8], manifest: &Path) -> Result<PathBuf, ProjectError> {
    let manifest = manifest
        .canonicalize()
        .unwrap_or_else(|_| manifest.to_owned());
    let mut found = None;
    for line in String::from_utf8_lossy(messages).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let ours = msg["manifest_path"]
            .as_str()
            .is_some_and(|p| Path::new(p) == manifest);
        let cdylib = msg["target"]["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k == "cdylib"));
        if msg["reason"] != "compiler-artifact" || !ours || !cdylib {
            continue;
        }
        let files = msg["filenames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str());
        found = files
            .filter(|f| f.ends_with(".wasm"))
            .map(PathBuf::from)
            .next_back()
            .or(found);
    }
    found.ok_or_else(|| {
        ProjectError::Output(format!(
            "cargo built no .wasm from {}: a task crate needs `[lib] crate-type = [\"cdylib\"]`",
            manifest.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_component_is_the_projects_own_cdylib() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(&manifest, "").unwrap();
        let m = manifest.canonicalize().unwrap();
        let messages = format!(
            "{}\n{}\nnot json\n{}\n",
            serde_json::json!({"reason": "compiler-artifact", "manifest_path": "/other/Cargo.toml",
                "target": {"kind": ["cdylib"]}, "filenames": ["/t/other.wasm"]}),
            serde_json::json!({"reason": "compiler-artifact", "manifest_path": m,
                "target": {"kind": ["cdylib"]}, "filenames": ["/t/mine.wasm"]}),
            serde_json::json!({"reason": "build-finished", "success": true}),
        );
        assert_eq!(
            component_of(messages.as_bytes(), &manifest).unwrap(),
            PathBuf::from("/t/mine.wasm")
        );
        let none = component_of(b"", &manifest).unwrap_err();
        assert!(none.to_string().contains("cdylib"), "{none}");
    }
}
