//! hostile-stdout-flood: writes 64 MiB of lines to stdout and 16 MiB to stderr, then returns
//! `done({"flooded": true})`, whatever the input. A test should expect the host to keep only a
//! bounded amount of either stream (or discard them) and the attempt to finish.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

use std::io::Write;

/// Writes `bytes` bytes of 100-byte lines, 64 KiB of whole lines per write call.
fn flood(out: &mut dyn Write, bytes: usize, what: &str) {
    let mut line = [b'#'; 100];
    line[..what.len()].copy_from_slice(what.as_bytes());
    line[99] = b'\n';
    let block: Vec<u8> = line.iter().copied().cycle().take(655 * line.len()).collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len());
        // Errors (a closed or refusing stream) do not stop a hostile guest: keep going.
        let _ = out.write_all(&block[..n]);
        left -= n;
    }
    let _ = out.flush();
}

struct HostileStdoutFlood;

impl Guest for HostileStdoutFlood {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        flood(&mut std::io::stdout().lock(), 64 << 20, "stdout flood ");
        flood(&mut std::io::stderr().lock(), 16 << 20, "stderr flood ");
        Ok(Outcome::Done("{\"flooded\":true}".to_string()))
    }
}

export!(HostileStdoutFlood);
