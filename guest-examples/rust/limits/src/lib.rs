//! limits: one guest that uses as much of one resource as its input asks, for pairs of tests
//! where a limit is obeyed (a small amount) and violated (a large one). Input `{"op": ..., ...}`:
//!
//! - `{"op":"spin","iterations":n}`: a CPU loop of n iterations → `done({"result": <u64>})`
//! - `{"op":"alloc","mb":n}`: n MiB in 1 MiB chunks, every 4 KiB page written, kept until the
//!   end → `done({"allocated_mb": n})`
//! - `{"op":"recurse","depth":n}`: non-tail recursion n deep on the WebAssembly native stack
//!   (nothing on the shadow stack in linear memory) → `done({"depth": n})`
//! - `{"op":"output","bytes":n}`: output is a JSON string of n 'x' (n+2 bytes of text)
//! - `{"op":"log","lines":n}`: n host `log(info, "line i")` calls, i from 1 → `done({"lines": n})`
//! - `{"op":"blank","lines":n}`: n host `log(info, "")` calls and n empty lines (`\n`) on stdout,
//!   the cheapest flood of the log there is → `done({"lines": n})`
//! - `{"op":"stdout","bytes":n}`: n bytes to stdout, in 80-byte lines → `done({"bytes": n})`
//! - `{"op":"sleep","ms":n}`: blocks n ms inside a WASI host call → `done({"slept_ms": n})`
//! - `{"op":"nap","ms":n,"slice_ms":s}`: sleeps s ms at a time (`std::thread::sleep`) until its
//!   monotonic clock says n ms have passed, as a poll with a back-off does → `done({"slices",
//!   "elapsed_ns"})`
//! - `{"op":"fail","code":c,"retryable":b}`: `err(failure{code: c, message: "asked to fail", retryable: b})`
//! - `{"op":"snooze","ms":n}` → `ok(snooze(n))`; `{"op":"wait","for":v}` → `ok(wait(<json of v>))`
//! - `{"op":"echo","value":v}` → `done(<json of v>)`; `{"op":"raw","text":s}` → `done(s)` verbatim
//! - `{"op":"nonce"}` → `done({"nonce": "<a random u64, new each run>"})`
//! - `{"op":"clock","iterations":n}`: reads the wall clock, spins n rounds, reads the
//!   monotonic clock's elapsed time and a random u64 → `done({"wall_ns", "elapsed_ns",
//!   "random", "result"})` (the same every run only where the host makes the task deterministic);
//!   with `"fail": true` the same object is the message of a retryable failure `clock`
//! - anything else → `err(failure{code: "bad_input", retryable: false})`

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

