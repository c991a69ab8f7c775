//! hostile-import: a task-world component that also imports `evil:net/raw@0.1.0` (defined in
//! `wit/evil.wit`), an interface the host does not offer, and calls it from `run`. A test should
//! expect the upload to be rejected with an error naming `evil:net/raw@0.1.0`.

wit_bindgen::generate!({
    // task.wit is used in place, not copied: evil.wit's `include` resolves against it.
    path: ["../../../wit", "wit"],
    world: "evil:net/evil-task@0.1.0",
    generate_all,
});

struct HostileImport;

impl Guest for HostileImport {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        let handle = evil::net::raw::connect("169.254.169.254", 80);
        Ok(Outcome::Done(format!("{{\"connected\":{handle}}}")))
    }
}

export!(HostileImport);
