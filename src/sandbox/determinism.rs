//! Deterministic attempts: a clock that starts at the job's creation and
//! advances with the fuel spent, and random bytes seeded from the job's id,
//! so two attempts of one job give the same output and the same fuel.
//!
//! Why fuel: it counts the guest's instructions, the same on every machine,
//! so "now" at any point of a run is a function of the run alone. The clock
//! imports that read it are in `clocks.rs`.
//!
//! A sleep moves the clock on by what it waits, at once (`sleeps.rs`): a
//! guest that waits for its clock to pass some instant sees it pass after
//! the same fuel on every run, and no real time goes by.

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

    /// The clock of an attempt given `budget` fuel and `timeout_ms`.
    pub(super) fn clock(&self, budget: u64, timeout_ms: u64) -> VirtualClock {
        VirtualClock {
            start_unix_ns: self.start_unix_ns,
            budget,
            slept_ns: 0,
            timeout_ns: timeout_ms.saturating_mul(1_000_000),
        }
    }
}

/// A deterministic store's clock: its start, the fuel it was given (what it
/// has left says what it spent), and what the guest has slept.
#[derive(Debug, Clone, Copy)]
pub struct VirtualClock {
    pub start_unix_ns: u64,
    pub budget: u64,
    /// Virtual nanoseconds the guest's sleeps have moved the clock on.
    pub slept_ns: u64,
    /// The attempt's timeout, read against this clock: a sleep that would
    /// take the clock past it ends the attempt `timeout` at once.
    pub timeout_ns: u64,
}

/// A sleep that would take a deterministic attempt's clock past its timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a sleep took the virtual clock past the attempt's timeout")]
pub struct SleptPastTimeout;

impl VirtualClock {
    /// Virtual nanoseconds since the attempt began: the fuel spent so far,
    /// and what the guest has slept.
    pub(super) fn elapsed_ns(&self, fuel_left: u64) -> u64 {
        self.budget
            .saturating_sub(fuel_left)
            .saturating_mul(NS_PER_FUEL)
            .saturating_add(self.slept_ns)
    }

    /// Sleeps until `at_ns` (virtual nanoseconds since the attempt began):
    /// the clock moves on to it at once, or not at all if it has passed.
    /// An instant past the timeout leaves the clock at the timeout and is
    /// refused: waiting for it could only end in `timeout`, so the attempt
    /// ends now, the same on every run, instead of after the real timeout.
    pub(super) fn sleep_until(
        &mut self,
        at_ns: u64,
        fuel_left: u64,
    ) -> Result<(), SleptPastTimeout> {
        let now = self.elapsed_ns(fuel_left);
        if at_ns <= now {
            return Ok(());
        }
        if at_ns > self.timeout_ns {
            self.slept_ns = self
                .slept_ns
                .saturating_add(self.timeout_ns.saturating_sub(now));
            return Err(SleptPastTimeout);
        }
        self.slept_ns = self.slept_ns.saturating_add(at_ns - now);
        Ok(())
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
        let clock = Determinism::of_job("x").clock(1_000, 1);
        assert_eq!(clock.elapsed_ns(1_000), 0);
        assert_eq!(clock.elapsed_ns(400), 600 * NS_PER_FUEL);
        // More left than given (hostcall fuel handed back) reads as the start.
        assert_eq!(clock.elapsed_ns(2_000), 0);
    }

    #[test]
    fn a_sleep_moves_the_clock_on_to_its_instant_and_never_past_the_timeout() {
        let mut clock = Determinism::of_job("x").clock(1_000, 2);
        clock.sleep_until(30_000, 900).unwrap();
        assert_eq!(clock.elapsed_ns(900), 30_000);
        // Fuel spent after the sleep adds to it; an instant passed is no wait.
        assert_eq!(clock.elapsed_ns(800), 30_100);
        clock.sleep_until(10, 800).unwrap();
        assert_eq!(clock.elapsed_ns(800), 30_100);
        // Past the 2 ms timeout: refused, the clock left at the timeout.
        assert_eq!(clock.sleep_until(2_000_001, 800), Err(SleptPastTimeout));
        assert_eq!(clock.elapsed_ns(800), 2_000_000);
        assert_eq!(clock.sleep_until(u64::MAX, 800), Err(SleptPastTimeout));
        assert_eq!(clock.elapsed_ns(800), 2_000_000);
    }
}
