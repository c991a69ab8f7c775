//! Per-attempt limits (what a task may ask for, clamped by the server's ceilings)
//! and the store limiter that enforces memory, tables and instances.

use crate::limits_spec::LimitsSpec;
use serde::{Deserialize, Serialize};
use wasmtime::ResourceLimiter;

const MIB: u64 = 1024 * 1024;

/// What one attempt may use. Tasks set these; the server's [`Ceilings`] clamp them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Wall-clock budget of one attempt, in milliseconds.
    pub timeout_ms: u64,
    /// Fuel budget of one attempt (about one unit per WebAssembly instruction).
    pub fuel: u64,
    /// Linear memory, summed over every memory of the instance, in MiB.
    pub memory_mb: u32,
}

impl Limits {
    /// The defaults a task gets when it says nothing.
    pub const DEFAULT: Limits = Limits {
        timeout_ms: 30_000,
        fuel: 10_000_000_000,
        memory_mb: 256,
    };

    /// The limits an attempt gets when a task asks for `asked`: the
    /// `defaults` where it says nothing, then clamped by the server's
    /// ceilings (DESIGN invariant 7).
    pub fn resolve(asked: &LimitsSpec, defaults: Limits, ceilings: &Ceilings) -> Limits {
        Limits {
            timeout_ms: asked.timeout_ms.unwrap_or(defaults.timeout_ms),
            fuel: asked.fuel.unwrap_or(defaults.fuel),
            memory_mb: asked.memory_mb.unwrap_or(defaults.memory_mb),
        }
        .clamped(ceilings)
    }

    /// The same limits, each no higher than its ceiling and at least 1.
    pub fn clamped(self, ceilings: &Ceilings) -> Limits {
        Limits {
            timeout_ms: self.timeout_ms.clamp(1, ceilings.max_timeout_ms),
            fuel: self.fuel.clamp(1, ceilings.max_fuel),
            memory_mb: self.memory_mb.clamp(1, ceilings.max_memory_mb),
        }
    }

    pub fn memory_bytes(&self) -> u64 {
        u64::from(self.memory_mb) * MIB
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// The most any task may ask for, and the caps on what a guest can push back
/// to the host. Set by whoever runs the server, never by a tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ceilings {
    pub max_timeout_ms: u64,
    pub max_fuel: u64,
    /// At most 4096: a 32-bit linear memory cannot be larger.
    pub max_memory_mb: u32,
    /// Largest output (a task's `done`/`wait` text or a command's stdout) in bytes.
    pub max_output_bytes: usize,
    /// Largest attempt log kept, in bytes; the excess is dropped and counted.
    pub max_log_bytes: usize,
}

impl Ceilings {
    pub const DEFAULT: Ceilings = Ceilings {
        max_timeout_ms: 15 * 60 * 1000,
        max_fuel: 1_000_000_000_000,
        max_memory_mb: 4096,
        max_output_bytes: MIB as usize,
        max_log_bytes: 64 * 1024,
    };
}

impl Default for Ceilings {
    fn default() -> Self {
        Ceilings::DEFAULT
    }
}

/// Most table elements one table may grow to. JavaScript and Go runtimes
/// carry function tables of tens of thousands of entries.
pub const MAX_TABLE_ELEMENTS: usize = 200_000;
/// Most core instances a component may create in one store.
pub const MAX_INSTANCES: usize = 64;
/// Most tables in one store.
pub const MAX_TABLES: usize = 64;
/// Most linear memories in one store.
pub const MAX_MEMORIES: usize = 16;

/// Enforces the memory limit over the sum of every linear memory in the
/// store and remembers whether it ever refused, because language runtimes
/// turn a refused `memory.grow` into an abort that looks like any other trap.
#[derive(Debug)]
pub struct StoreLimiter {
    limit_bytes: usize,
    total_bytes: usize,
    peak_bytes: usize,
    last_grant: usize,
    refused: bool,
}

impl StoreLimiter {
    pub fn new(limit_bytes: u64) -> Self {
        StoreLimiter {
            limit_bytes: usize::try_from(limit_bytes).unwrap_or(usize::MAX),
            total_bytes: 0,
            peak_bytes: 0,
            last_grant: 0,
            refused: false,
        }
    }

    /// Highest total of linear memory the guest held at once.
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes as u64
    }

    /// Whether a request for memory was refused during this attempt.
    pub fn refused(&self) -> bool {
        self.refused
    }
}

impl ResourceLimiter for StoreLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let grow = desired.saturating_sub(current);
        let total = self.total_bytes.saturating_add(grow);
        if total > self.limit_bytes {
            self.refused = true;
            return Ok(false);
        }
        self.total_bytes = total;
        self.last_grant = grow;
        self.peak_bytes = self.peak_bytes.max(total);
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // We granted it but the engine could not: undo the accounting.
        self.total_bytes = self.total_bytes.saturating_sub(self.last_grant);
        self.refused = true;
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_take_defaults_then_ceilings() {
        let spec = LimitsSpec {
            timeout_ms: Some(u64::MAX),
            fuel: None,
            memory_mb: Some(64),
        };
        let got = Limits::resolve(&spec, Limits::DEFAULT, &Ceilings::DEFAULT);
        assert_eq!(got.timeout_ms, Ceilings::DEFAULT.max_timeout_ms);
        assert_eq!(got.fuel, Limits::DEFAULT.fuel);
        assert_eq!(got.memory_mb, 64);
    }

    #[test]
    fn clamps_to_ceilings_and_floors() {
        let asked = Limits {
            timeout_ms: u64::MAX,
            fuel: 0,
            memory_mb: 100_000,
        };
        let got = asked.clamped(&Ceilings::DEFAULT);
        assert_eq!(got.timeout_ms, Ceilings::DEFAULT.max_timeout_ms);
        assert_eq!(got.fuel, 1);
        assert_eq!(got.memory_mb, 4096);
    }

    #[test]
    fn limiter_sums_memories_and_remembers_refusal() {
        let mut l = StoreLimiter::new(10 * MIB);
        assert!(l.memory_growing(0, 6 * MIB as usize, None).unwrap());
        assert!(l.memory_growing(0, 4 * MIB as usize, None).unwrap());
        assert!(!l.refused());
        assert!(!l
            .memory_growing(4 * MIB as usize, 5 * MIB as usize, None)
            .unwrap());
        assert!(l.refused());
        assert_eq!(l.peak_bytes(), 10 * MIB);
    }
}
