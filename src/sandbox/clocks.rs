//! The clock imports, defined again over WASI's as host functions that get
//! the store: a deterministic attempt's clock reads the fuel it has spent
//! (`determinism.rs`), which a clock object, having no store, cannot. Both
//! kinds of guest: components (`wasi:clocks`) and preview-1 modules
//! (`clock_time_get`, `clock_res_get`).

use super::determinism::{VirtualClock, NS_PER_FUEL};
use super::host::{ComponentHost, ModuleHost};
use wasmtime::component::Linker;
use wasmtime::{AsContextMut, Caller, StoreContextMut};
use wasmtime_wasi::clocks::WasiClocksView;
use wasmtime_wasi::p2::bindings::clocks::{monotonic_clock, wall_clock};

fn datetime(ns: u64) -> wall_clock::Datetime {
    wall_clock::Datetime {
        seconds: ns / 1_000_000_000,
        nanoseconds: (ns % 1_000_000_000) as u32,
    }
}

/// The store's virtual clock and the fuel it has left, when it has one.
fn virtual_now(store: &StoreContextMut<'_, ComponentHost>) -> Option<(VirtualClock, u64)> {
    let clock = store.data().clock?;
    // Without fuel metering nothing advances: the clock stands at its start.
    let left = store.get_fuel().unwrap_or(clock.budget);
    Some((clock, left))
}

