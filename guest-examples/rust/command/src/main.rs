//! command: a WASI command under the command ABI, built twice: for wasm32-wasip2
//! (`command-p2.wasm`, a component exporting wasi:cli/run) and for wasm32-wasip1
//! (`command-p1.wasm`, a core module exporting `_start`). It reads stdin to the end as JSON.
//! With `"exit": n` (n ≠ 0) a test should expect stderr `failing with exit n` plus a second
//! line and exit status n (a preview-2 component can only report 0 or 1 through
//! wasi:cli/exit 0.2, so expect "failure" there); otherwise stdout
//! `{"echo": <input>, "args": <number of args>}` and status 0. Invalid JSON: a message on
//! stderr and status 2. With `"clock": n` the output also has `"clock": {"wall_ns",
//! "elapsed_ns", "random"}` (strings): the wall clock, the monotonic time n rounds of work
//! took, and a number drawn from the random source (the same every run only where the host
//! makes the task deterministic).

use serde_json::{json, Value};
use std::io::{Read, Write};

fn main() {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("cannot read stdin: {e}");
        std::process::exit(2);
    }
    let value: Value = match serde_json::from_str(&input) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("stdin is not JSON: {e}");
            std::process::exit(2);
        }
    };
    if let Some(code) = value.get("exit").and_then(Value::as_i64) {
        if code != 0 {
            let code = code as i32;
            eprintln!("failing with exit {code}");
            eprintln!("(asked to by the input's \"exit\" field)");
            std::process::exit(code);
        }
    }
    let mut out = json!({ "echo": value, "args": std::env::args_os().count() });
    if let Some(rounds) = value.get("clock").and_then(Value::as_u64) {
        out["clock"] = clock(rounds);
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{out}").and_then(|()| stdout.flush()).unwrap_or_else(|e| {
        eprintln!("cannot write stdout: {e}");
        std::process::exit(2);
    });
}

/// Reads the clocks and the random source around `rounds` rounds of work.
fn clock(rounds: u64) -> Value {
    use std::hash::BuildHasher;
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let started = std::time::Instant::now();
    let mut acc = 0u64;
    for i in 0..rounds {
        acc = std::hint::black_box(acc.wrapping_mul(31).wrapping_add(i));
    }
    let elapsed = started.elapsed().as_nanos();
    // A new RandomState's keys come from the host's random source.
    let random = std::collections::hash_map::RandomState::new().hash_one(acc);
    json!({
        "wall_ns": wall.to_string(),
        "elapsed_ns": elapsed.to_string(),
        "random": random.to_string(),
    })
}
