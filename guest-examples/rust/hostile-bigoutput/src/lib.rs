//! hostile-bigoutput: returns `done` with a 100 MiB output, a JSON string literal `"xxx…"`
//! (104_857_600 'x' plus the two quotes), whatever the input. A test should expect the host to
//! refuse the output as over its output limit without keeping it.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

struct HostileBigoutput;

impl Guest for HostileBigoutput {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        const N: usize = 100 << 20;
        let mut text = Vec::with_capacity(N + 2);
        text.push(b'"');
        text.resize(N + 1, b'x');
        text.push(b'"');
        // SAFETY: only ASCII was written.
        Ok(Outcome::Done(unsafe { String::from_utf8_unchecked(text) }))
    }
}

export!(HostileBigoutput);
