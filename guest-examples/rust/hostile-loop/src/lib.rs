//! hostile-loop: spins forever and never returns, whatever the input. A test should expect the
//! host to stop it (fuel or epoch deadline) and fail the attempt as a timeout/limit error.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

struct HostileLoop;

impl Guest for HostileLoop {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        let mut x: u64 = 1;
        loop {
            // black_box: the loop has an observable effect as far as LLVM knows.
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

export!(HostileLoop);
