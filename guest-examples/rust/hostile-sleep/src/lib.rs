//! hostile-sleep: sleeps for an hour with `std::thread::sleep`, i.e. blocked inside a WASI host
//! call (wasi:io/poll) where wasmtime's epoch interruption does not fire, whatever the input. A
//! test should expect the host's wall-clock timeout to stop it anyway.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

struct HostileSleep;

impl Guest for HostileSleep {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        std::thread::sleep(std::time::Duration::from_secs(3600));
        Ok(Outcome::Done("{\"slept_s\":3600}".to_string()))
    }
}

export!(HostileSleep);
