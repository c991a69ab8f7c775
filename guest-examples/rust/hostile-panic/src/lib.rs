//! hostile-panic: panics ("hostile guest panicked on purpose"), whatever the input. Rust on wasm
//! aborts on panic, so a test should expect a trap (`unreachable`), reported as a failed attempt;
//! the panic message goes to stderr first.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

struct HostilePanic;

impl Guest for HostilePanic {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        panic!("hostile guest panicked on purpose");
    }
}

export!(HostilePanic);
