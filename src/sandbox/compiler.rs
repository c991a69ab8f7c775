//! Compiling a tenant's guest with a bound that holds: in a child process
//! of this binary (`taskbox __compile`), which lowers its own priority,
//! holds itself to a memory limit (its address space) and a CPU limit,
//! dies with its parent, and is killed at the wall-clock limit. wasmtime
//! cannot stop a compile it has begun, so a compile in a thread of ours
//! would run on past any timeout; a process can be killed.
//!
//! The child reads the bytes on stdin and writes the serialized artifact
//! on stdout, or a reason on stderr; it builds an engine with the same
//! compilation settings as the server's (`engine::build_for_compiling`),
//! so the artifact loads in the server's engine, which checks that it
//! does.

use super::engine;
use super::inspect::Invalid;
use super::Metering;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Longest a compile may take, unless the server says
/// (`--compile-timeout-ms`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Most memory a compile may use, in MiB (`--compile-max-memory-mb`): a
/// 12 MB JavaScript component used 460 MB, and failed within 600 MiB of
/// address space.
pub const DEFAULT_MAX_MEMORY_MB: u64 = 2048;
/// Compiles at once, each of another tenant (`--compile-slots`).
pub const DEFAULT_SLOTS: usize = 2;
/// The child's exit status when the bytes do not compile (its reason on
/// stderr).
const EXIT_REFUSED: u8 = 3;
/// Most of a child's stderr kept for its reason.
const MAX_REASON_BYTES: u64 = 16 * 1024;

/// Where compiles run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Compiler {
    /// In a thread of this process: for callers whose bytes are their own
    /// (`taskbox run`, the sandbox's tests). Its timeout ends the wait,
    /// not the compile.
    #[default]
    InProcess,
    /// In a child process: the server's way, for tenants' bytes.
    Child {
        /// This binary (`taskbox`), which has the `__compile` command.
        exe: PathBuf,
        max_memory_mb: u64,
    },
}

/// What the child is asked to compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    Component,
    Module,
}

/// The child's arguments, as `taskbox __compile` takes them.
#[derive(Debug, clap::Args)]
pub struct ChildArgs {
    #[arg(long, value_enum)]
    pub kind: Kind,
    /// 0 fuel and epochs, 1 epochs only, 2 neither (`Metering`).
    #[arg(long)]
    pub metering: u8,
    #[arg(long)]
    pub max_memory_mb: u64,
    #[arg(long)]
    pub cpu_seconds: u64,
    /// Most bytes read from stdin.
    #[arg(long)]
    pub max_bytes: u64,
}

fn metering_code(m: Metering) -> u8 {
    match m {
        Metering::FuelAndEpoch => 0,
        Metering::EpochOnly => 1,
        Metering::Unmetered => 2,
    }
}

fn metering_of(code: u8) -> Metering {
    match code {
        1 => Metering::EpochOnly,
        2 => Metering::Unmetered,
        _ => Metering::FuelAndEpoch,
    }
}

