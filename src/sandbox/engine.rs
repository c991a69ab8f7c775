//! The one `Engine` of a process: how guests are compiled and what every
//! store may hold.

use super::limits::{Ceilings, MAX_MEMORIES, MAX_TABLE_ELEMENTS};
use super::Metering;
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig,
};

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

/// How every engine of the process compiles: what an artifact depends on
/// (wasmtime checks it when one is loaded), the same in a compiling child
/// as in the server.
fn compile_config(metering: Metering) -> Config {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(metering.fuel())
        .epoch_interruption(metering.epoch())
        .max_wasm_stack(MAX_WASM_STACK)
        .async_stack_size(MAX_WASM_STACK + HOST_STACK_HEADROOM)
        .cranelift_opt_level(OptLevel::Speed)
        .parallel_compilation(true);
    config
}

/// An engine that only compiles (a compiling child's): the server's
/// settings without the pool of instances, whose address space a child
/// held to a memory limit could not reserve. Its artifacts load in the
/// server's engine (the pool is no part of their compatibility).
pub fn build_for_compiling(metering: Metering) -> wasmtime::Result<Engine> {
    Engine::new(&compile_config(metering))
}

/// Builds the engine every attempt of this process runs on.
pub fn build(
    ceilings: &Ceilings,
    max_instances: u32,
    metering: Metering,
) -> wasmtime::Result<Engine> {
    let mut config = compile_config(metering);

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

/// A stable name for the engine's compilation settings, so artifacts built
/// under other settings (or another wasmtime) are never offered to it.
pub fn fingerprint(engine: &Engine) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compiling child's engine makes artifacts the server's engine
    /// loads: the pool is no part of their compatibility.
    #[test]
    fn a_compiling_engine_is_compatible_with_the_servers() {
        for m in [
            Metering::FuelAndEpoch,
            Metering::EpochOnly,
            Metering::Unmetered,
        ] {
            let server = build(&Ceilings::DEFAULT, 4, m).unwrap();
            let compiling = build_for_compiling(m).unwrap();
            assert_eq!(fingerprint(&server), fingerprint(&compiling), "{m:?}");
            let module = wasmtime::Module::new(&compiling, "(module (func (export \"f\")))")
                .unwrap()
                .serialize()
                .unwrap();
            // SAFETY: made just above by an engine of the same settings.
            assert!(unsafe { wasmtime::Module::deserialize(&server, &module) }.is_ok());
        }
    }
}
