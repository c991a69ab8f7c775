//! Each tenant's share of one runner: what its attempts here cost (a
//! decaying mean of their time in a slot), how many of its jobs the runner
//! may hold waiting by that cost (claim-ahead, per tenant), and its virtual
//! time, by which the dispatch starts the waiting tenant that has had the
//! least of the slots for its weight.
//!
//! The store's claim shares what a runner takes by runner time (`store::fair`);
//! this keeps the same rule for what it has taken. Without it, jobs claimed
//! ahead started in turns by count, so a tenant whose attempts took a
//! hundred times longer held nearly every slot; and claim-ahead sized by
//! every tenant's mean let one tenant whose jobs turned slow hold
//! thousands of them, claimed, while another's waited unclaimed behind
//! them (DESIGN §3.4.0d).

use crate::store::TenantCaps;
use std::collections::HashMap;
use std::time::Duration;

/// The runner time, per slot, of one tenant's jobs a runner may hold
/// waiting, unless the server is told otherwise (`--claim-ahead-ms`):
/// enough that a slot never idles for a claim's round trip, small
/// enough that what is held is gone soon when another tenant comes.
pub const AHEAD_PER_SLOT: Duration = Duration::from_millis(50);
/// The runner time, on all its slots, of a tenant's jobs a runner keeps
/// however its cost wavers: what is held beyond its `ahead` is given back
/// only past this much work (`Share::keeps`). A give-back is a write and
/// the jobs' claim again; for short jobs it bought nothing and cost the
/// SQLite burn-down 14 % (a no-op's cost wavers by more than twice, and
/// one in nine jobs went back and was claimed again).
pub const KEEP_AT_LEAST: Duration = Duration::from_secs(1);
/// How fast a tenant's cost follows its attempts: each end moves it this
/// part of the way.
const DECAY: f64 = 0.125;
/// Most an attempt's time counts for in its tenant's cost: this many
/// times the cost so far. An attempt that stalled (its thread waited for
/// a core while the store's writer synced, a page fault) is not a trend:
/// counted whole, one 5 ms stall of a 20 µs no-op made its tenant's cost
/// 30 times what it was and gave back most of what it held, to claim it
/// again (87 give-backs in one `bench queue` burn-down). Capped, a cost
/// still rises almost twofold an end: a tenant whose jobs really turned
/// a thousand times slower is known as such within a dozen of them. The
/// virtual time is charged what each attempt took, whole.
const RISE: f64 = 8.0;
/// Least cost an attempt is counted at, in µs: one that reports less still
/// took a claim, a slot and a write.
const MIN_COST_US: f64 = 10.0;
/// Tenants remembered; past it, those not ahead of the current virtual
/// time are forgotten (they would start there anyway, and a tenant whose
/// cost is forgotten is held to the slots until it is known again).
const MAX_REMEMBERED: usize = 4_096;

#[derive(Debug, Clone, Copy)]
struct Account {
    /// µs one of its attempts is expected to take here; `None` until one
    /// ended.
    cost: Option<f64>,
    /// Its virtual time: runner µs over weight.
    vtime: f64,
    weight: f64,
}

/// The tenants' shares of one runner's slots.
#[derive(Debug)]
pub struct Share {
    slots: usize,
    /// The runner time, per slot, of a tenant's jobs it may hold
    /// (`AHEAD_PER_SLOT` unless the server is told otherwise).
    per_slot: Duration,
    /// Most jobs held waiting in all (`runner::MAX_PREFETCH`).
    most: usize,
    accounts: HashMap<String, Account>,
    /// The virtual time of the last start.
    now: f64,
}

impl Share {
    pub fn new(slots: usize, most: usize) -> Self {
        Share {
            slots,
            per_slot: AHEAD_PER_SLOT,
            most: most.max(slots),
            accounts: HashMap::new(),
            now: 0.0,
        }
    }

    /// Holds each tenant's jobs for `per_slot` of its runner time a slot
    /// (`--claim-ahead-ms`).
    pub fn holding(mut self, per_slot: Duration) -> Self {
        self.per_slot = per_slot;
        self
    }

    /// The most jobs one tenant may hold here.
    pub fn most(&self) -> usize {
        self.most
    }

