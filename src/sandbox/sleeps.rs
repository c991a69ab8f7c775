//! Sleeping on a deterministic attempt's virtual clock: a clock
//! subscription waits by moving the clock on (`VirtualClock::sleep_until`),
//! at once, never in real time. Without this a guest that sleeps until its
//! clock says some time has passed would wait in real time while its clock,
//! which moves only with fuel, hardly moved: it would loop until its real
//! timeout. Both kinds of guest: components (`wasi:clocks/monotonic-clock`'s
//! `subscribe-*` and `wasi:io/poll`'s `poll`, `block` and `ready`) and
//! preview-1 modules (`poll_oneoff`). Waits on anything but a clock stay
//! what WASI makes them: they are never answered as ready when they are not.

use super::classify::Interrupted;
use super::determinism::{SleptPastTimeout, VirtualClock};
use super::host::{ComponentHost, ModuleHost};
use wasmtime::component::{Linker, Resource};
use wasmtime::{AsContextMut, Caller, StoreContextMut};
use wasmtime_wasi::clocks::WasiClocksView;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;
use wasmtime_wasi::p2::bindings::io::poll::{Host as _, HostPollable};
use wasmtime_wasi::p2::DynPollable;

impl From<SleptPastTimeout> for Interrupted {
    fn from(_: SleptPastTimeout) -> Interrupted {
        Interrupted::Timeout
    }
}

/// The store's virtual clock and the fuel it has left, when it has one.
fn virtual_now(store: &StoreContextMut<'_, ComponentHost>) -> Option<(VirtualClock, u64)> {
    let clock = store.data().clock?;
    let left = store.get_fuel().unwrap_or(clock.budget);
    Some((clock, left))
}

/// Moves the store's virtual clock on to `at_ns`.
fn sleep_until(store: &mut StoreContextMut<'_, ComponentHost>, at_ns: u64) -> wasmtime::Result<()> {
    let left = store.get_fuel().ok();
    if let Some(clock) = store.data_mut().clock.as_mut() {
        let left = left.unwrap_or(clock.budget);
        clock.sleep_until(at_ns, left).map_err(Interrupted::from)?;
    }
    Ok(())
}

