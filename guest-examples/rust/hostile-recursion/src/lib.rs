//! hostile-recursion: unbounded non-tail recursion on the WebAssembly native stack (no locals in
//! linear memory), whatever the input. A test should expect a stack-overflow trap, reported as a
//! failed attempt, with the host unharmed.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

/// Called only through this pointer, read with a volatile load: LLVM can neither inline the
/// recursion nor turn it into a loop, and no local has its address taken (`black_box` would put
/// one on the shadow stack in linear memory), so each level is a native-stack frame only.
static RECURSE: fn(u64) -> u64 = recurse;

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    // SAFETY: reading an initialized static; volatile so the call target stays opaque.
    let next = unsafe { std::ptr::read_volatile(&RECURSE) };
    next(depth + 1) + 1
}

struct HostileRecursion;

impl Guest for HostileRecursion {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        let depth = recurse(0);
        Ok(Outcome::Done(format!("{{\"depth\":{depth}}}")))
    }
}

export!(HostileRecursion);