/// Defines `now` and `resolution` of `wasi:clocks` again, over the WASI
/// ones: a store with a [`VirtualClock`] reads it, any other the real clocks
/// as before. Sleeping (`subscribe-*`) is `sleeps.rs`'s.
pub(super) fn add_clocks(linker: &mut Linker<ComponentHost>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut wall = linker.instance("wasi:clocks/wall-clock@0.2.12")?;
    wall.func_wrap(
        "now",
        |mut store: StoreContextMut<'_, ComponentHost>, (): ()| {
            if let Some((clock, left)) = virtual_now(&store) {
                let at = clock.start_unix_ns.saturating_add(clock.elapsed_ns(left));
                return Ok((datetime(at),));
            }
            wall_clock::Host::now(&mut store.data_mut().clocks()).map(|t| (t,))
        },
    )?;
    wall.func_wrap(
        "resolution",
        |mut store: StoreContextMut<'_, ComponentHost>, (): ()| {
            if store.data().clock.is_some() {
                return Ok((datetime(NS_PER_FUEL),));
            }
            wall_clock::Host::resolution(&mut store.data_mut().clocks()).map(|t| (t,))
        },
    )?;
    let mut mono = linker.instance("wasi:clocks/monotonic-clock@0.2.12")?;
    mono.func_wrap(
        "now",
        |mut store: StoreContextMut<'_, ComponentHost>, (): ()| {
            if let Some((clock, left)) = virtual_now(&store) {
                return Ok((clock.elapsed_ns(left),));
            }
            monotonic_clock::Host::now(&mut store.data_mut().clocks()).map(|t| (t,))
        },
    )?;
    mono.func_wrap(
        "resolution",
        |mut store: StoreContextMut<'_, ComponentHost>, (): ()| {
            if store.data().clock.is_some() {
                return Ok((NS_PER_FUEL,));
            }
            monotonic_clock::Host::resolution(&mut store.data_mut().clocks()).map(|t| (t,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Preview 1's clock ids and the errors its clock calls answer.
mod p1 {
    pub const REALTIME: i32 = 0;
    pub const MONOTONIC: i32 = 1;
    pub const PROCESS_CPUTIME: i32 = 2;
    pub const THREAD_CPUTIME: i32 = 3;
    pub const SUCCESS: i32 = 0;
    pub const BADF: i32 = 8;
    pub const FAULT: i32 = 21;
    pub const INVAL: i32 = 28;
    pub const OVERFLOW: i32 = 61;
}

fn datetime_ns(t: wall_clock::Datetime) -> Option<u64> {
    t.seconds
        .checked_mul(1_000_000_000)?
        .checked_add(u64::from(t.nanoseconds))
}

/// A preview-1 clock's time (`resolution`: its resolution), in
/// nanoseconds, or the errno preview 1 answers for it as WASI's own
/// implementation does.
fn module_clock(
    caller: &mut Caller<'_, ModuleHost>,
    id: i32,
    resolution: bool,
) -> wasmtime::Result<Result<u64, i32>> {
    match id {
        p1::REALTIME | p1::MONOTONIC => {}
        p1::PROCESS_CPUTIME | p1::THREAD_CPUTIME => return Ok(Err(p1::BADF)),
        _ => return Ok(Err(p1::INVAL)),
    }
    if let Some(clock) = caller.data().clock {
        if resolution {
            return Ok(Ok(NS_PER_FUEL));
        }
        let left = caller.get_fuel().unwrap_or(clock.budget);
        let elapsed = clock.elapsed_ns(left);
        return Ok(Ok(if id == p1::REALTIME {
            clock.start_unix_ns.saturating_add(elapsed)
        } else {
            elapsed
        }));
    }
    let mut clocks = caller.data_mut().wasi.clocks();
    Ok(match (id, resolution) {
        (p1::REALTIME, false) => {
            datetime_ns(wall_clock::Host::now(&mut clocks)?).ok_or(p1::OVERFLOW)
        }
        (p1::REALTIME, true) => {
            datetime_ns(wall_clock::Host::resolution(&mut clocks)?).ok_or(p1::OVERFLOW)
        }
        (_, false) => Ok(monotonic_clock::Host::now(&mut clocks)?),
        (_, true) => Ok(monotonic_clock::Host::resolution(&mut clocks)?),
    })
}

/// Writes a preview-1 timestamp where the guest asked; `FAULT` when that is
/// outside its memory.
fn write_timestamp(caller: &mut Caller<'_, ModuleHost>, at: i32, value: u64) -> i32 {
    let Some(memory) = caller.get_export("memory").and_then(|e| e.into_memory()) else {
        return p1::FAULT;
    };
    let Ok(at) = usize::try_from(at as u32) else {
        return p1::FAULT;
    };
    match memory.write(caller.as_context_mut(), at, &value.to_le_bytes()) {
        Ok(()) => p1::SUCCESS,
        Err(_) => p1::FAULT,
    }
}

/// Defines preview 1's `clock_time_get` and `clock_res_get` again, over
/// WASI's: a store with a [`VirtualClock`] reads it, any other the real
/// clocks as WASI's own would. Sleeping (`poll_oneoff`) is `sleeps.rs`'s.
pub(super) fn add_module_clocks(linker: &mut wasmtime::Linker<ModuleHost>) -> wasmtime::Result<()> {
    const P1: &str = "wasi_snapshot_preview1";
    linker.allow_shadowing(true);
    linker.func_wrap(
        P1,
        "clock_time_get",
        |mut caller: Caller<'_, ModuleHost>, id: i32, _precision: i64, out: i32| {
            Ok(match module_clock(&mut caller, id, false)? {
                Ok(ns) => write_timestamp(&mut caller, out, ns),
                Err(errno) => errno,
            })
        },
    )?;
    linker.func_wrap(
        P1,
        "clock_res_get",
        |mut caller: Caller<'_, ModuleHost>, id: i32, out: i32| {
            Ok(match module_clock(&mut caller, id, true)? {
                Ok(ns) => write_timestamp(&mut caller, out, ns),
                Err(errno) => errno,
            })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_read_as_a_datetime() {
        let t = datetime(1_500_000_000);
        assert_eq!((t.seconds, t.nanoseconds), (1, 500_000_000));
        assert_eq!(datetime_ns(t), Some(1_500_000_000));
        let far = wall_clock::Datetime {
            seconds: u64::MAX / 1_000,
            nanoseconds: 0,
        };
        assert_eq!(datetime_ns(far), None);
    }
}
