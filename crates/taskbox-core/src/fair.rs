//! Who gets the jobs of a claim: start-time fair queueing over tenants,
//! by the runner time their attempts take, not by their count. Each tenant
//! has a virtual time, the runner time it has had divided by its weight;
//! every job picked goes to the tenant whose virtual time is least, and
//! moves it on by what the tenant's jobs are expected to take (a decaying
//! mean of its last attempts) over its weight. When an attempt ends its
//! tenant is charged the difference between what it took and that
//! estimate, so a tenant whose jobs take 100 times as long is picked a
//! hundredth as often and has the same share of the runners' time. A
//! tenant that comes back after a quiet spell starts at the current
//! virtual time, not where it left off, so it cannot save up a burst; and
//! while it is back it is served as its weight says, however many jobs the
//! others have queued.
//!
//! Runner time is the attempt's wall time in its slot, not its fuel: a
//! slot held while a guest waits on a request is a slot no other tenant
//! had. Kept by a store between claims (on SQLite, by its one writer
//! thread) and charged by its finalize; with many claimers each keeps its
//! own, which is fair per claimer.

use crate::records::Finalize;
use crate::time::Millis;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;

/// The name the group of a tenant's jobs without a key contends under (a
/// key is never empty): fair_keys names its groups by it, and a charge of
/// a job without one goes to it.
pub const UNKEYED: &str = "";

/// Tenants whose virtual time is remembered; past it, those not ahead of
/// the current time are forgotten (they would start there anyway).
const MAX_REMEMBERED: usize = 10_000;
/// Least runner time an attempt is charged, in µs: one that reports less
/// (a no-op) still took a claim, a slot and a write.
pub const MIN_COST_US: f64 = 10.0;
/// What a tenant's jobs are expected to take before any of its attempts
/// ended: the mean over every tenant's, or this before any ended at all.
const FIRST_COST_US: f64 = 1_000.0;
/// How fast an estimate follows a tenant's attempts: each end moves it
/// this part of the way, so it reflects its last few dozen attempts.
const DECAY: f64 = 0.1;
/// How long the tenants a claim of every tenant's jobs met count as
/// waiting, for the claims of some tenants' only that come after it.
const RECENT_MS: Millis = 1_000;

/// A tenant with jobs to claim.
#[derive(Debug, Clone)]
pub struct Contender {
    pub tenant: String,
    pub weight: u32,
    /// Most jobs it may still be given (its `max_running` less those running).
    pub room: u64,
    /// It had fewer jobs than a round of this claim gave it: it has no
    /// more (`Fairness::settle`).
    pub ran_out: bool,
}

/// How many of a round's picks each contender got.
pub fn given(picks: &[usize], contenders: usize) -> Vec<usize> {
    let mut given = vec![0usize; contenders];
    for &i in picks {
        given[i] += 1;
    }
    given
}

/// What is remembered of one tenant.
#[derive(Debug, Clone, Copy)]
struct Account {
    /// Its virtual time: runner µs over weight.
    vtime: f64,
    weight: f64,
    /// The runner µs one of its jobs is expected to take.
    cost: f64,
}

pub struct Fairness {
    accounts: HashMap<String, Account>,
    /// The virtual time of the last job picked.
    now: f64,
    /// The decaying mean over every tenant's attempts: a new tenant's first
    /// estimate.
    mean_cost: f64,
    /// Where the last claim's scan of tenants stopped, when there were more
    /// tenants with jobs than one claim looks at.
    pub cursor: Option<String>,
    /// Each tenant's share among its fairness keys (`fair_keys`), kept the
    /// same way one level down.
    within: HashMap<String, Fairness>,
    /// The tenants the last claim of every tenant's jobs picked among, and
    /// when (the store's clock): those that had jobs waiting then.
    last_full: (Millis, Vec<String>),
}

impl Default for Fairness {
    fn default() -> Self {
        Fairness {
            accounts: HashMap::new(),
            now: 0.0,
            mean_cost: FIRST_COST_US,
            cursor: None,
            within: HashMap::new(),
            last_full: (Millis::MIN, Vec::new()),
        }
    }
}