/// Compiles `bytes` in a child of `exe`, within `timeout`: the serialized
/// artifact, or why not. The child is killed at the timeout, and when
/// this future is dropped.
pub async fn compile_in_child(
    exe: &std::path::Path,
    max_memory_mb: u64,
    kind: Kind,
    metering: Metering,
    bytes: &[u8],
    timeout: Duration,
) -> Result<Vec<u8>, Invalid> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg("__compile")
        .arg("--kind")
        .arg(match kind {
            Kind::Component => "component",
            Kind::Module => "module",
        })
        .arg("--metering")
        .arg(metering_code(metering).to_string())
        .arg("--max-memory-mb")
        .arg(max_memory_mb.to_string())
        // Every thread's CPU counts: the wall-clock limit on each core,
        // and a second more; the parent kills it at the wall-clock limit
        // first, this holds if the parent is gone.
        .arg("--cpu-seconds")
        .arg((timeout.as_secs().max(1) * cores + 1).to_string())
        .arg("--max-bytes")
        .arg(bytes.len().to_string())
        // Nothing of the server's environment (its TASKBOX_* settings,
        // secrets in variables) reaches the child.
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        Invalid::Busy(format!(
            "cannot start the compiler ({}): {e}",
            exe.display()
        ))
    })?;
    let (Some(mut stdin), Some(mut stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(Invalid::Busy("the compiler's pipes were not made".into()));
    };
    let input = bytes.to_vec();
    let feed = async move {
        // The child reads it all before it writes: a write error means it
        // died, which its exit status says better.
        let _ = stdin.write_all(&input).await;
        drop(stdin);
    };
    let mut artifact = Vec::new();
    let mut reason = Vec::new();
    let mut stderr = stderr.take(MAX_REASON_BYTES);
    let run = async {
        let (_, out, err, status) = tokio::join!(
            feed,
            stdout.read_to_end(&mut artifact),
            stderr.read_to_end(&mut reason),
            child.wait()
        );
        out.and(err).and(status)
    };
    let status = match tokio::time::timeout(timeout, run).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(Invalid::Busy(format!("the compiler failed: {e}"))),
        Err(_) => {
            let _ = child.kill().await;
            return Err(Invalid::Compile(format!(
                "compiling took longer than {} s and was stopped; the component is too large or \
                 too complex",
                timeout.as_secs()
            )));
        }
    };
    let said = String::from_utf8_lossy(&reason).trim().to_owned();
    match status.code() {
        Some(0) => Ok(artifact),
        Some(c) if c == i32::from(EXIT_REFUSED) => Err(Invalid::Compile(said)),
        _ => Err(Invalid::Compile(format!(
            "compiling stopped past its limits ({max_memory_mb} MiB of memory, {} s): the \
             component is too large or too complex{}",
            timeout.as_secs(),
            if said.is_empty() {
                String::new()
            } else {
                format!(" ({})", crate::text::bounded(&said, 300))
            }
        ))),
    }
}

/// `taskbox __compile`: the child's side. Limits itself first, then reads,
/// compiles and writes.
pub fn child_main(args: ChildArgs) -> ExitCode {
    limit_this_process(args.max_memory_mb, args.cpu_seconds);
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin()
        .take(args.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
    {
        eprintln!("cannot read the component: {e}");
        return ExitCode::from(EXIT_REFUSED);
    }
    if bytes.len() as u64 > args.max_bytes {
        eprintln!("the component is larger than {} bytes", args.max_bytes);
        return ExitCode::from(EXIT_REFUSED);
    }
    let engine = match engine::build_for_compiling(metering_of(args.metering)) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("cannot configure the WebAssembly engine: {e:#}");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    let artifact = match args.kind {
        Kind::Component => {
            wasmtime::component::Component::new(&engine, &bytes).and_then(|c| c.serialize())
        }
        Kind::Module => wasmtime::Module::new(&engine, &bytes).and_then(|m| m.serialize()),
    };
    match artifact {
        Ok(a) => {
            let mut out = std::io::stdout().lock();
            if out.write_all(&a).and_then(|()| out.flush()).is_err() {
                return ExitCode::from(EXIT_REFUSED);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e:#}");
            ExitCode::from(EXIT_REFUSED)
        }
    }
}

/// The child's own limits: its address space, its CPU time, no core
/// file, a guest's priority, and death with its parent.
fn limit_this_process(max_memory_mb: u64, cpu_seconds: u64) {
    crate::priority::lower_this_thread();
    #[cfg(target_os = "linux")]
    {
        let set = |resource, value: u64| {
            let limit = libc::rlimit {
                rlim_cur: value as libc::rlim_t,
                rlim_max: value as libc::rlim_t,
            };
            // SAFETY: setrlimit reads the struct we pass and nothing else.
            unsafe { libc::setrlimit(resource, &limit) };
        };
        set(libc::RLIMIT_AS, max_memory_mb.saturating_mul(1 << 20));
        set(libc::RLIMIT_CPU, cpu_seconds);
        set(libc::RLIMIT_CORE, 0);
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number only.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (max_memory_mb, cpu_seconds);
}
