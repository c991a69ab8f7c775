//! Deterministic attempts: a clock that starts at the job's creation and
//! advances with the fuel spent, and random bytes seeded from the job's id,
//! so two attempts of one job give the same output and the same fuel.
//!
//! Why fuel: it counts the guest's instructions, the same on every machine,
//! so "now" at any point of a run is a function of the run alone. The clock
//! imports that read it are in `clocks.rs`.

use chacha20::ChaCha20Rng;
use rand_core::SeedableRng;
use wasmtime_wasi::WasiCtxBuilder;

/// Virtual nanoseconds per unit of fuel: one instruction, one nanosecond
/// (about what a guest's instruction costs here, so timeouts read sensibly).
pub const NS_PER_FUEL: u64 = 1;

/// What makes an attempt deterministic: where its clock starts and what
/// seeds its random bytes. Both come from the job, never from the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Determinism {
    /// The job's creation, in nanoseconds since the Unix epoch.
    pub start_unix_ns: u64,
    /// Seeds every random source the guest has.
    pub seed: [u8; 32],
}

impl Determinism {
    /// For job `id`: its clock starts at the job's creation, the
    /// millisecond its id (a ULID) records, and its seed is the sha256 of
    /// the id, so each job has its own sequence. Everything comes from the
    /// id, which every attempt and every replay has. An id that is not a
    /// ULID starts the clock at the epoch.
    pub fn of_job(id: &str) -> Determinism {
        use sha2::Digest;
        let created_ms = ulid::Ulid::from_string(id).map_or(0, |u| u.timestamp_ms());
        Determinism {
            start_unix_ns: created_ms.saturating_mul(1_000_000),
            seed: sha2::Sha256::digest(id.as_bytes()).into(),
        }
    }

    /// Gives the WASI context random sources drawn from the seed (the
    /// secure one, the insecure one, and the insecure seed).
    pub(super) fn seed_random(&self, b: &mut WasiCtxBuilder) {
        let mut insecure = self.seed;
        insecure[0] ^= 1;
        let insecure_seed = u128::from_le_bytes(self.seed[..16].try_into().unwrap_or([0; 16]));
        b.secure_random(ChaCha20Rng::from_seed(self.seed))
            .insecure_random(ChaCha20Rng::from_seed(insecure))
            .insecure_random_seed(insecure_seed);
    }

    /// The clock of an attempt given `budget` fuel.
    pub(super) fn clock(&self, budget: u64) -> VirtualClock {
        VirtualClock {
            start_unix_ns: self.start_unix_ns,
            budget,
        }
    }
}

/// A deterministic store's clock: its start, and the fuel it was given
/// (what it has left says what it spent).
#[derive(Debug, Clone, Copy)]
pub struct VirtualClock {
    pub start_unix_ns: u64,
    pub budget: u64,
}

impl VirtualClock {
    /// Virtual nanoseconds since the attempt began: the fuel spent so far.
    pub(super) fn elapsed_ns(&self, fuel_left: u64) -> u64 {
        self.budget
            .saturating_sub(fuel_left)
            .saturating_mul(NS_PER_FUEL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_determinism_depends_on_the_job_alone() {
        let id = |n| ulid::Ulid::from_parts(1_700_000_000_123, n).to_string();
        let a = Determinism::of_job(&id(1));
        assert_eq!(a, Determinism::of_job(&id(1)));
        assert_eq!(a.start_unix_ns, 1_700_000_000_123_000_000);
        let b = Determinism::of_job(&id(2));
        assert_eq!(b.start_unix_ns, a.start_unix_ns);
        assert_ne!(a.seed, b.seed);
        assert_eq!(Determinism::of_job("not-a-ulid").start_unix_ns, 0);
    }

    #[test]
    fn the_clock_advances_with_the_fuel_spent_and_never_goes_back() {
        let clock = VirtualClock {
            start_unix_ns: 5,
            budget: 1_000,
        };
        assert_eq!(clock.elapsed_ns(1_000), 0);
        assert_eq!(clock.elapsed_ns(400), 600 * NS_PER_FUEL);
        // More left than given (hostcall fuel handed back) reads as the start.
        assert_eq!(clock.elapsed_ns(2_000), 0);
    }
}
