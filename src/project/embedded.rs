//! The files `taskbox init` writes, compiled into the binary: each language's template and
//! the guest SDK it vendors. Listed by name (not a directory walk) so that a build tree left
//! in `sdk/` is never embedded; a test checks the lists against the directories.

/// A file to write: its path in the project, and its text.
pub type File = (&'static str, &'static str);

macro_rules! files {
    ($root:literal: $($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $root, "/", $path)))),*]
    };
}

/// The Rust template; `{{name}}` is the project's name.
pub const RUST_TEMPLATE: &[File] = files!("templates/rust":
    "Cargo.toml.tmpl",
    "README.md",
    "example.json",
    "gitignore",
    "src/lib.rs",
);

/// The Rust guest SDK (`sdk/rust`), vendored as `vendor/taskbox-sdk`.
pub const RUST_SDK: &[File] = files!("sdk/rust":
    "Cargo.toml",
    "LICENSE",
    "README.md",
    "src/bindings.rs",
    "src/ctx.rs",
    "src/failure.rs",
    "src/http.rs",
    "src/lib.rs",
    "src/outcome.rs",
    "src/rt.rs",
    "src/span.rs",
    "wit/guest/deps/config/store.wit",
    "wit/guest/deps/config/world.wit",
    "wit/guest/guest.wit",
    "wit/task/task.wit",
);

/// The JavaScript template; `{{name}}` is the project's name.
pub const JS_TEMPLATE: &[File] = files!("templates/js":
    "README.md",
    "example.json",
    "gitignore",
    "package.json.tmpl",
    "src/task.js",
    "src/task.test.js",
);

/// The TypeScript template; `{{name}}` is the project's name.
pub const TS_TEMPLATE: &[File] = files!("templates/ts":
    "README.md",
    "example.json",
    "gitignore",
    "package.json.tmpl",
    "src/task.test.ts",
    "src/task.ts",
    "tsconfig.json",
);

/// The JavaScript and TypeScript guest SDK (`sdk/js`, npm package `@taskbox/sdk`), vendored
/// as `third_party/taskbox-sdk`.
pub const JS_SDK: &[File] = files!("sdk/js":
    "LICENSE",
    "README.md",
    "package.json",
    "src/component.js",
    "src/fetch.js",
    "src/globals.js",
    "src/index.d.ts",
    "src/index.js",
    "src/queued-promise.js",
    "src/utf8.js",
    "test/fetch.test.js",
    "test/sdk.test.js",
    "wit/deps/config/store.wit",
    "wit/deps/config/world.wit",
    "wit/deps/task/task.wit",
    "wit/guest.wit",
);

/// The Python template; `{{name}}` is the project's name.
pub const PYTHON_TEMPLATE: &[File] = files!("templates/python":
    "README.md",
    "app.py",
    "example.json",
    "gitignore",
    "test_app.py",
);

/// The Python guest SDK (`sdk/python`, package `taskbox-sdk`, module `taskbox`), vendored as
/// `third_party/taskbox-sdk`.
pub const PYTHON_SDK: &[File] = files!("sdk/python":
    "LICENSE",
    "README.md",
    "pyproject.toml",
    "src/taskbox/__init__.py",
    "src/taskbox/_convert.py",
    "src/taskbox/_ctx.py",
    "src/taskbox/_outcome.py",
    "src/taskbox/_schema.py",
    "src/taskbox/_task.py",
    "src/taskbox/_world.py",
    "src/taskbox_entry.py",
    "tests/test_taskbox.py",
    "wit/guest/deps/config/store.wit",
    "wit/guest/deps/config/world.wit",
    "wit/guest/guest.wit",
    "wit/task/task.wit",
);

/// The Go template; `{{name}}` is the project's name (its module path too).
pub const GO_TEMPLATE: &[File] = files!("templates/go":
    "README.md",
    "example.json",
    "gitignore",
    "go.mod.tmpl",
    "main.go",
    "main_test.go",
);

/// The Go guest SDK (`sdk/go`, module `taskbox/sdk`), vendored as `third_party/taskbox-sdk`
/// (not `vendor/`, which the go command keeps for its own vendoring).
pub const GO_SDK: &[File] = files!("sdk/go":
    "LICENSE",
    "README.md",
    "go.mod",
    "taskbox.go",
    "taskbox_test.go",
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every file under `root`, relative to it, but for build trees and lock files.
    fn on_disk(root: &str) -> Vec<String> {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join(root);
        let mut found = Vec::new();
        let mut todo = vec![base.clone()];
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if matches!(
                    name.as_str(),
                    "target"
                        | "Cargo.lock"
                        | "dist"
                        | "__pycache__"
                        | "node_modules"
                        | ".ruff_cache"
                ) {
                    continue;
                }
                if path.is_dir() {
                    todo.push(path);
                } else {
                    found.push(
                        path.strip_prefix(&base)
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
        found.sort();
        found
    }

    fn listed(files: &[File]) -> Vec<String> {
        files.iter().map(|(p, _)| (*p).to_owned()).collect()
    }

    #[test]
    fn every_file_of_the_templates_and_sdks_is_embedded() {
        assert_eq!(listed(RUST_TEMPLATE), on_disk("templates/rust"));
        assert_eq!(listed(RUST_SDK), on_disk("sdk/rust"));
        assert_eq!(listed(JS_TEMPLATE), on_disk("templates/js"));
        assert_eq!(listed(TS_TEMPLATE), on_disk("templates/ts"));
        assert_eq!(listed(JS_SDK), on_disk("sdk/js"));
        assert_eq!(listed(PYTHON_TEMPLATE), on_disk("templates/python"));
        assert_eq!(listed(PYTHON_SDK), on_disk("sdk/python"));
        assert_eq!(listed(GO_TEMPLATE), on_disk("templates/go"));
        assert_eq!(listed(GO_SDK), on_disk("sdk/go"));
    }

    #[test]
    fn the_sdks_world_is_the_servers() {
        let file = |files: &[File], wit: &str| files.iter().find(|(p, _)| *p == wit).unwrap().1;
        assert_eq!(
            file(RUST_SDK, "wit/task/task.wit"),
            include_str!("../../wit/task.wit"),
            "copy wit/task.wit to sdk/rust/wit/task/"
        );
        for wit in [
            "wit/task/task.wit",
            "wit/guest/guest.wit",
            "wit/guest/deps/config/store.wit",
            "wit/guest/deps/config/world.wit",
        ] {
            assert_eq!(
                file(PYTHON_SDK, wit),
                file(RUST_SDK, wit),
                "sdk/python/{wit} is not sdk/rust/{wit}"
            );
        }
        // componentize-qjs takes one WIT directory: the same files, laid out with deps/.
        for (js, rust) in [
            ("wit/deps/task/task.wit", "wit/task/task.wit"),
            ("wit/guest.wit", "wit/guest/guest.wit"),
            (
                "wit/deps/config/store.wit",
                "wit/guest/deps/config/store.wit",
            ),
            (
                "wit/deps/config/world.wit",
                "wit/guest/deps/config/world.wit",
            ),
        ] {
            assert_eq!(
                file(JS_SDK, js),
                file(RUST_SDK, rust),
                "sdk/js/{js} is not sdk/rust/{rust}"
            );
        }
    }
}
