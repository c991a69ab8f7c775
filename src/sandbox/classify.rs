//! Maps every way an attempt can end to one outcome: the guest's own result,
//! or one error kind of the contract. No guest behaviour reaches a panic here.
//! Whatever text of the guest's is kept is redacted first, then cut or held
//! to its cap.

use super::ending::Ending;
use super::redact::Redactor;
use crate::job::{ErrorKind, JobError};
use crate::text::bounded;
use serde::de::IgnoredAny;
use wasmtime::Trap;
use wasmtime_wasi::I32Exit;

/// Longest guest-chosen failure code kept.
pub const MAX_CODE_BYTES: usize = 128;
/// Longest failure message kept.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// Why the host stopped an attempt: from its epoch callback, or a
/// deterministic attempt's sleep past its timeout (`sleeps.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Interrupted {
    #[error("the attempt ran past its time limit")]
    Timeout,
    #[error("the job was cancelled")]
    Cancelled,
}

/// What the host knew about the attempt when it went wrong.
#[derive(Debug, Clone, Copy)]
pub struct Circumstances {
    pub memory_refused: bool,
    pub memory_limit_bytes: u64,
    pub output_overflowed: bool,
    pub output_cap: usize,
    pub timeout_ms: u64,
    pub fuel: u64,
}

/// `UnreachableCodeReached` → `unreachable_code_reached`.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

pub fn timeout(c: &Circumstances) -> Ending {
    Ending::Failed(JobError::new(
        ErrorKind::Timeout,
        format!("the attempt ran past its time limit of {} ms", c.timeout_ms),
    ))
}

/// A task's `done` or `wait` text, or a command's stdout: redacted, then
/// within the cap and JSON.
pub fn check_output(red: &Redactor, text: String, cap: usize) -> Result<String, JobError> {
    let text = if red.is_empty() {
        text
    } else {
        match red.apply_within(&text, cap) {
            Ok(std::borrow::Cow::Borrowed(_)) => text,
            Ok(std::borrow::Cow::Owned(redacted)) => redacted,
            Err(len) => return Err(too_large(len, cap)),
        }
    };
    if text.len() > cap {
        return Err(too_large(text.len(), cap));
    }
    match serde_json::from_str::<IgnoredAny>(&text) {
        Ok(_) => Ok(text),
        Err(e) => Err(JobError::new(
            ErrorKind::InvalidOutput,
            format!(
                "the output is not JSON: {e}; output starts with {:?}",
                bounded(&text, 80)
            ),
        )),
    }
}

fn too_large(len: usize, cap: usize) -> JobError {
    JobError::new(
        ErrorKind::OutputTooLarge,
        format!("the output is {len} bytes; the cap is {cap} bytes"),
    )
}

/// A failure the guest returned itself: its code and message redacted,
/// then cut.
pub fn guest_failure(red: &Redactor, code: &str, message: &str, retryable: bool) -> Ending {
    Ending::Failed(JobError {
        kind: ErrorKind::TaskFailed,
        code: red.apply_bounded(code, MAX_CODE_BYTES),
        message: red.apply_bounded(message, MAX_MESSAGE_BYTES),
        retryable: Some(retryable),
    })
}

/// What a command writes as the last line of its stderr, before a JSON
/// `{"code", "message"?, "retryable"?}`, to fail as a task world guest does
/// (DESIGN §3.2).
pub const FAILURE_LINE: &str = "taskbox-failure ";

#[derive(serde::Deserialize)]
struct Stated {
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default = "retryable_by_default")]
    retryable: bool,
}

fn retryable_by_default() -> bool {
    true
}

/// The failure a command stated on its last line of stderr, if it did.
fn stated(stderr_tail: &str) -> Option<Stated> {
    let last = stderr_tail.lines().rev().find(|l| !l.trim().is_empty())?;
    let json = last.trim().strip_prefix(FAILURE_LINE)?;
    let stated: Stated = serde_json::from_str(json).ok()?;
    (!stated.code.trim().is_empty()).then_some(stated)
}

