//! The one `Engine` of a process: how guests are compiled and what every
//! store may hold, plus the epoch ticker thread that drives wall-clock limits.

use super::limits::{Ceilings, MAX_MEMORIES, MAX_TABLE_ELEMENTS};
use super::Metering;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, Thread};
use std::time::{Duration, Instant};
use wasmtime::{
    Config, Enabled, Engine, EngineWeak, InstanceAllocationStrategy, OptLevel,
    PoolingAllocationConfig,
};

/// How often the epoch advances while attempts run. Deadlines and
/// cancellation are checked at this grain, so a runaway guest stops within
/// about one tick of its deadline.
pub const EPOCH_TICK: Duration = Duration::from_micros(500);

/// WebAssembly call stack of one attempt. Deep enough for real recursive code,
/// small enough that unbounded recursion ends quickly as `stack_overflow`.
pub const MAX_WASM_STACK: usize = 1 << 20;

/// Room on each attempt's native stack above the guest's own, for the host
/// functions (WASI, log) the guest calls at its deepest point.
pub const HOST_STACK_HEADROOM: usize = 1 << 20;

/// Dirty linear memory reset in place (not madvised) per slot, when the
/// kernel reports which pages are dirty.
const KEEP_RESIDENT_WITH_PAGEMAP: usize = 2 << 20;
/// Without that report every byte up to this is memset, dirty or not.
const KEEP_RESIDENT_WITHOUT_PAGEMAP: usize = 128 << 10;

/// Most attempts that can be instantiated at once in one process.
pub const DEFAULT_MAX_INSTANCES: u32 = 512;

/// Builds the engine every attempt of this process runs on.
pub fn build(
    ceilings: &Ceilings,
    max_instances: u32,
    metering: Metering,
) -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(metering.fuel())
        .epoch_interruption(metering.epoch())
        .max_wasm_stack(MAX_WASM_STACK)
        .async_stack_size(MAX_WASM_STACK + HOST_STACK_HEADROOM)
        .cranelift_opt_level(OptLevel::Speed)
        .parallel_compilation(true);

    let n = max_instances.max(1);
    let memory_bytes = (u64::from(ceilings.max_memory_mb.clamp(1, 4096)) << 20) as usize;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(n)
        .total_core_instances(n.saturating_mul(8))
        .total_memories(n.saturating_mul(2))
        .total_tables(n.saturating_mul(4))
        .total_stacks(n)
        .max_memory_size(memory_bytes)
        .table_elements(MAX_TABLE_ELEMENTS)
        .max_memories_per_component(MAX_MEMORIES as u32)
        .max_tables_per_module(4)
        .table_keep_resident(64 * 1024)
        // Batched madvise: fewer TLB shootdowns across cores.
        .decommit_batch_size(16);
    // Resetting a slot with madvise costs a TLB shootdown now and a page
    // fault per touched page on the next attempt. Where the kernel can tell
    // which pages are dirty (PAGEMAP_SCAN, Linux 6.7+), reset just those with
    // memset and keep them resident; elsewhere memset only the lowest pages.
    if PoolingAllocationConfig::is_pagemap_scan_available() {
        pool.pagemap_scan(Enabled::Yes)
            .linear_memory_keep_resident(KEEP_RESIDENT_WITH_PAGEMAP);
    } else {
        pool.linear_memory_keep_resident(KEEP_RESIDENT_WITHOUT_PAGEMAP);
    }
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Engine::new(&config)
}

/// The thread that advances the engine's epoch every [`EPOCH_TICK`] while
/// attempts run, and sleeps while none do (an idle server costs no wake-ups).
#[derive(Clone)]
pub struct Ticker {
    thread: Thread,
    active: Arc<AtomicUsize>,
}

/// Keeps the ticker running while an attempt is alive.
pub struct Ticking(Ticker);

impl Ticker {
    /// Starts the thread; it ends once the engine is dropped.
    /// Ticks are scheduled on absolute instants, so a late wake-up does not
    /// push every later tick back: a deadline of N ticks stays N ticks long.
    pub fn spawn(engine: &Engine) -> std::io::Result<Ticker> {
        let weak: EngineWeak = engine.weak();
        let active = Arc::new(AtomicUsize::new(0));
        let seen = active.clone();
        let handle = thread::Builder::new()
            .name("taskbox-epoch".into())
            .spawn(move || {
                let mut next = Instant::now() + EPOCH_TICK;
                loop {
                    if seen.load(Ordering::Acquire) == 0 {
                        // Woken by `start`; the timeout only notices a dropped engine.
                        thread::park_timeout(Duration::from_secs(1));
                        next = Instant::now() + EPOCH_TICK;
                    } else {
                        thread::sleep(next.saturating_duration_since(Instant::now()));
                        next += EPOCH_TICK;
                    }
                    let Some(engine) = weak.upgrade() else { return };
                    engine.increment_epoch();
                    let now = Instant::now();
                    // After a long stall (e.g. a suspended VM), do not burst to catch up.
                    if next < now {
                        next = now + EPOCH_TICK;
                    }
                }
            })?;
        Ok(Ticker {
            thread: handle.thread().clone(),
            active,
        })
    }

    /// Marks an attempt as running until the returned guard is dropped.
    pub fn start(&self) -> Ticking {
        if self.active.fetch_add(1, Ordering::AcqRel) == 0 {
            self.thread.unpark();
        }
        Ticking(self.clone())
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A stable name for the engine's compilation settings, so artifacts built
/// under other settings (or another wasmtime) are never offered to it.
pub fn fingerprint(engine: &Engine) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    format!("{:016x}", h.finish())
}
