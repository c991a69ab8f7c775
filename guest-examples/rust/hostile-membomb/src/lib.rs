//! hostile-membomb: allocates 1 MiB chunks, writing every 4 KiB page, into a Vec forever. A test
//! should expect the host's memory limit to stop it (memory.grow refused → the allocator aborts
//! with a trap) and the host itself to stay well below the limit plus overhead.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

struct HostileMembomb;

impl Guest for HostileMembomb {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        const MIB: usize = 1 << 20;
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            let mut chunk: Vec<u8> = Vec::with_capacity(MIB);
            // SAFETY: u8 has no invalid values; pages are written before anything reads them.
            unsafe { chunk.set_len(MIB) };
            for page in (0..MIB).step_by(4096) {
                chunk[page] = 0xAA;
            }
            hoard.push(std::hint::black_box(chunk));
        }
    }
}

export!(HostileMembomb);