    /// How many of a tenant's jobs may be held here (waiting or running): its slots' worth of
    /// `AHEAD_PER_SLOT` at its own cost, never fewer than the slots (so
    /// that its jobs can fill them) nor more than `most`. A tenant whose
    /// cost is not known yet gets the slots.
    pub fn ahead(&self, tenant: &str) -> usize {
        let Some(cost) = self.accounts.get(tenant).and_then(|a| a.cost) else {
            return self.slots;
        };
        let window = self.per_slot.as_micros() as f64 * self.slots as f64;
        ((window / cost).ceil() as usize).clamp(self.slots, self.most)
    }

    /// How many of a tenant's jobs held here are kept (the rest given
    /// back): twice its `ahead`, so that a cost that wavers does not give
    /// back and claim again, and never fewer than make [`KEEP_AT_LEAST`]
    /// of runner time on the slots; a tenant whose cost is not known keeps
    /// everything.
    pub fn keeps(&self, tenant: &str) -> usize {
        let Some(cost) = self.accounts.get(tenant).and_then(|a| a.cost) else {
            return usize::MAX;
        };
        let work = KEEP_AT_LEAST.as_micros() as f64 * self.slots as f64;
        let least = (work / cost).ceil();
        // `as` saturates a float past usize's range.
        (2 * self.ahead(tenant)).max(least as usize)
    }

    /// What a claim may take of each tenant: its `ahead` less what of it
    /// is here already (`here`); a tenant not known, the slots.
    pub fn caps(&self, here: impl Fn(&str) -> usize) -> TenantCaps {
        let cap = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        TenantCaps {
            others: Some(cap(self.slots)),
            named: self
                .accounts
                .keys()
                .map(|t| (t.clone(), cap(self.ahead(t).saturating_sub(here(t)))))
                .collect(),
        }
    }

    /// A tenant's virtual time as its turn comes (never behind the current
    /// one: a tenant back from a quiet spell cannot spend saved time).
    pub fn vtime(&self, tenant: &str) -> f64 {
        self.accounts
            .get(tenant)
            .map_or(self.now, |a| a.vtime.max(self.now))
    }

    /// A tenant's attempt starts: it is charged what its attempts are
    /// expected to take, over its weight (corrected when it ends).
    pub fn start(&mut self, tenant: &str, weight: u32) {
        let now = self.now;
        let a = self.account(tenant);
        a.weight = f64::from(weight.max(1));
        a.vtime = a.vtime.max(now);
        let start = a.vtime;
        a.vtime += a.cost.unwrap_or(0.0) / a.weight;
        self.now = self.now.max(start);
    }

    /// A tenant's attempt ran for `ran`: its cost follows, and it is
    /// charged what the attempt took beyond what its start was charged.
    pub fn ended(&mut self, tenant: &str, ran: Duration) {
        let took = (ran.as_micros() as f64).max(MIN_COST_US);
        let a = self.account(tenant);
        let expected = a.cost.unwrap_or(0.0);
        a.vtime += (took - expected) / a.weight;
        a.cost = Some(match a.cost {
            Some(c) => c + DECAY * (took.min(RISE * c) - c),
            None => took,
        });
    }

    /// A started attempt that did not run (given back): its charge undone.
    pub fn unstarted(&mut self, tenant: &str) {
        if let Some(a) = self.accounts.get_mut(tenant) {
            a.vtime -= a.cost.unwrap_or(0.0) / a.weight;
        }
    }

