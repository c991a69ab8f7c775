//! noop: does as little as possible and returns `ok(done("{}"))` at once, whatever the input.
//! Used to measure the per-attempt overhead of the host; a test should expect output `{}`.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

struct Noop;

impl Guest for Noop {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        Ok(Outcome::Done(String::from("{}")))
    }
}

export!(Noop);