/// A command's non-zero exit: the failure it stated on its last line of
/// stderr (`FAILURE_LINE`), or else retryable, `exit:<n>`, the tail of
/// stderr (redacted already, as the log keeps it) as message.
pub fn command_exit(status: i32, stderr_tail: &str) -> Ending {
    if let Some(s) = stated(stderr_tail) {
        return Ending::Failed(JobError {
            kind: ErrorKind::TaskFailed,
            code: bounded(&s.code, MAX_CODE_BYTES),
            message: bounded(&s.message, MAX_MESSAGE_BYTES),
            retryable: Some(s.retryable),
        });
    }
    let message = if stderr_tail.is_empty() {
        format!("the command exited with status {status}")
    } else {
        bounded(stderr_tail, MAX_MESSAGE_BYTES)
    };
    Ending::Failed(JobError {
        kind: ErrorKind::TaskFailed,
        code: format!("exit:{status}"),
        message,
        retryable: Some(true),
    })
}

/// An error raised while the guest ran (or was being instantiated).
/// `Some(exit status)` is returned instead for a WASI `exit`, which is not a failure by itself.
pub fn error(err: &wasmtime::Error, c: &Circumstances, red: &Redactor) -> Result<Ending, i32> {
    if let Some(exit) = err.downcast_ref::<I32Exit>() {
        return Err(exit.0);
    }
    if let Some(i) = err.downcast_ref::<Interrupted>() {
        return Ok(match i {
            Interrupted::Timeout => timeout(c),
            Interrupted::Cancelled => Ending::Cancelled,
        });
    }
    if c.output_overflowed {
        return Ok(Ending::Failed(JobError::new(
            ErrorKind::OutputTooLarge,
            format!(
                "the command wrote more than the output cap of {} bytes to stdout",
                c.output_cap
            ),
        )));
    }
    if let Some(trap) = err.downcast_ref::<Trap>() {
        return Ok(Ending::Failed(trap_error(*trap, c)));
    }
    if is_hostcall_fuel(err) {
        return Ok(Ending::Failed(JobError::new(
            ErrorKind::OutputTooLarge,
            format!(
                "the guest tried to pass more than {} bytes to the host at once (its output or a host call)",
                c.output_cap
            ),
        )));
    }
    if c.memory_refused {
        return Ok(Ending::Failed(memory_limit(c)));
    }
    Ok(Ending::Failed(JobError::with_code(
        ErrorKind::Trap,
        "host_error",
        red.apply_bounded(&format!("{err:#}"), MAX_MESSAGE_BYTES),
    )))
}

fn memory_limit(c: &Circumstances) -> JobError {
    JobError::new(
        ErrorKind::MemoryLimit,
        format!(
            "the guest asked for more than its memory limit of {} MiB",
            c.memory_limit_bytes >> 20
        ),
    )
}

fn trap_error(trap: Trap, c: &Circumstances) -> JobError {
    match trap {
        Trap::OutOfFuel => JobError::new(
            ErrorKind::FuelExhausted,
            format!("the attempt used up its fuel budget of {}", c.fuel),
        ),
        Trap::StackOverflow => JobError::new(
            ErrorKind::StackOverflow,
            "the guest overflowed its WebAssembly call stack (unbounded recursion?)",
        ),
        Trap::Interrupt => JobError::new(ErrorKind::Timeout, "the attempt was interrupted"),
        // Language runtimes abort (usually `unreachable`) when an allocation
        // is refused; the refusal is the cause.
        _ if c.memory_refused => memory_limit(c),
        other => JobError::with_code(
            ErrorKind::Trap,
            snake(&format!("{other:?}")),
            format!("the guest trapped: {other}"),
        ),
    }
}