/// A contender's place in the heap: least virtual time first, then the
/// order they came in.
struct Turn(f64, usize);

impl PartialEq for Turn {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Turn {}
impl PartialOrd for Turn {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Turn {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap pops the greatest.
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl Fairness {
    /// A contender's virtual time as its turn starts (never behind the
    /// current time) and what a pick moves it by, its account made if it
    /// had none and its weight as this claim read it.
    fn turn(&mut self, c: &Contender) -> (f64, f64) {
        let (now, mean_cost) = (self.now, self.mean_cost);
        let a = self.accounts.entry(c.tenant.clone()).or_insert(Account {
            vtime: now,
            weight: 1.0,
            cost: mean_cost,
        });
        a.weight = f64::from(c.weight.max(1));
        a.vtime = a.vtime.max(now);
        (a.vtime, a.cost / a.weight)
    }

    fn set_vtime(&mut self, tenant: &str, vtime: f64) {
        if let Some(a) = self.accounts.get_mut(tenant) {
            a.vtime = vtime;
        }
    }

    /// Picks `n` jobs among the contenders; the index of the contender of
    /// each, in the order they were picked. No contender gets more than
    /// its room.
    pub fn pick(&mut self, contenders: &[Contender], n: usize) -> Vec<usize> {
        let turns: Vec<(f64, f64)> = contenders.iter().map(|c| self.turn(c)).collect();
        let mut picks = Vec::with_capacity(n);
        if let [only] = contenders {
            // One tenant: no turns to take.
            let k = n.min(usize::try_from(only.room).unwrap_or(usize::MAX));
            picks.resize(k, 0);
            if k > 0 {
                let (v, step) = turns[0];
                self.now = self.now.max(v + (k - 1) as f64 * step);
                self.set_vtime(&only.tenant, v + k as f64 * step);
            }
            return picks;
        }
        let mut given = vec![0u64; contenders.len()];
        let mut heap: BinaryHeap<Turn> = turns
            .iter()
            .enumerate()
            .filter(|(i, _)| contenders[*i].room > 0)
            .map(|(i, &(v, _))| Turn(v, i))
            .collect();
        while picks.len() < n {
            let Some(Turn(v, i)) = heap.pop() else { break };
            let c = &contenders[i];
            picks.push(i);
            given[i] += 1;
            self.now = self.now.max(v);
            let next = v + turns[i].1;
            self.set_vtime(&c.tenant, next);
            if given[i] < c.room {
                heap.push(Turn(next, i));
            }
        }
        self.forget_idle();
        picks
    }

    /// Picks as `pick` does for a claim of every tenant's jobs, or, for a
    /// claim of some tenants' only (`some`: a runner's for tenants it holds
    /// nothing of, or the one an insert makes), as `pick_behind` does
    /// while another tenant had jobs waiting at the last claim of every
    /// tenant's, at most `RECENT_MS` before `at`; with no other waiting,
    /// as `pick` does.
    pub fn pick_for(
        &mut self,
        contenders: &[Contender],
        n: usize,
        some: bool,
        at: Millis,
    ) -> Vec<usize> {
        if !some {
            self.last_full = (at, contenders.iter().map(|c| c.tenant.clone()).collect());
            return self.pick(contenders, n);
        }
        let (when, waiting) = &self.last_full;
        let others = at.saturating_sub(*when) <= RECENT_MS
            && waiting
                .iter()
                .any(|t| !contenders.iter().any(|c| &c.tenant == t));
        if others {
            self.pick_behind(contenders, n)
        } else {
            self.pick(contenders, n)
        }
    }

    /// Picks among some tenants only, while others wait: one more than a
    /// job ahead of the current virtual time is passed over, and the
    /// current time stays where the claims of all tenants left it. So such
    /// a claim serves a tenant that is due (one that comes back, or one
    /// whose turn it is) at once, but gives none more than its share, and
    /// cannot move the others' turns on.
    fn pick_behind(&mut self, contenders: &[Contender], n: usize) -> Vec<usize> {
        let now = self.now;
        let due: Vec<Contender> = contenders
            .iter()
            .map(|c| {
                let (vtime, step) = self.turn(c);
                Contender {
                    room: if vtime <= now + step { c.room } else { 0 },
                    ..c.clone()
                }
            })
            .collect();
        let picks = self.pick(&due, n);
        self.now = now;
        picks
    }

    /// Takes back `n` picks of a tenant that had fewer jobs than it was
    /// given: it is not charged for service it did not get.
    pub fn refund(&mut self, tenant: &str, n: usize) {
        if let Some(a) = self.accounts.get_mut(tenant) {
            a.vtime -= n as f64 * a.cost / a.weight;
        }
    }

    /// Charges an ended attempt of `tenant`'s: what it took (`ran_us` of
    /// runner time) less what its pick was charged, and moves the tenant's
    /// estimate towards it. `None`: the job was given back without
    /// running, and its pick is taken back.
    pub fn charge(&mut self, tenant: &str, ran_us: Option<u64>) {
        let Some(us) = ran_us else {
            return self.refund(tenant, 1);
        };
        let took = (us as f64).max(MIN_COST_US);
        self.mean_cost += DECAY * (took - self.mean_cost);
        if let Some(a) = self.accounts.get_mut(tenant) {
            a.vtime += (took - a.cost) / a.weight;
            a.cost += DECAY * (took - a.cost);
        }
    }

    /// Settles a round: `got[i]` is what contender `i` had of the
    /// `given[i]` it was picked for, in its order. One that had fewer ran
    /// out: it leaves the rest to the others, who are not charged for it.
    /// The others' room shrinks. Answers what was got in the order picked,
    /// so that a runner starting them in order takes the tenants in turn
    /// too.
    pub fn settle<T>(
        &mut self,
        contenders: &mut [Contender],
        picks: &[usize],
        given: &[usize],
        got: Vec<Vec<T>>,
    ) -> Vec<T> {
        let mut got: Vec<std::collections::VecDeque<T>> = got.into_iter().map(Into::into).collect();
        for ((c, &n), mine) in contenders.iter_mut().zip(given).zip(&got) {
            if n == 0 {
                continue;
            }
            if mine.len() < n {
                self.refund(&c.tenant, n - mine.len());
                c.room = 0;
                c.ran_out = true;
            } else {
                c.room -= mine.len() as u64;
            }
        }
        picks.iter().filter_map(|&i| got[i].pop_front()).collect()
    }

    /// The share among `tenant`'s fairness keys, as its claims pick them.
    pub fn within(&mut self, tenant: &str) -> &mut Fairness {
        self.within.entry(tenant.to_owned()).or_default()
    }

    /// Charges an ended attempt to its tenant and, when the tenant's claims
    /// share among keys, to its key (or the group of those without one).
    pub fn charge_end(&mut self, tenant: &str, key: Option<&str>, ran_us: Option<u64>) {
        self.charge(tenant, ran_us);
        if let Some(keys) = self.within.get_mut(tenant) {
            keys.charge(key.unwrap_or(UNKEYED), ran_us);
        }
    }

    fn forget_idle(&mut self) {
        if self.accounts.len() > MAX_REMEMBERED {
            let now = self.now;
            self.accounts.retain(|_, a| a.vtime > now);
            let accounts = &self.accounts;
            self.within.retain(|t, _| accounts.contains_key(t));
        }
    }
}

/// Charges a finalize's ended attempts to their tenants and keys
/// (`Fairness::charge`).
pub fn charge_ends(fair: &Mutex<Fairness>, ends: &[Finalize]) {
    let mut fair = fair.lock().unwrap_or_else(|p| p.into_inner());
    for end in ends {
        fair.charge_end(
            &end.tenant,
            end.names.fair_key.as_deref(),
            end.usage.as_ref().map(|u| u.runner_us),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(tenant: &str, weight: u32, room: u64) -> Contender {
        Contender {
            tenant: tenant.into(),
            weight,
            room,
            ran_out: false,
        }
    }

    fn shares(picks: &[usize], n: usize) -> Vec<usize> {
        let mut s = vec![0; n];
        for &p in picks {
            s[p] += 1;
        }
        s
    }

    #[test]
    fn equal_weights_take_turns() {
        let mut f = Fairness::default();
        let cs = [c("a", 1, u64::MAX), c("b", 1, u64::MAX)];
        let picks = f.pick(&cs, 10);
        assert_eq!(shares(&picks, 2), [5, 5]);
        assert_eq!(&picks[..4], &[0, 1, 0, 1]);
    }

    #[test]
    fn weights_divide_the_picks() {
        let mut f = Fairness::default();
        let cs = [c("a", 1, u64::MAX), c("b", 3, u64::MAX)];
        let mut total = vec![0; 2];
        for _ in 0..10 {
            for (t, s) in total.iter_mut().zip(shares(&f.pick(&cs, 8), 2)) {
                *t += s;
            }
        }
        assert_eq!(total, [20, 60]);
    }

    #[test]
    fn a_tenant_that_returns_cannot_spend_saved_time() {
        let mut f = Fairness::default();
        // a alone for a long while.
        for _ in 0..100 {
            f.pick(&[c("a", 1, u64::MAX)], 100);
        }
        // b comes: it gets its turn at once, and then only its share.
        let picks = f.pick(&[c("a", 1, u64::MAX), c("b", 1, u64::MAX)], 10);
        assert!(picks[..2].contains(&1), "{picks:?}");
        assert_eq!(shares(&picks, 2), [5, 5]);
    }

    #[test]
    fn room_caps_a_tenant_and_refunds_give_back() {
        let mut f = Fairness::default();
        let picks = f.pick(&[c("a", 1, 2), c("b", 1, u64::MAX)], 10);
        assert_eq!(shares(&picks, 2), [2, 8]);
        f.refund("b", 8);
        // b got nothing of those 8, so it is not behind a.
        let picks = f.pick(&[c("a", 1, u64::MAX), c("b", 1, u64::MAX)], 2);
        assert_eq!(shares(&picks, 2), [1, 1]);
    }

    #[test]
    fn a_job_given_back_unrun_costs_nothing() {
        let mut f = Fairness::default();
        let cs = [c("a", 1, u64::MAX), c("b", 1, u64::MAX)];
        assert_eq!(f.pick(&cs, 2), [0, 1]);
        f.charge("a", None);
        f.charge("b", Some(1_000));
        // a ran nothing, b its estimate: a is first again.
        assert_eq!(f.pick(&cs, 1), [0]);
    }

    /// Runners' slots taking jobs of tenants whose attempts take `cost` µs
    /// each, every slot picking its next job as it frees and charging the
    /// attempt as it ends: each tenant's runner time over `horizon`.
    fn simulate(tenants: &[(&str, u32, u64)], slots: usize, horizon: u64) -> Vec<u64> {
        simulate_jittered(tenants, slots, horizon, 0)
    }

    /// The same, each attempt taking from half to one and a half times its
    /// tenant's cost (`jitter` seeds the draw; 0: exactly its cost).
    fn simulate_jittered(
        tenants: &[(&str, u32, u64)],
        slots: usize,
        horizon: u64,
        jitter: u64,
    ) -> Vec<u64> {
        let mut seed = jitter;
        let mut draw = |cost: u64| {
            if jitter == 0 {
                return cost;
            }
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            cost / 2 + (seed >> 33) % cost.max(1)
        };
        let mut f = Fairness::default();
        let cs: Vec<Contender> = tenants.iter().map(|&(t, w, _)| c(t, w, u64::MAX)).collect();
        let mut ran = vec![0u64; tenants.len()];
        // (time the slot frees, tenant of the attempt ending then and
        // what it took)
        let mut busy: Vec<(u64, Option<(usize, u64)>)> = vec![(0, None); slots];
        loop {
            let (slot, &(at, ending)) = busy
                .iter()
                .enumerate()
                .min_by_key(|(_, (at, _))| *at)
                .unwrap();
            if at >= horizon {
                return ran;
            }
            if let Some((i, took)) = ending {
                f.charge(tenants[i].0, Some(took));
            }
            let i = f.pick(&cs, 1)[0];
            let cost = draw(tenants[i].2);
            ran[i] += cost.min(horizon - at);
            busy[slot] = (at + cost, Some((i, cost)));
        }
    }

    fn share(ran: &[u64], i: usize) -> f64 {
        ran[i] as f64 / ran.iter().sum::<u64>() as f64
    }

    #[test]
    fn a_tenant_a_hundred_times_heavier_gets_the_same_runner_time_not_more() {
        // 4 slots for 60 s: a's attempts take 100 ms, b's 1 ms.
        let ran = simulate(&[("a", 1, 100_000), ("b", 1, 1_000)], 4, 60_000_000);
        let a = share(&ran, 0);
        assert!((a - 0.5).abs() < 0.05, "a had {a:.3} of the runner time");
        // Counting picks, as before, a would have had 100/101 of it.
    }

    #[test]
    fn attempts_that_vary_around_their_estimate_still_share_the_time() {
        // A light tenant is picked at the current virtual time over and
        // over; an attempt shorter than its estimate must still count.
        for seed in [1, 7, 42] {
            let ran = simulate_jittered(&[("a", 1, 100_000), ("b", 1, 1_000)], 2, 60_000_000, seed);
            let b = share(&ran, 1);
            assert!(
                (b - 0.5).abs() < 0.05,
                "seed {seed}: b had {b:.3} of the runner time"
            );
        }
    }

    #[test]
    fn a_claim_of_some_tenants_gives_none_more_than_its_share() {
        let mut f = Fairness::default();
        let (a, b) = (c("a", 1, u64::MAX), c("b", 1, u64::MAX));
        let both = [a.clone(), b.clone()];
        assert_eq!(shares(&f.pick_for(&both, 2, false, 0), 2), [1, 1]);
        // Claims for a alone while b waits: a is served while it is due,
        // one job ahead at most, and then not until b has had its turn.
        let mut got = 0;
        for _ in 0..10 {
            got += f.pick_for(std::slice::from_ref(&a), 1, true, 500).len();
        }
        assert_eq!(got, 1);
        // b's turns are where they were: it has the next pick, and the two
        // take turns again after it.
        assert_eq!(f.pick(&[a.clone(), b.clone()], 1), [1]);
        assert_eq!(shares(&f.pick(&[a.clone(), b.clone()], 4), 2), [2, 2]);
        // A tenant that comes back is due at once.
        let late = c("late", 1, u64::MAX);
        assert_eq!(f.pick_for(std::slice::from_ref(&late), 1, true, 500), [0]);
        // Once no other tenant has waited for a while, a tenant alone is
        // served as a claim of every tenant's would serve it.
        let alone = f.pick_for(std::slice::from_ref(&a), 5, true, 2_000);
        assert_eq!(alone.len(), 5);
    }

    #[test]
    fn weights_divide_the_runner_time() {
        let ran = simulate(&[("a", 1, 100_000), ("b", 3, 1_000)], 4, 60_000_000);
        let b = share(&ran, 1);
        assert!((b - 0.75).abs() < 0.05, "b had {b:.3} of the runner time");
        let ran = simulate(&[("a", 3, 100_000), ("b", 1, 1_000)], 4, 60_000_000);
        let a = share(&ran, 0);
        assert!((a - 0.75).abs() < 0.05, "a had {a:.3} of the runner time");
    }

    #[test]
    fn equal_costs_share_as_picks_did() {
        let ran = simulate(&[("a", 1, 500), ("b", 1, 500), ("c", 2, 500)], 3, 1_000_000);
        assert!((share(&ran, 2) - 0.5).abs() < 0.02, "{ran:?}");
        assert!((share(&ran, 0) - 0.25).abs() < 0.02, "{ran:?}");
    }

    #[test]
    fn an_attempt_charges_at_least_the_floor() {
        let mut f = Fairness::default();
        let cs = [c("a", 1, u64::MAX), c("b", 1, u64::MAX)];
        for _ in 0..200 {
            for i in f.pick(&cs, 2) {
                // a reports nothing; b its floor: they share as equals.
                f.charge(cs[i].tenant.as_str(), Some(if i == 0 { 0 } else { 10 }));
            }
        }
        assert_eq!(shares(&f.pick(&cs, 100), 2), [50, 50]);
    }
}
