//! Building a JavaScript or TypeScript task project with the project's own npm packages:
//! `npm install` when they are missing, the input's schema from the TypeScript `Input` type
//! (ts-json-schema-generator), one bundle of the task and its packages (esbuild, `async`
//! lowered onto the SDK's queued promises), and the component (componentize-qjs, QuickJS).

use super::toolchain::Toolchain;
use super::ProjectError;
use std::path::Path;
use std::process::Command;

const NPM_HINT: &str =
    "install Node.js 18 or later with npm (https://nodejs.org), then run this again";
/// Where `taskbox init` vendors the SDK, relative to the project (its package.json depends
/// on it as `file:third_party/taskbox-sdk`).
pub const SDK: &str = "third_party/taskbox-sdk";
/// The file `taskbox build` writes to import the task and export the world's `run`.
const ENTRY: &str = ".taskbox-entry.mjs";
const BUNDLE: &str = "bundle.js";

/// Which of the two a project is: TypeScript when `src/task.ts` is there.
pub fn is_typescript(dir: &Path) -> bool {
    dir.join("src/task.ts").is_file()
}

/// Builds the project in `dir` into `out`; whether it wrote the input's schema to
/// `schema_out`. `dist` is the project's output directory, whole.
pub fn build(
    dir: &Path,
    dist: &Path,
    out: &Path,
    schema_out: &Path,
    tc: &mut Toolchain<'_>,
) -> Result<bool, ProjectError> {
    let ts = is_typescript(dir);
    let source = if ts { "src/task.ts" } else { "src/task.js" };
    if !dir.join(source).is_file() {
        return Err(ProjectError::Output(format!(
            "{} has a package.json but no src/task.ts or src/task.js, whose default export is \
             the task (`export default defineTask(...)`); start one with `taskbox init js DIR` \
             or `taskbox init ts DIR`",
            dir.display()
        )));
    }
    install(dir, tc)?;
    let bin = |tool: &str| dir.join("node_modules/.bin").join(tool);
    for (tool, package) in [
        ("esbuild", "esbuild"),
        ("componentize-qjs", "componentize-qjs"),
    ] {
        if !bin(tool).exists() {
            return Err(ProjectError::Output(format!(
                "node_modules/.bin/{tool} is missing: add it to the project (`npm install \
                 --save-dev {package}`); `taskbox init` pins the versions it was tested with"
            )));
        }
    }
    let sdk = dir.join("node_modules/@taskbox/sdk");
    if !sdk.join("src/component.js").is_file() {
        return Err(ProjectError::Output(
            "node_modules/@taskbox/sdk is missing: the project depends on the taskbox SDK \
             (`\"@taskbox/sdk\": \"file:third_party/taskbox-sdk\"` in a new project's package.json)"
                .into(),
        ));
    }

    let wrote = ts && schema(dir, source, schema_out, tc)?;

    let entry = dist.join(ENTRY);
    let text = format!(
        "// Written by `taskbox build`: the task, and the world's export that runs it.\n\
         import task from \"../{source}\";\n\
         import {{ componentRun }} from \"@taskbox/sdk/component\";\n\
         export const run = componentRun(task);\n"
    );
    std::fs::write(&entry, text).map_err(ProjectError::io(&entry))?;
    let bundle = dist.join(BUNDLE);
    tc.run(
        Command::new(bin("esbuild"))
            .arg(&entry)
            .args([
                "--bundle",
                "--format=esm",
                "--platform=neutral",
                "--main-fields=module,main",
                "--external:taskbox:*",
                "--external:wasi:*",
                // QuickJS's synchronous runtime runs no event loop inside a call: `async`
                // becomes generators over the SDK's promises (installed by its globals.js,
                // with console, TextEncoder and fetch), which `run` drains.
                "--supported:async-await=false",
                "--supported:async-generator=false",
                "--define:process.env.NODE_ENV=\"production\"",
                "--log-level=warning",
            ])
            .arg(format!("--inject:{}", sdk.join("src/globals.js").display()))
            .arg(format!("--outfile={}", bundle.display()))
            .current_dir(dir),
        NPM_HINT,
    )?;
    tc.run(
        Command::new(bin("componentize-qjs"))
            .args(["--sync", "--wit"])
            .arg(sdk.join("wit"))
            .args(["-n", "guest", "--js"])
            .arg(&bundle)
            .arg("-o")
            .arg(out)
            .current_dir(dir),
        NPM_HINT,
    )?;
    Ok(wrote)
}

/// `npm install` when `node_modules` is missing or older than `package.json`.
fn install(dir: &Path, tc: &mut Toolchain<'_>) -> Result<(), ProjectError> {
    let installed = dir.join("node_modules/.package-lock.json");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = match (modified(&installed), modified(&dir.join("package.json"))) {
        (Some(i), Some(p)) => i >= p,
        _ => false,
    };
    if fresh {
        return Ok(());
    }
    tc.run(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund"])
            .current_dir(dir),
        NPM_HINT,
    )
}

/// The JSON Schema of the task's exported `Input` type, when it has one.
fn schema(
    dir: &Path,
    source: &str,
    schema_out: &Path,
    tc: &mut Toolchain<'_>,
) -> Result<bool, ProjectError> {
    let text =
        std::fs::read_to_string(dir.join(source)).map_err(ProjectError::io(dir.join(source)))?;
    let exported = text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("export interface Input") || l.starts_with("export type Input")
    });
    if !exported {
        tc.note(&format!(
            "no input schema: {source} exports no `Input` type (`export interface Input {{ … }}`)"
        ));
        return Ok(false);
    }
    let generator = dir.join("node_modules/.bin/ts-json-schema-generator");
    if !generator.exists() {
        tc.note("no input schema: ts-json-schema-generator is not installed (`npm install --save-dev ts-json-schema-generator`)");
        return Ok(false);
    }
    tc.quiet(
        Command::new(generator)
            .args([
                "--path",
                source,
                "--type",
                "Input",
                "--no-top-ref",
                "--no-type-check",
            ])
            .args(
                dir.join("tsconfig.json")
                    .is_file()
                    .then_some(["--tsconfig", "tsconfig.json"])
                    .into_iter()
                    .flatten(),
            )
            .arg("--out")
            .arg(schema_out)
            .current_dir(dir),
        NPM_HINT,
    )?;
    Ok(schema_out.is_file())
}