/// Defines `subscribe-duration` and `subscribe-instant` of
/// `wasi:clocks/monotonic-clock`, and `wasi:io/poll`, again over WASI's: a
/// store with a virtual clock subscribes to it and waits on it, any other
/// sleeps in real time as before.
pub(super) fn add_sleeps(linker: &mut Linker<ComponentHost>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut mono = linker.instance("wasi:clocks/monotonic-clock@0.2.12")?;
    mono.func_wrap(
        "subscribe-duration",
        |mut store: StoreContextMut<'_, ComponentHost>, (duration,): (u64,)| {
            if let Some((clock, left)) = virtual_now(&store) {
                let at = clock.elapsed_ns(left).saturating_add(duration);
                let host = store.data_mut();
                return Ok((host.timers.push(&mut host.table, at)?,));
            }
            monotonic_clock::Host::subscribe_duration(&mut store.data_mut().clocks(), duration)
                .map(|p| (p,))
        },
    )?;
    mono.func_wrap(
        "subscribe-instant",
        |mut store: StoreContextMut<'_, ComponentHost>, (at,): (u64,)| {
            if store.data().clock.is_some() {
                let host = store.data_mut();
                return Ok((host.timers.push(&mut host.table, at)?,));
            }
            monotonic_clock::Host::subscribe_instant(&mut store.data_mut().clocks(), at)
                .map(|p| (p,))
        },
    )?;
    let mut poll = linker.instance("wasi:io/poll@0.2.12")?;
    poll.func_wrap_async(
        "[method]pollable.ready",
        |mut store: StoreContextMut<'_, ComponentHost>, (p,): (Resource<DynPollable>,)| {
            Box::new(async move {
                if let Some((clock, left)) = virtual_now(&store) {
                    let host = store.data_mut();
                    if let Some(at) = host.timers.deadline(&host.table, p.rep()) {
                        return Ok((at <= clock.elapsed_ns(left),));
                    }
                }
                HostPollable::ready(&mut store.data_mut().table, p)
                    .await
                    .map(|r| (r,))
            })
        },
    )?;
    poll.func_wrap_async(
        "[method]pollable.block",
        |mut store: StoreContextMut<'_, ComponentHost>, (p,): (Resource<DynPollable>,)| {
            Box::new(async move {
                if store.data().clock.is_some() {
                    let host = store.data_mut();
                    if let Some(at) = host.timers.deadline(&host.table, p.rep()) {
                        return sleep_until(&mut store, at);
                    }
                }
                HostPollable::block(&mut store.data_mut().table, p).await
            })
        },
    )?;
    poll.func_wrap_async(
        "poll",
        |mut store: StoreContextMut<'_, ComponentHost>, (list,): (Vec<Resource<DynPollable>>,)| {
            Box::new(async move { poll_list(&mut store, list).await.map(|r| (r,)) })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// `poll` on a store with a virtual clock: what is ready now (a timer whose
/// instant has come, anything else WASI says is ready); when nothing is,
/// the clock moves on to the first timer and that is ready. A list without
/// a timer waits as WASI's `poll` does.
async fn poll_list(
    store: &mut StoreContextMut<'_, ComponentHost>,
    list: Vec<Resource<DynPollable>>,
) -> wasmtime::Result<Vec<u32>> {
    let Some((clock, left)) = virtual_now(store) else {
        return store.data_mut().table.poll(list).await;
    };
    let host = store.data_mut();
    let deadlines: Vec<Option<u64>> = list
        .iter()
        .map(|p| host.timers.deadline(&host.table, p.rep()))
        .collect();
    let Some(first) = deadlines.iter().flatten().copied().min() else {
        return host.table.poll(list).await;
    };
    let now = clock.elapsed_ns(left);
    let mut ready = Vec::new();
    for (i, (p, at)) in list.iter().zip(&deadlines).enumerate() {
        let now_ready = match at {
            Some(at) => *at <= now,
            None => HostPollable::ready(&mut host.table, Resource::new_borrow(p.rep())).await?,
        };
        if now_ready {
            ready.push(u32::try_from(i)?);
        }
    }
    if ready.is_empty() {
        // Nothing else is ready now: in virtual time, the first timer
        // fires before anything else could.
        sleep_until(store, first)?;
        for (i, at) in deadlines.iter().enumerate() {
            if at.is_some_and(|at| at <= first) {
                ready.push(u32::try_from(i)?);
            }
        }
    }
    Ok(ready)
}

/// Preview 1's `poll_oneoff` layout and the codes it answers.
mod p1 {
    pub const SUBSCRIPTION_BYTES: usize = 48;
    pub const EVENT_BYTES: usize = 32;
    pub const EVENT_CLOCK: u8 = 0;
    pub const EVENT_FD_READ: u8 = 1;
    pub const EVENT_FD_WRITE: u8 = 2;
    pub const ABSTIME: u16 = 1;
    pub const REALTIME: u32 = 0;
    pub const MONOTONIC: u32 = 1;
    pub const PROCESS_CPUTIME: u32 = 2;
    pub const THREAD_CPUTIME: u32 = 3;
    pub const SUCCESS: i32 = 0;
    pub const BADF: i32 = 8;
    pub const FAULT: i32 = 21;
    pub const INVAL: i32 = 28;
}

/// One subscription of a `poll_oneoff`, as a deterministic module answers it.
enum Subscription {
    /// A clock: its instant, in virtual nanoseconds since the attempt began.
    Clock { userdata: u64, at_ns: u64 },
    /// A descriptor ready at once (stdin to read, stdout or stderr to write).
    Ready { userdata: u64, kind: u8 },
}

/// Reads subscription `i` of `subs`; `Err` is the errno to answer.
fn subscription(
    subs: &[u8],
    i: usize,
    clock: &VirtualClock,
    now: u64,
) -> Result<Subscription, i32> {
    let at = i * p1::SUBSCRIPTION_BYTES;
    let bytes = subs.get(at..at + p1::SUBSCRIPTION_BYTES).ok_or(p1::FAULT)?;
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap_or([0; 8]));
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap_or([0; 4]));
    let userdata = u64_at(0);
    match bytes[8] {
        p1::EVENT_CLOCK => {
            let timeout = u64_at(24);
            let flags = u16::from_le_bytes([bytes[40], bytes[41]]);
            let absolute = flags & p1::ABSTIME != 0;
            let at_ns = match (u32_at(16), absolute) {
                (p1::REALTIME | p1::MONOTONIC, false) => now.saturating_add(timeout),
                (p1::MONOTONIC, true) => timeout,
                // The wall clock reads the start plus the monotonic clock.
                (p1::REALTIME, true) => timeout.saturating_sub(clock.start_unix_ns),
                (p1::PROCESS_CPUTIME | p1::THREAD_CPUTIME, _) => return Err(p1::BADF),
                _ => return Err(p1::INVAL),
            };
            Ok(Subscription::Clock { userdata, at_ns })
        }
        // A deterministic module's only descriptors are its standard
        // streams, in memory: stdin always has its input (or its end),
        // stdout and stderr always take more. WASI answers them the same.
        kind @ (p1::EVENT_FD_READ | p1::EVENT_FD_WRITE) => match (kind, u32_at(16)) {
            (p1::EVENT_FD_READ, 0) | (p1::EVENT_FD_WRITE, 1 | 2) => {
                Ok(Subscription::Ready { userdata, kind })
            }
            _ => Err(p1::BADF),
        },
        _ => Err(p1::INVAL),
    }
}