/// wasmtime refuses to copy more than the store's hostcall fuel between guest
/// and host; its error type is private, so it is recognized by its message.
fn is_hostcall_fuel(err: &wasmtime::Error) -> bool {
    err.chain().any(|e| {
        e.to_string()
            .contains("fuel allocated for hostcalls has been exhausted")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_fails_as_its_last_line_of_stderr_states_or_by_its_status() {
        let failed = |status, tail: &str| match command_exit(status, tail) {
            Ending::Failed(e) => (e.code, e.message, e.retryable),
            other => panic!("{other:?}"),
        };
        let cases: &[(&str, (&str, &str, bool))] = &[
            ("", ("exit:3", "the command exited with status 3", true)),
            ("boom", ("exit:3", "boom", true)),
            (
                "working\ntaskbox-failure {\"code\":\"bad_input\",\"message\":\"no name\",\"retryable\":false}\n",
                ("bad_input", "no name", false),
            ),
            ("taskbox-failure {\"code\":\"busy\"}", ("busy", "", true)),
            // Not the last line, not JSON, no code, or a code of blanks: the status speaks.
            ("taskbox-failure {\"code\":\"x\"}\nafter", ("exit:3", "taskbox-failure {\"code\":\"x\"}\nafter", true)),
            ("taskbox-failure {nope", ("exit:3", "taskbox-failure {nope", true)),
            ("taskbox-failure {\"message\":\"m\"}", ("exit:3", "taskbox-failure {\"message\":\"m\"}", true)),
            ("taskbox-failure {\"code\":\"  \"}", ("exit:3", "taskbox-failure {\"code\":\"  \"}", true)),
        ];
        for (tail, (code, message, retryable)) in cases {
            let got = failed(3, tail);
            assert_eq!(
                got,
                (code.to_string(), message.to_string(), Some(*retryable)),
                "{tail:?}"
            );
        }
        let long = format!("taskbox-failure {{\"code\":\"{}\"}}", "c".repeat(1000));
        // Cut to the cap, as a task world guest's code is, with the mark of the cut.
        assert_eq!(
            failed(1, &long).0,
            bounded(&"c".repeat(1000), MAX_CODE_BYTES)
        );
        assert!(failed(1, &long).0.len() < 1000);
    }

    #[test]
    fn trap_names_are_snake_case() {
        assert_eq!(snake("UnreachableCodeReached"), "unreachable_code_reached");
        assert_eq!(snake("MemoryOutOfBounds"), "memory_out_of_bounds");
    }

    #[test]
    fn output_checks() {
        let none = Redactor::default();
        assert!(check_output(&none, "{\"a\":1}".into(), 100).is_ok());
        assert_eq!(
            check_output(&none, "nope".into(), 100).unwrap_err().kind,
            ErrorKind::InvalidOutput
        );
        assert_eq!(
            check_output(&none, "[1,2,3]".into(), 3).unwrap_err().kind,
            ErrorKind::OutputTooLarge
        );
    }

    /// The cap is the redacted output's: a short secret repeated cannot
    /// make a stored output larger than the cap.
    #[test]
    fn the_output_cap_holds_after_redaction() {
        let red = Redactor::new(&[("K".into(), "abcdefgh".into())]);
        let out = serde_json::to_string(&"abcdefgh".repeat(10)).unwrap();
        assert_eq!(out.len(), 82);
        let e = check_output(&red, out.clone(), 90).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutputTooLarge);
        assert!(e.message.contains("102 bytes"), "{e:?}");
        assert!(check_output(&red, out, 102).is_ok());
    }

    /// What is kept of text that is not JSON is cut after redaction.
    #[test]
    fn a_preview_never_holds_the_start_of_a_secret() {
        let red = Redactor::new(&[("K".into(), "SUPERSECRET".into())]);
        let e = check_output(&red, format!("{}SUPERSECRET", "x".repeat(70)), 1000).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidOutput);
        assert!(!e.message.contains("SUPER"), "{e:?}");
        let Ending::Failed(e) = guest_failure(
            &red,
            "SUPERSECRET",
            &format!("{}SUPERSECRET", "m".repeat(4090)),
            true,
        ) else {
            panic!("not a failure")
        };
        assert!(
            !e.code.contains("SUPER") && !e.message.contains("SUPER"),
            "{e:?}"
        );
    }
}