use serde::Deserialize;
use serde_json::{json, Value};
use std::hint::black_box;
use std::io::Write;
use taskbox::task::host::{self, Level};

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Op {
    Spin { iterations: u64 },
    Alloc { mb: u64 },
    Recurse { depth: u64 },
    Output { bytes: u64 },
    Log { lines: u64 },
    Blank { lines: u64 },
    Stdout { bytes: u64 },
    Sleep { ms: u64 },
    Nap { ms: u64, slice_ms: u64 },
    Fail { code: String, #[serde(default)] retryable: bool },
    Snooze { ms: u64 },
    Wait { #[serde(rename = "for")] what: Value },
    Echo { value: Value },
    Raw { text: String },
    Nonce,
    Clock { iterations: u64, #[serde(default)] fail: bool },
}

const MIB: usize = 1 << 20;
const PAGE: usize = 4096;

fn bad_input(message: impl Into<String>) -> Failure {
    Failure { code: "bad_input".into(), message: message.into(), retryable: false }
}

fn done(value: Value) -> Result<Outcome, Failure> {
    Ok(Outcome::Done(value.to_string()))
}

fn spin(iterations: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..iterations {
        // xorshift step; black_box keeps the loop from being folded away.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x.wrapping_add(i));
    }
    x
}

fn alloc(mb: u64) -> usize {
    let mut chunks: Vec<Vec<u8>> = Vec::with_capacity(mb as usize);
    for _ in 0..mb {
        let mut chunk: Vec<u8> = Vec::with_capacity(MIB);
        // SAFETY: u8 has no invalid values; each page is written below before any read.
        unsafe { chunk.set_len(MIB) };
        for page in (0..MIB).step_by(PAGE) {
            chunk[page] = 1;
        }
        chunks.push(black_box(chunk));
    }
    let chunks = black_box(chunks);
    chunks.len()
}

/// Called only through this pointer: LLVM can neither inline the recursion nor turn it into
/// a loop, and no local has its address taken, so every level is a frame on the WebAssembly
/// native stack only (`std::hint::black_box` would spill its value to the shadow stack).
static RECURSE: fn(u64) -> u64 = recurse;

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    if depth == 0 {
        return 0;
    }
    // SAFETY: reading an initialized static; volatile so the call target stays opaque.
    let next = unsafe { std::ptr::read_volatile(&RECURSE) };
    next(depth - 1) + 1
}

fn output(bytes: u64) -> String {
    let n = bytes as usize;
    let mut text = Vec::with_capacity(n + 2);
    text.push(b'"');
    text.resize(n + 1, b'x');
    text.push(b'"');
    debug_assert_eq!(text.capacity(), n + 2);
    // SAFETY: only ASCII was written.
    unsafe { String::from_utf8_unchecked(text) }
}

fn stdout(bytes: u64) -> std::io::Result<()> {
    let line = [b'x'; 80];
    let mut out = std::io::stdout().lock();
    let mut left = bytes as usize;
    while left > 0 {
        let n = left.min(80);
        out.write_all(&line[..n - 1])?;
        out.write_all(b"\n")?;
        left -= n;
    }
    out.flush()
}

fn run(op: Op) -> Result<Outcome, Failure> {
    match op {
        Op::Spin { iterations } => done(json!({ "result": spin(iterations) })),
        // A new random number each run (WASI random), so a test can tell
        // a run from a replay of its recorded result.
        Op::Nonce => {
            use std::hash::BuildHasher;
            let n = std::collections::hash_map::RandomState::new().hash_one(0u8);
            done(json!({ "nonce": n.to_string() }))
        }
        Op::Clock { iterations, fail } => {
            use std::hash::BuildHasher;
            use std::time::{Instant, SystemTime, UNIX_EPOCH};
            let wall = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let began = Instant::now();
            let result = spin(iterations);
            let elapsed = began.elapsed().as_nanos() as u64;
            let random = std::collections::hash_map::RandomState::new().hash_one(0u8);
            let read = json!({
                "wall_ns": wall.to_string(),
                "elapsed_ns": elapsed.to_string(),
                "random": random.to_string(),
                "result": result,
            });
            if fail {
                return Err(Failure { code: "clock".into(), message: read.to_string(), retryable: true });
            }
            done(read)
        }
        Op::Alloc { mb } => {
            alloc(mb);
            done(json!({ "allocated_mb": mb }))
        }
        Op::Recurse { depth } => {
            let reached = recurse(depth);
            done(json!({ "depth": reached }))
        }
        Op::Output { bytes } => Ok(Outcome::Done(output(bytes))),
        Op::Log { lines } => {
            for i in 1..=lines {
                host::log(Level::Info, &format!("line {i}"));
            }
            done(json!({ "lines": lines }))
        }
        Op::Blank { lines } => {
            let mut out = std::io::stdout().lock();
            for _ in 0..lines {
                host::log(Level::Info, "");
                // Unbuffered on wasm: each newline is its own write to the host.
                let _ = out.write_all(b"\n");
            }
            let _ = out.flush();
            done(json!({ "lines": lines }))
        }
        Op::Stdout { bytes } => {
            stdout(bytes).map_err(|e| Failure {
                code: "stdout_failed".into(),
                message: e.to_string(),
                retryable: false,
            })?;
            done(json!({ "bytes": bytes }))
        }
        Op::Sleep { ms } => {
            std::thread::sleep(std::time::Duration::from_millis(ms));
            done(json!({ "slept_ms": ms }))
        }
        Op::Nap { ms, slice_ms } => {
            let began = std::time::Instant::now();
            let until = std::time::Duration::from_millis(ms);
            let mut slices: u64 = 0;
            while began.elapsed() < until {
                std::thread::sleep(std::time::Duration::from_millis(slice_ms));
                slices += 1;
            }
            let elapsed = began.elapsed().as_nanos() as u64;
            done(json!({ "slices": slices, "elapsed_ns": elapsed.to_string() }))
        }
        Op::Fail { code, retryable } => Err(Failure { code, message: "asked to fail".into(), retryable }),
        Op::Snooze { ms } => Ok(Outcome::Snooze(ms)),
        Op::Wait { what } => Ok(Outcome::Wait(what.to_string())),
        Op::Echo { value } => done(value),
        Op::Raw { text } => Ok(Outcome::Done(text)),
    }
}

struct Limits;

impl Guest for Limits {
    fn run(_job: Job, input: String) -> Result<Outcome, Failure> {
        let op: Op = serde_json::from_str(&input).map_err(|e| bad_input(format!("unknown or malformed op: {e}")))?;
        run(op)
    }
}

export!(Limits);
