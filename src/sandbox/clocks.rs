//! The clock imports, defined again over WASI's as host functions that get
//! the store: a deterministic attempt's clock reads the fuel it has spent
//! (`determinism.rs`), which a clock object, having no store, cannot.

use super::determinism::{VirtualClock, NS_PER_FUEL};
use super::host::ComponentHost;
use wasmtime::component::Linker;
use wasmtime::StoreContextMut;
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
/// as before. Sleeping (`subscribe-*`) stays real time.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_read_as_a_datetime() {
        let t = datetime(1_500_000_000);
        assert_eq!((t.seconds, t.nanoseconds), (1, 500_000_000));
    }
}