/// One preview-1 event, laid out for the guest's memory.
fn event(userdata: u64, kind: u8) -> [u8; p1::EVENT_BYTES] {
    let mut e = [0u8; p1::EVENT_BYTES];
    e[..8].copy_from_slice(&userdata.to_le_bytes());
    e[10] = kind;
    if kind != p1::EVENT_CLOCK {
        // As WASI's own: one byte may be read or written.
        e[16..24].copy_from_slice(&1u64.to_le_bytes());
    }
    e
}

/// `poll_oneoff` for a deterministic module: the events ready now, or, when
/// none is, the first clock's after the clock has moved on to it.
fn module_poll(
    caller: &mut Caller<'_, ModuleHost>,
    subs_at: i32,
    events_at: i32,
    count: i32,
    nevents_at: i32,
) -> wasmtime::Result<i32> {
    let Some(clock) = caller.data().clock else {
        wasmtime::bail!("a deterministic module's store has no virtual clock");
    };
    let Some(memory) = caller.get_export("memory").and_then(|e| e.into_memory()) else {
        return Ok(p1::FAULT);
    };
    let count = count as u32 as usize;
    if count == 0 {
        // As WASI's: sleeping forever is not supported.
        return Ok(p1::INVAL);
    }
    let left = caller.get_fuel().unwrap_or(clock.budget);
    let now = clock.elapsed_ns(left);
    let subs = {
        let data = memory.data(&*caller);
        let start = subs_at as u32 as usize;
        let Some(end) = count
            .checked_mul(p1::SUBSCRIPTION_BYTES)
            .and_then(|n| n.checked_add(start))
        else {
            return Ok(p1::FAULT);
        };
        let Some(bytes) = data.get(start..end) else {
            return Ok(p1::FAULT);
        };
        let mut subs = Vec::with_capacity(count);
        for i in 0..count {
            match subscription(bytes, i, &clock, now) {
                Ok(s) => subs.push(s),
                Err(errno) => return Ok(errno),
            }
        }
        subs
    };
    let mut events: Vec<[u8; p1::EVENT_BYTES]> = subs
        .iter()
        .filter_map(|s| match s {
            Subscription::Ready { userdata, kind } => Some(event(*userdata, *kind)),
            Subscription::Clock { .. } => None,
        })
        .collect();
    let clocks = subs.iter().filter_map(|s| match s {
        Subscription::Clock { userdata, at_ns } => Some((*userdata, *at_ns)),
        Subscription::Ready { .. } => None,
    });
    let mut until = now;
    if events.is_empty() {
        // Only clocks: the first one fires, after the clock moved on to it.
        until = clocks.clone().map(|(_, at)| at).min().unwrap_or(now);
        if let Some(c) = caller.data_mut().clock.as_mut() {
            c.sleep_until(until, left).map_err(Interrupted::from)?;
        }
    }
    events.extend(
        clocks
            .filter(|(_, at)| *at <= until)
            .map(|(userdata, _)| event(userdata, p1::EVENT_CLOCK)),
    );
    let bytes = events.concat();
    let n = u32::try_from(events.len())?;
    let mut ctx = caller.as_context_mut();
    if memory
        .write(&mut ctx, events_at as u32 as usize, &bytes)
        .is_err()
        || memory
            .write(&mut ctx, nevents_at as u32 as usize, &n.to_le_bytes())
            .is_err()
    {
        return Ok(p1::FAULT);
    }
    Ok(p1::SUCCESS)
}

/// Defines preview 1's `poll_oneoff` again for deterministic modules (their
/// own linker: WASI's `poll_oneoff` cannot be called from a definition over
/// it), answered on the virtual clock.
pub(super) fn add_module_sleeps(linker: &mut wasmtime::Linker<ModuleHost>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.func_wrap(
        "wasi_snapshot_preview1",
        "poll_oneoff",
        |mut caller: Caller<'_, ModuleHost>, subs: i32, events: i32, count: i32, nevents: i32| {
            module_poll(&mut caller, subs, events, count, nevents)
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
