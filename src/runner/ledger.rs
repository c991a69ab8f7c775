//! Fuel budgets as this runner sees them: what its claims were told a
//! tenant had used in the window, plus what its own attempts burned since.
//! A job of a tenant whose window is spent is not started (it goes back to
//! the queue until the next window); the attempt that overdrew it finished.

use crate::quota::{window_start, WINDOW_MS};
use crate::store::{FuelWindow, Millis};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// Tenants remembered; past it, those of old windows are forgotten.
const MAX_TENANTS: usize = 10_000;

#[derive(Default)]
pub struct Ledger(Mutex<HashMap<String, FuelWindow>>);

impl Ledger {
    fn map(&self) -> MutexGuard<'_, HashMap<String, FuelWindow>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes what a claim saw of a tenant's budget.
    pub fn saw(&self, tenant: &str, seen: FuelWindow) {
        let mut map = self.map();
        if map.len() >= MAX_TENANTS && !map.contains_key(tenant) {
            map.retain(|_, w| w.start >= seen.start);
        }
        match map.get_mut(tenant) {
            Some(w) if w.start == seen.start => {
                w.used = w.used.max(seen.used);
                w.budget = seen.budget;
            }
            Some(w) if w.start > seen.start => {}
            _ => {
                map.insert(tenant.to_owned(), seen);
            }
        }
    }

    /// Whether the tenant may start an attempt at `now`; if not, when its
    /// next window begins.
    pub fn admit(&self, tenant: &str, now: Millis) -> Result<(), Millis> {
        match self.map().get(tenant) {
            Some(w) if w.start == window_start(now) && w.used >= w.budget => {
                Err(w.start + WINDOW_MS)
            }
            _ => Ok(()),
        }
    }

    /// Charges an attempt's fuel to the tenant's current window.
    pub fn spend(&self, tenant: &str, now: Millis, fuel: u64) {
        if let Some(w) = self.map().get_mut(tenant) {
            if w.start == window_start(now) {
                w.used = w.used.saturating_add(fuel);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_window_stops_starts_until_the_next() {
        let l = Ledger::default();
        let now = 10 * WINDOW_MS + 5;
        assert!(
            l.admit("a", now).is_ok(),
            "no budget known: the claim decided"
        );
        l.saw(
            "a",
            FuelWindow {
                start: 10 * WINDOW_MS,
                budget: 100,
                used: 40,
            },
        );
        assert!(l.admit("a", now).is_ok());
        l.spend("a", now, 70);
        assert_eq!(l.admit("a", now), Err(11 * WINDOW_MS));
        assert!(l.admit("b", now).is_ok());
        // The next window starts afresh.
        assert!(l.admit("a", 11 * WINDOW_MS).is_ok());
        // A claim that saw less does not undo what was spent here.
        l.saw(
            "a",
            FuelWindow {
                start: 10 * WINDOW_MS,
                budget: 100,
                used: 50,
            },
        );
        assert_eq!(l.admit("a", now), Err(11 * WINDOW_MS));
    }
}
