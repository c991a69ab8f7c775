//! Runs a language's own tools for a build, saying each command before it runs. Their
//! progress goes to stderr; stdout stays the caller's (for `--json`).

use super::ProjectError;
use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// What a build tells the person waiting for it.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// A command about to run, as it could be typed.
    Run(&'a str),
    /// Something worth knowing that is not a command.
    Note(&'a str),
}

/// The tools of one build, and whom to tell.
pub(crate) struct Toolchain<'r> {
    report: &'r mut dyn FnMut(Step<'_>),
}

impl<'r> Toolchain<'r> {
    pub fn new(report: &'r mut dyn FnMut(Step<'_>)) -> Self {
        Toolchain { report }
    }

    pub fn note(&mut self, text: &str) {
        (self.report)(Step::Note(text));
    }

    /// Runs `cmd` with its stdout and stderr on our stderr.
    pub fn run(&mut self, cmd: &mut Command, hint: &'static str) -> Result<(), ProjectError> {
        let stdout = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(ProjectError::io("stderr"))?;
        cmd.stdout(Stdio::from(stdout)).stderr(Stdio::inherit());
        let out = self.spawn(cmd, hint)?;
        check(cmd, &out, "")
    }

    /// Runs `cmd` for its stdout, which is returned; its stderr goes to ours.
    pub fn stdout(
        &mut self,
        cmd: &mut Command,
        hint: &'static str,
    ) -> Result<Vec<u8>, ProjectError> {
        cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
        let out = self.spawn(cmd, hint)?;
        check(cmd, &out, "")?;
        Ok(out.stdout)
    }

    /// Runs `cmd` quietly; what it printed is shown only if it fails.
    pub fn quiet(
        &mut self,
        cmd: &mut Command,
        hint: &'static str,
    ) -> Result<Vec<u8>, ProjectError> {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let out = self.spawn(cmd, hint)?;
        let mut printed = String::from_utf8_lossy(&out.stdout).into_owned();
        printed.push_str(&String::from_utf8_lossy(&out.stderr));
        check(cmd, &out, printed.trim())?;
        Ok(out.stdout)
    }

    /// Whether `program` runs at all (`program --version`), without a word to the user.
    pub fn exists(program: &str) -> bool {
        Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn spawn(&mut self, cmd: &mut Command, hint: &'static str) -> Result<Output, ProjectError> {
        let line = shown(cmd);
        (self.report)(Step::Run(&line));
        cmd.stdin(Stdio::null())
            .output()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => ProjectError::Missing {
                    program: cmd.get_program().to_string_lossy().into_owned(),
                    hint,
                },
                _ => ProjectError::Failed {
                    command: line,
                    status: "did not start".into(),
                    detail: format!(": {e}"),
                },
            })
    }
}

fn check(cmd: &Command, out: &Output, printed: &str) -> Result<(), ProjectError> {
    if out.status.success() {
        return Ok(());
    }
    let tail: Vec<&str> = printed.lines().rev().take(40).collect();
    let detail = if tail.is_empty() {
        String::new()
    } else {
        format!(
            ":\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )
    };
    Err(ProjectError::Failed {
        command: shown(cmd),
        status: out.status.to_string(),
        detail,
    })
}

/// The command as it could be typed: the environment it was given, then the program and
/// its arguments, each quoted if it needs to be.
fn shown(cmd: &Command) -> String {
    let env = cmd
        .get_envs()
        .filter_map(|(k, v)| v.map(|v| format!("{}={}", k.to_string_lossy(), quote(v))));
    let words = std::iter::once(quote(cmd.get_program())).chain(cmd.get_args().map(quote));
    let mut line: Vec<String> = env.chain(words).collect();
    if let Some(dir) = cmd.get_current_dir() {
        line.insert(0, format!("(in {})", dir.display()));
    }
    line.join(" ")
}

/// `word` as one shell word: as it is when it needs no quotes, else in single quotes.
pub fn quote(word: &OsStr) -> String {
    let w = word.to_string_lossy();
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@,+".contains(&b));
    if plain {
        w.into_owned()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// taskbox's directory in the user's cache (`$XDG_CACHE_HOME/taskbox`, else
/// `~/.cache/taskbox`): compiled artifacts, installed toolchains.
pub fn user_cache_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))?;
    Some(base.join("taskbox"))
}

/// A virtualenv of taskbox's own in the user's cache, `toolchains/NAME`, holding `packages`
/// (each pinned, `name==version`) from PyPI: made on first use, and made again when it holds
/// other versions. Builds running at once wait for one another here. Needs `python3`.
pub(crate) fn pypi_venv(
    tc: &mut Toolchain<'_>,
    name: &str,
    packages: &[&str],
    hint: &'static str,
) -> Result<PathBuf, ProjectError> {
    let toolchains = user_cache_dir()
        .ok_or(ProjectError::Missing {
            program: "a cache directory (HOME or XDG_CACHE_HOME)".into(),
            hint,
        })?
        .join("toolchains");
    std::fs::create_dir_all(&toolchains).map_err(ProjectError::io(&toolchains))?;
    let lock_path = toolchains.join(format!("{name}.lock"));
    let lock = std::fs::File::create(&lock_path).map_err(ProjectError::io(&lock_path))?;
    lock.lock().map_err(ProjectError::io(&lock_path))?;
    let venv = toolchains.join(name);
    let stamp = venv.join(".taskbox-pinned");
    let want = packages.join(" ");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == want) {
        return Ok(venv);
    }
    tc.note(&format!(
        "installing {want} from PyPI into {}",
        venv.display()
    ));
    tc.run(
        Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
        hint,
    )?;
    tc.run(
        Command::new(venv.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(packages),
        hint,
    )?;
    std::fs::write(&stamp, want).map_err(ProjectError::io(&stamp))?;
    Ok(venv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_shown_as_it_could_be_typed() {
        let mut cmd = Command::new("cargo");
        cmd.args(["build", "--target", "wasm32-wasip2", "a b", "it's"])
            .env("X", "1");
        assert_eq!(
            shown(&cmd),
            r"X=1 cargo build --target wasm32-wasip2 'a b' 'it'\''s'"
        );
    }

    #[test]
    fn a_missing_program_says_so_and_how_to_get_it() {
        let mut steps = Vec::new();
        let mut report = |s: Step<'_>| steps.push(format!("{s:?}"));
        let mut tc = Toolchain::new(&mut report);
        let err = tc
            .quiet(&mut Command::new("taskbox-no-such-tool"), "install it")
            .unwrap_err();
        assert!(matches!(err, ProjectError::Missing { .. }), "{err}");
        assert!(err.to_string().contains("install it"), "{err}");
    }

    #[test]
    fn a_failing_command_shows_what_it_printed() {
        let mut report = |_: Step<'_>| {};
        let mut tc = Toolchain::new(&mut report);
        let err = tc
            .quiet(
                Command::new("sh").args(["-c", "echo broken >&2; exit 3"]),
                "",
            )
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("broken") && text.contains('3'), "{text}");
    }
}