    fn account(&mut self, tenant: &str) -> &mut Account {
        if self.accounts.len() >= MAX_REMEMBERED && !self.accounts.contains_key(tenant) {
            let now = self.now;
            self.accounts.retain(|_, a| a.vtime > now);
        }
        let now = self.now;
        self.accounts.entry(tenant.to_owned()).or_insert(Account {
            cost: None,
            vtime: now,
            weight: 1.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_tenant_is_held_ahead_by_its_own_cost() {
        let mut s = Share::new(2, 2048);
        assert_eq!(s.ahead("new"), 2, "not known yet: the slots");
        s.ended("quick", Duration::from_micros(40));
        s.ended("slow", 300 * MS);
        assert_eq!(s.ahead("quick"), 2048, "capped at the most");
        assert_eq!(s.ahead("slow"), 2, "never fewer than the slots");
        s.ended("mid", 10 * MS);
        assert_eq!(s.ahead("mid"), 10, "2 slots × 50 ms over 10 ms");
        let caps = s.caps(|t| if t == "mid" { 4 } else { 0 });
        assert_eq!(caps.of("mid"), 6, "less what waits");
        assert_eq!(caps.of("quick"), 2048);
        assert_eq!(caps.of("stranger"), 2);
    }

    #[test]
    fn a_tenant_whose_jobs_turn_slow_is_held_to_the_slots_soon() {
        let mut s = Share::new(2, 2048);
        for _ in 0..50 {
            s.ended("a", Duration::from_micros(20));
        }
        assert_eq!(s.ahead("a"), 2048);
        s.ended("a", 300 * MS);
        assert!(s.ahead("a") > 1024, "one slow end is not a trend");
        let mut ends = 1;
        while s.ahead("a") > 2 {
            s.ended("a", 300 * MS);
            ends += 1;
        }
        assert!(
            (10..=20).contains(&ends),
            "held to the slots after {ends} slow ends"
        );
    }

    #[test]
    fn a_stalled_attempt_moves_the_cost_a_little_and_is_charged_whole() {
        let mut s = Share::new(1, 2048);
        s.start("a", 1);
        s.ended("a", Duration::from_micros(20));
        let before = s.vtime("a");
        s.start("a", 1);
        s.ended("a", 5 * MS);
        let cost = s.accounts["a"].cost.unwrap();
        assert!((37.0..38.0).contains(&cost), "cost {cost} µs");
        let charged = s.vtime("a") - before;
        assert!((charged - 5_000.0).abs() < 1.0, "charged {charged} µs");
    }

    /// Two tenants, two slots, each slot starting the waiting tenant of
    /// least virtual time whenever it frees: their shares of the runner
    /// time.
    fn run(costs: [(Duration, u32); 2], horizon: Duration) -> [f64; 2] {
        let mut s = Share::new(2, 2048);
        let names = ["a", "b"];
        let mut ran = [Duration::ZERO; 2];
        // (free at, tenant running there)
        let mut slots: Vec<(Duration, Option<usize>)> = vec![(Duration::ZERO, None); 2];
        loop {
            slots.sort_by_key(|x| x.0);
            let (at, was) = slots[0];
            if at >= horizon {
                break;
            }
            if let Some(t) = was {
                s.ended(names[t], costs[t].0);
            }
            let t = if s.vtime("a") <= s.vtime("b") { 0 } else { 1 };
            s.start(names[t], costs[t].1);
            ran[t] += costs[t].0;
            slots[0] = (at + costs[t].0, Some(t));
        }
        let all = (ran[0] + ran[1]).as_secs_f64();
        [ran[0].as_secs_f64() / all, ran[1].as_secs_f64() / all]
    }

    #[test]
    fn a_tenant_a_hundred_times_lighter_gets_half_the_slots_time() {
        let [heavy, light] = run([(1000 * MS, 1), (10 * MS, 1)], Duration::from_secs(60));
        assert!(
            (0.45..=0.55).contains(&light),
            "light {light}, heavy {heavy}"
        );
    }

    #[test]
    fn weights_divide_the_slots_time() {
        let [one, three] = run([(5 * MS, 1), (5 * MS, 3)], Duration::from_secs(60));
        assert!((0.72..=0.78).contains(&three), "1:3 gave {one}:{three}");
    }

    #[test]
    fn a_tenant_back_from_a_quiet_spell_cannot_spend_saved_time() {
        let mut s = Share::new(1, 2048);
        for _ in 0..100 {
            s.start("busy", 1);
            s.ended("busy", 10 * MS);
        }
        s.start("busy", 1);
        assert!(s.vtime("back") >= s.vtime("busy") - 10_000.0);
        s.start("back", 1);
        s.ended("back", 10 * MS);
        s.start("back", 1);
        assert!(
            s.vtime("back") > s.vtime("busy"),
            "after two starts it is behind the busy one again"
        );
    }
}
