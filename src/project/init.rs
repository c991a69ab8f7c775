//! `taskbox init`: a new task project from a language's template, with the guest SDK vendored
//! so that it builds with nothing but the language's toolchain and its package registry.

use super::embedded::{self, File};
use super::{js, python, Language, ProjectError};
use std::path::{Path, PathBuf};

/// What `init` wrote.
#[derive(Debug)]
pub struct Created {
    /// The project's name: its crate or package name, and the task name its README pushes.
    pub name: String,
    /// Every file written, relative to the project's directory.
    pub files: Vec<PathBuf>,
}

/// Writes a new `language` project into `dir`, which must be missing or empty.
pub fn init(language: Language, dir: &Path) -> Result<Created, ProjectError> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(ProjectError::io(dir))?;
        if entries.next().is_some() {
            return Err(ProjectError::NotEmpty(dir.to_owned()));
        }
    }
    let name = project_name(dir);
    let (template, sdk, vendor): (&[File], &[File], &str) = match language {
        Language::Rust => (
            embedded::RUST_TEMPLATE,
            embedded::RUST_SDK,
            "vendor/taskbox-sdk",
        ),
        Language::Js => (embedded::JS_TEMPLATE, embedded::JS_SDK, js::SDK),
        Language::Ts => (embedded::TS_TEMPLATE, embedded::JS_SDK, js::SDK),
        Language::Python => (embedded::PYTHON_TEMPLATE, embedded::PYTHON_SDK, python::SDK),
        Language::Go => (
            embedded::GO_TEMPLATE,
            embedded::GO_SDK,
            "third_party/taskbox-sdk",
        ),
    };
    let mut files = Vec::new();
    for (path, text) in template {
        let to = PathBuf::from(target_name(path));
        write(dir, &to, &text.replace("{{name}}", &name))?;
        files.push(to);
    }
    for (path, text) in sdk {
        let to = Path::new(vendor).join(path);
        write(dir, &to, text)?;
        files.push(to);
    }
    Ok(Created { name, files })
}

fn write(dir: &Path, rel: &Path, text: &str) -> Result<(), ProjectError> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(ProjectError::io(parent))?;
    }
    std::fs::write(&path, text).map_err(ProjectError::io(&path))
}

/// A template file's name in the project: templates keep dotfiles and manifests under names
/// no tool mistakes for their own.
fn target_name(path: &str) -> String {
    let path = path.strip_suffix(".tmpl").unwrap_or(path);
    match path.rsplit_once('/') {
        Some((dir, "gitignore")) => format!("{dir}/.gitignore"),
        None if path == "gitignore" => ".gitignore".into(),
        _ => path.into(),
    }
}

/// The directory's name as a name every language and the server accept: lowercase letters,
/// digits, `-` and `_`, starting with a letter, at most 64; `task` if nothing is left.
pub(crate) fn project_name(dir: &Path) -> String {
    let raw = dir
        .canonicalize()
        .ok()
        .as_deref()
        .or(Some(dir))
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let kept: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let name = kept
        .trim_start_matches(|c: char| !c.is_ascii_lowercase())
        .trim_end_matches('-');
    let name: String = name.chars().take(64).collect();
    if name.is_empty() {
        "task".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_name_becomes_a_name_every_tool_takes() {
        for (dir, want) in [
            ("/x/hello", "hello"),
            ("/x/Hello World", "hello-world"),
            ("/x/2fast_task", "fast_task"),
            ("/x/ünï", "n"),
            ("/x/---", "task"),
            ("/x/a\"b", "a-b"),
        ] {
            assert_eq!(project_name(Path::new(dir)), want, "{dir}");
            assert!(
                crate::registry::spec::check_name("task", want).is_ok(),
                "{want}"
            );
        }
        assert_eq!(project_name(Path::new(&"x".repeat(100))).len(), 64);
    }

    #[test]
    fn templates_name_their_files_for_the_project() {
        assert_eq!(target_name("Cargo.toml.tmpl"), "Cargo.toml");
        assert_eq!(target_name("gitignore"), ".gitignore");
        assert_eq!(target_name("src/lib.rs"), "src/lib.rs");
    }

    #[test]
    fn a_new_project_is_written_and_a_non_empty_directory_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("My Task");
        let created = init(Language::Rust, &dir).unwrap();
        assert_eq!(created.name, "my-task");
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"my-task\""), "{manifest}");
        assert!(dir.join(".gitignore").is_file());
        assert!(dir.join("vendor/taskbox-sdk/wit/task/task.wit").is_file());
        assert!(created.files.contains(&PathBuf::from("src/lib.rs")));

        let again = init(Language::Rust, &dir).unwrap_err();
        assert!(matches!(again, ProjectError::NotEmpty(_)), "{again}");
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(init(Language::Rust, &file).is_err());
    }
}
