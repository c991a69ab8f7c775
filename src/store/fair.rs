//! Who gets the jobs of a claim: start-time fair queueing over tenants.
//! Each tenant has a virtual time, the service it has had divided by its
//! weight; every job picked goes to the tenant whose virtual time is least,
//! and moves it on by 1 / weight. A tenant that comes back after a quiet
//! spell starts at the current virtual time, not where it left off, so it
//! cannot save up a burst; and while it is back it is served as often as
//! its weight says, however many jobs the others have queued.
//!
//! Kept by a store between claims (on SQLite, by its one writer thread);
//! with many claimers each keeps its own, which is fair per claimer.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Tenants whose virtual time is remembered; past it, those not ahead of
/// the current time are forgotten (they would start there anyway).
const MAX_REMEMBERED: usize = 10_000;

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

#[derive(Default)]
pub struct Fairness {
    vtime: HashMap<String, f64>,
    /// The virtual time of the last job picked.
    now: f64,
    /// Where the last claim's scan of tenants stopped, when there were more
    /// tenants with jobs than one claim looks at.
    pub cursor: Option<String>,
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
    fn start(&self, tenant: &str) -> f64 {
        self.vtime.get(tenant).map_or(self.now, |v| v.max(self.now))
    }

    /// Picks `n` jobs among the contenders; the index of the contender of
    /// each, in the order they were picked. No contender gets more than
    /// its room.
    pub fn pick(&mut self, contenders: &[Contender], n: usize) -> Vec<usize> {
        let mut picks = Vec::with_capacity(n);
        if let [only] = contenders {
            // One tenant: no turns to take.
            let k = n.min(usize::try_from(only.room).unwrap_or(usize::MAX));
            picks.resize(k, 0);
            let v = self.start(&only.tenant) + k as f64 / f64::from(only.weight.max(1));
            self.now = self.now.max(v - 1.0 / f64::from(only.weight.max(1)));
            self.vtime.insert(only.tenant.clone(), v);
            return picks;
        }
        let mut given = vec![0u64; contenders.len()];
        let mut heap: BinaryHeap<Turn> = contenders
            .iter()
            .enumerate()
            .filter(|(_, c)| c.room > 0)
            .map(|(i, c)| Turn(self.start(&c.tenant), i))
            .collect();
        while picks.len() < n {
            let Some(Turn(v, i)) = heap.pop() else { break };
            let c = &contenders[i];
            picks.push(i);
            given[i] += 1;
            self.now = self.now.max(v);
            let next = v + 1.0 / f64::from(c.weight.max(1));
            self.vtime.insert(c.tenant.clone(), next);
            if given[i] < c.room {
                heap.push(Turn(next, i));
            }
        }
        self.forget_idle();
        picks
    }

    /// Takes back `n` picks of a tenant that had fewer jobs than it was
    /// given: it is not charged for service it did not get.
    pub fn refund(&mut self, tenant: &str, weight: u32, n: usize) {
        if let Some(v) = self.vtime.get_mut(tenant) {
            *v -= n as f64 / f64::from(weight.max(1));
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
                self.refund(&c.tenant, c.weight, n - mine.len());
                c.room = 0;
                c.ran_out = true;
            } else {
                c.room -= mine.len() as u64;
            }
        }
        picks.iter().filter_map(|&i| got[i].pop_front()).collect()
    }

    fn forget_idle(&mut self) {
        if self.vtime.len() > MAX_REMEMBERED {
            let now = self.now;
            self.vtime.retain(|_, v| *v > now);
        }
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
        f.refund("b", 1, 8);
        // b got nothing of those 8, so it is not behind a.
        let picks = f.pick(&[c("a", 1, u64::MAX), c("b", 1, u64::MAX)], 2);
        assert_eq!(shares(&picks, 2), [1, 1]);
    }
}
