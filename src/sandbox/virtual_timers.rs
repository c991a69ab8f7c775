//! A deterministic attempt's clock subscriptions, as its store keeps them:
//! each pollable that waits on a virtual instant, and that instant
//! (`sleeps.rs` answers the waits; the host holds one of these a store).

use std::collections::HashMap;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::p2::{subscribe, DynPollable, Pollable};

/// A clock subscription of a deterministic attempt: the virtual instant it
/// waits for, and the pollable that waits on it (to tell a reused slot).
struct VirtualTimer {
    at_ns: u64,
    pollable: u32,
}

#[wasmtime_wasi::async_trait]
impl Pollable for VirtualTimer {
    async fn ready(&mut self) {
        // Only this file's `poll`, `block` and `ready` wait on a virtual
        // timer, and they read the virtual clock; a real wait never does.
        std::future::pending::<()>().await;
    }
}

/// One store's virtual timers: the timer each of their pollables waits on.
/// An entry whose pollable was dropped is found out (and forgotten) when
/// its slot is looked up again; there are never more entries than slots.
#[derive(Default)]
pub struct VirtualTimers(HashMap<u32, u32>);

impl VirtualTimers {
    /// A pollable for a timer that fires at `at_ns`.
    pub(super) fn push(
        &mut self,
        table: &mut ResourceTable,
        at_ns: u64,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        let timer = table.push(VirtualTimer { at_ns, pollable: 0 })?;
        let timer_rep = timer.rep();
        // Owned: dropping the pollable drops the timer.
        let pollable = subscribe(table, timer)?;
        table
            .get_mut(&Resource::<VirtualTimer>::new_borrow(timer_rep))?
            .pollable = pollable.rep();
        self.0.insert(pollable.rep(), timer_rep);
        Ok(pollable)
    }

    /// The instant `pollable` waits for, when it is a virtual timer's.
    pub(super) fn deadline(&mut self, table: &ResourceTable, pollable: u32) -> Option<u64> {
        let timer = *self.0.get(&pollable)?;
        match table.get(&Resource::<VirtualTimer>::new_borrow(timer)) {
            Ok(t) if t.pollable == pollable => Some(t.at_ns),
            _ => {
                self.0.remove(&pollable);
                None
            }
        }
    }
}
