//! The jobs a runner has claimed but not started, one line per tenant, and
//! the rule for which starts next: tenants take turns; at most `slots`
//! attempts run at once, except that a tenant with nothing running may
//! start one more beyond them (up to `slots` such in all). So a tenant
//! that sends a job now and then starts it at once, even while another
//! tenant's long attempts fill every slot.
//!
//! Such a job (its tenant has nothing running) is the prompt lane's while
//! the lane is free: a worker of its own, on a thread of normal priority,
//! starts it, so that it does not wait for a core behind the guests of
//! the tenants that keep the slots busy (see `runner::lane`).
//!
//! Among the tenants whose turn it may be, the one that has had the least
//! of the slots for its weight starts (`runner::share`): the runner time
//! its attempts took here, not their count, as the store's claim shares
//! what a runner takes. A tenant's jobs held beyond what its own cost
//! allows (its attempts turned slow) are given back unbegun
//! (`Dispatch::finished`).
//!
//! Only a begun job starts (`ClaimedJob::begun`): a job claimed ahead of
//! the slots waits, passed over, until the marker (`runner::marker`) has
//! marked it begun in the store, so that a runner killed with jobs it
//! never started leaves them uncounted. The marker marks the jobs at the
//! front of the lines, tenants in turn, a window ahead of the starts.

use super::share::Share;
use crate::store::{ClaimedJob, TenantCaps};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;

/// The dispatch was closed: the runner is stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// Who asks for the next job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Picker {
    Worker,
    Lane,
}

/// Which allowance an attempt started under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seat {
    /// One of the runner's slots.
    Slot,
    /// Beyond the slots: its tenant had nothing running.
    Extra,
}

/// A tenant's waiting jobs: those begun, then those being marked, then
/// the rest (a job claimed begun goes in before the others), so that only
/// the front need be looked at to start one, and only the `ahead`th to
/// mark one.
#[derive(Default)]
struct Line {
    jobs: VecDeque<ClaimedJob>,
    /// How many at the front are begun or being marked.
    ahead: usize,
}

struct State {
    lines: HashMap<String, Line>,
    /// Tenants with jobs waiting, in turn order.
    turns: VecDeque<String>,
    running: HashMap<String, usize>,
    in_slots: usize,
    extra: usize,
    waiting: usize,
    closed: bool,
    /// The prompt lane is starting or running an attempt.
    lane_busy: bool,
    /// Waiting jobs that are begun (they may start).
    begun_waiting: usize,
    /// Waiting jobs being marked begun, and their tenants.
    marking: HashMap<String, String>,
    /// Waiting jobs neither begun nor being marked.
    unmarked: usize,
    /// Attempts started, ever.
    picks: u64,
    share: Share,
}

pub struct Dispatch {
    slots: usize,
    /// Whether a prompt lane takes the jobs of tenants with nothing
    /// running while it is free.
    lane: bool,
    state: Mutex<State>,
    /// Rung when a job is added or an attempt ends.
    ready: Notify,
    /// The same, for the prompt lane.
    lane_ready: Notify,
    /// Rung when a job that is not begun is added, and with each start
    /// while there are such: the marker looks.
    mark_wanted: Notify,
}

impl Dispatch {
    pub fn new(slots: usize) -> Self {
        Dispatch {
            slots,
            lane: false,
            state: Mutex::new(State {
                lines: HashMap::new(),
                turns: VecDeque::new(),
                running: HashMap::new(),
                in_slots: 0,
                extra: 0,
                waiting: 0,
                closed: false,
                lane_busy: false,
                begun_waiting: 0,
                marking: HashMap::new(),
                unmarked: 0,
                picks: 0,
                share: Share::new(
                    slots,
                    (slots * super::PREFETCH_PER_SLOT).clamp(slots, super::MAX_PREFETCH),
                ),
            }),
            ready: Notify::new(),
            lane_ready: Notify::new(),
            mark_wanted: Notify::new(),
        }
    }

    /// Holds each tenant's jobs for `per_slot` of its runner time a slot
    /// (`Share::holding`).
    pub fn holding(self, per_slot: Duration) -> Self {
        let mut s = self.state.into_inner().unwrap_or_else(|p| p.into_inner());
        s.share = s.share.holding(per_slot);
        Dispatch {
            state: Mutex::new(s),
            ..self
        }
    }

    /// A dispatch whose idle tenants' jobs go to a prompt lane while it is
    /// free (`next_prompt`); the other workers take them only while it is
    /// busy.
    pub fn with_lane(slots: usize) -> Self {
        Dispatch {
            lane: true,
            ..Dispatch::new(slots)
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the tenant has a job waiting here to start.
    pub fn has_waiting(&self, tenant: &str) -> bool {
        self.state()
            .lines
            .get(tenant)
            .is_some_and(|l| !l.jobs.is_empty())
    }

    /// Whether an attempt of the tenant's runs here.
    pub fn has_running(&self, tenant: &str) -> bool {
        self.state().running.contains_key(tenant)
    }

    /// Jobs waiting or running here (a job whose attempt ended, its end
    /// not yet written, is no longer here).
    pub fn load(&self) -> usize {
        let s = self.state();
        s.waiting + s.in_slots + s.extra
    }

    /// Adds claimed jobs, each to the back of its tenant's line. Answers
    /// whether one is of a tenant with nothing running while every slot is
    /// taken and no prompt lane is free (it may start beyond them, and
    /// running guests should yield).
    /// Once closed, it takes none: they are answered, to be given back.
    pub fn push(&self, jobs: Vec<ClaimedJob>) -> Result<bool, Vec<ClaimedJob>> {
        if jobs.is_empty() {
            return Ok(false);
        }
        let mut s = self.state();
        if s.closed {
            return Err(jobs);
        }
        // A free lane starts such a job itself: no guest need yield.
        let full = s.in_slots >= self.slots && (!self.lane || s.lane_busy);
        let idle = full
            && jobs
                .iter()
                .any(|j| s.running.get(&j.tenant).copied().unwrap_or(0) == 0);
        for job in jobs {
            if job.begun {
                s.begun_waiting += 1;
            } else {
                s.unmarked += 1;
            }
            let line = s.lines.entry(job.tenant.clone()).or_default();
            let first = line.jobs.is_empty();
            let tenant = first.then(|| job.tenant.clone());
            if job.begun {
                // Before those that are not, which start only once marked:
                // so that a begun job is never stuck behind them.
                let at = line
                    .jobs
                    .iter()
                    .position(|j| !j.begun)
                    .unwrap_or(line.jobs.len());
                line.jobs.insert(at, job);
                line.ahead += 1;
            } else {
                line.jobs.push_back(job);
            }
            if let Some(tenant) = tenant {
                s.turns.push_back(tenant);
            }
            s.waiting += 1;
        }
        let for_lane = self.lane_has_work(&s);
        let to_mark = s.unmarked > 0;
        drop(s);
        self.ready.notify_one();
        if for_lane {
            self.lane_ready.notify_one();
        }
        if to_mark {
            self.mark_wanted.notify_one();
        }
        Ok(idle)
    }

    /// Takes out the waiting copy of a job held under `stale`, a lease
    /// that ran out: the job was claimed again under a new one. The copy
    /// must neither start nor count (its tenant's line would hold the job
    /// twice, and a mark of one would count as a mark of both). Answers
    /// whether it was here.
    pub fn drop_stale(&self, tenant: &str, id: &str, stale: &str) -> bool {
        let mut s = self.state();
        let Some(line) = s.lines.get_mut(tenant) else {
            return false;
        };
        let Some(at) = line
            .jobs
            .iter()
            .position(|j| j.id == id && j.lease_token == stale)
        else {
            return false;
        };
        let Some(old) = line.jobs.remove(at) else {
            return false;
        };
        let was_ahead = at < line.ahead;
        if was_ahead {
            line.ahead -= 1;
        }
        if line.jobs.is_empty() {
            s.lines.remove(tenant);
            s.turns.retain(|t| t != tenant);
        }
        s.waiting -= 1;
        if old.begun {
            s.begun_waiting -= 1;
        } else if was_ahead {
            // Being marked: the mark's answer finds it gone.
            s.marking.remove(id);
        } else {
            s.unmarked -= 1;
        }
        true
    }

    /// When those begun or being marked are down to half of `window`,
    /// the waiting jobs that are neither, up to `window` ahead, from the
    /// front of the lines, tenants in turn: (id, lease token) of each, now
    /// being marked. Half, so that each mark is of many jobs.
    pub fn to_mark(&self, window: usize) -> Vec<(String, String)> {
        let mut s = self.state();
        let ahead = s.begun_waiting + s.marking.len();
        if ahead > window / 2 {
            return Vec::new();
        }
        let want = (window - ahead).min(s.unmarked);
        let mut out = Vec::with_capacity(want);
        while out.len() < want {
            let before = out.len();
            let State {
                turns,
                lines,
                marking,
                ..
            } = &mut *s;
            for tenant in turns.iter() {
                if out.len() == want {
                    break;
                }
                let Some(line) = lines.get_mut(tenant) else {
                    continue;
                };
                if let Some(job) = line.jobs.get(line.ahead) {
                    marking.insert(job.id.clone(), tenant.clone());
                    out.push((job.id.clone(), job.lease_token.clone()));
                    line.ahead += 1;
                }
            }
            if out.len() == before {
                break;
            }
        }
        s.unmarked -= out.len();
        out
    }

    /// The marker's write of `to_mark`'s jobs committed (`true`: they
    /// may start) or failed (they are to be marked again).
    pub fn marked(&self, jobs: &[(String, String)], committed: bool) {
        let mut s = self.state();
        let mut by_tenant: HashMap<String, HashSet<&str>> = HashMap::new();
        for (id, _) in jobs {
            if let Some(tenant) = s.marking.remove(id) {
                by_tenant.entry(tenant).or_default().insert(id.as_str());
            }
        }
        let mut changed = 0;
        for (tenant, ids) in &by_tenant {
            let Some(line) = s.lines.get_mut(tenant) else {
                continue;
            };
            // Being marked, they are the last of the line's ahead (one
            // mark is made at a time; a job claimed begun goes before
            // them): a failed mark leaves them where they are, behind it.
            let mut found = 0;
            for job in line.jobs.iter_mut().take(line.ahead) {
                if !job.begun && ids.contains(job.id.as_str()) {
                    job.begun = committed;
                    found += 1;
                }
            }
            if !committed {
                line.ahead -= found;
            }
            changed += found;
        }
        if committed {
            s.begun_waiting += changed;
        } else {
            s.unmarked += changed;
        }
        let for_lane = self.lane_has_work(&s);
        drop(s);
        self.ready.notify_one();
        if for_lane {
            self.lane_ready.notify_one();
        }
    }

    /// Waits until the marker may have something to mark.
    pub async fn mark_wanted(&self) {
        self.mark_wanted.notified().await;
    }

    /// Waiting jobs that are begun.
    pub fn begun_waiting(&self) -> usize {
        self.state().begun_waiting
    }

    /// Attempts started here, ever.
    pub fn picks(&self) -> u64 {
        self.state().picks
    }

    /// The next job that may start, and under which allowance; waits until
    /// there is one. `None` once closed.
    pub async fn next(&self) -> Option<(ClaimedJob, Seat)> {
        loop {
            let notified = self.ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.try_next() {
                Err(Closed) => return None,
                Ok(Some(picked)) => return Some(picked),
                Ok(None) => notified.await,
            }
        }
    }

    /// The next job that may start now, if any.
    pub fn try_next(&self) -> Result<Option<(ClaimedJob, Seat)>, Closed> {
        self.try_pick(Picker::Worker)
    }

    /// The prompt lane's next job (one of a tenant with nothing running),
    /// waiting until there is one; the lane is busy from then until
    /// `lane_free`. `None` once closed.
    pub async fn next_prompt(&self) -> Option<(ClaimedJob, Seat)> {
        loop {
            let notified = self.lane_ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.try_pick(Picker::Lane) {
                Err(Closed) => return None,
                Ok(Some(picked)) => return Some(picked),
                Ok(None) => notified.await,
            }
        }
    }

    /// The prompt lane has handed its attempt on (or ended it): the next
    /// idle tenant's job is the lane's again, and until the lane takes it,
    /// any worker's.
    pub fn lane_free(&self) {
        self.state().lane_busy = false;
        self.lane_ready.notify_one();
        self.ready.notify_one();
    }

    fn try_pick(&self, picker: Picker) -> Result<Option<(ClaimedJob, Seat)>, Closed> {
        let mut s = self.state();
        if s.closed {
            return Err(Closed);
        }
        let picked = self.pick(&mut s, picker);
        if picked.is_some() && s.waiting > 0 {
            // Another may start too: the next worker looks.
            self.ready.notify_one();
        }
        if picked.is_some() && s.unmarked > 0 {
            // The window ahead shrank.
            self.mark_wanted.notify_one();
        }
        Ok(picked)
    }

    fn pick(&self, s: &mut State, picker: Picker) -> Option<(ClaimedJob, Seat)> {
        let free_slot = s.in_slots < self.slots;
        let free_extra = s.extra < self.slots;
        if !free_slot && !free_extra {
            return None;
        }
        if picker == Picker::Lane && s.lane_busy {
            return None;
        }
        // While the lane is free, idle tenants' jobs wait for it.
        let leave_idle = self.lane && picker == Picker::Worker && !s.lane_busy;
        // The tenant that may start of least virtual time; of equals, the
        // first in turn.
        let mut best: Option<(usize, Seat, f64)> = None;
        for i in 0..s.turns.len() {
            let tenant = &s.turns[i];
            // Not begun: it waits for the marker, and its tenant's turn
            // with it.
            if !s
                .lines
                .get(tenant)
                .and_then(|l| l.jobs.front())
                .is_some_and(|j| j.begun)
            {
                continue;
            }
            let idle = s.running.get(tenant).copied().unwrap_or(0) == 0;
            match picker {
                Picker::Lane if !idle => continue,
                Picker::Worker if idle && leave_idle => continue,
                _ => {}
            }
            let seat = match (free_slot, free_extra && idle) {
                (true, _) => Seat::Slot,
                (false, true) => Seat::Extra,
                (false, false) => continue,
            };
            let vtime = s.share.vtime(tenant);
            if best.is_none_or(|(_, _, least)| vtime < least) {
                best = Some((i, seat, vtime));
            }
        }
        {
            let (i, seat, _) = best?;
            let tenant = s.turns.remove(i)?;
            let line = s.lines.get_mut(&tenant)?;
            let job = line.jobs.pop_front()?;
            line.ahead -= 1;
            if line.jobs.is_empty() {
                s.lines.remove(&tenant);
            } else {
                s.turns.push_back(tenant.clone());
            }
            s.waiting -= 1;
            s.begun_waiting -= 1;
            s.picks += 1;
            s.share.start(&tenant, job.weight);
            *s.running.entry(tenant).or_default() += 1;
            match seat {
                Seat::Slot => s.in_slots += 1,
                Seat::Extra => s.extra += 1,
            }
            if picker == Picker::Lane {
                s.lane_busy = true;
            }
            Some((job, seat))
        }
    }

    /// An attempt started by `next` has ended, after running for `ran`
    /// (`None`: it never ran, it was given back). Answers the tenant's
    /// waiting jobs to give back unbegun: those beyond what its own cost,
    /// as it now is, lets it keep (`Share::keeps`: twice its `ahead`, and
    /// at least a second of runner time). So a tenant whose jobs turned
    /// slow does not keep, claimed here, work that would hold off another
    /// tenant's for long, and one whose short jobs' cost wavers gives
    /// nothing back.
    #[must_use = "the jobs answered are to be given back"]
    pub fn finished(&self, tenant: &str, seat: Seat, ran: Option<Duration>) -> Vec<ClaimedJob> {
        let mut s = self.state();
        match seat {
            Seat::Slot => s.in_slots = s.in_slots.saturating_sub(1),
            Seat::Extra => s.extra = s.extra.saturating_sub(1),
        }
        if let Some(n) = s.running.get_mut(tenant) {
            *n -= 1;
            if *n == 0 {
                s.running.remove(tenant);
            }
        }
        match ran {
            Some(ran) => s.share.ended(tenant, ran),
            None => s.share.unstarted(tenant),
        }
        let back = Self::beyond(&mut s, tenant);
        let for_lane = self.lane_has_work(&s);
        drop(s);
        self.ready.notify_one();
        if for_lane {
            self.lane_ready.notify_one();
        }
        back
    }

    /// A tenant's waiting jobs beyond what it keeps here, taken
    /// out from the back of its line. Begun ones too: a job given back
    /// before its attempt started is not counted (`Finalize::release`),
    /// and a mark still on its way finds it gone (as `drop_stale`).
    fn beyond(s: &mut State, tenant: &str) -> Vec<ClaimedJob> {
        let running = s.running.get(tenant).copied().unwrap_or(0);
        let keep = s.share.keeps(tenant).saturating_sub(running);
        let mut back = Vec::new();
        let State {
            lines,
            marking,
            begun_waiting,
            unmarked,
            waiting,
            ..
        } = s;
        let Some(line) = lines.get_mut(tenant) else {
            return back;
        };
        while line.jobs.len() > keep {
            let Some(job) = line.jobs.pop_back() else {
                break;
            };
            if line.jobs.len() < line.ahead {
                line.ahead -= 1;
                if job.begun {
                    *begun_waiting -= 1;
                } else {
                    marking.remove(&job.id);
                }
            } else {
                *unmarked -= 1;
            }
            *waiting -= 1;
            back.push(job);
        }
        if line.jobs.is_empty() {
            lines.remove(tenant);
            s.turns.retain(|t| t != tenant);
        }
        back
    }

    /// What a claim may take of each tenant, by its own cost and what of
    /// it is here, waiting or running (`Share::caps`).
    pub fn caps(&self) -> TenantCaps {
        let s = self.state();
        s.share.caps(|t| Self::here(&s, t))
    }

    /// How many jobs to hold in all: what each tenant here may hold by its
    /// own cost (`Share::ahead`), or the slots when none is here; at most
    /// the most one tenant may hold.
    pub fn hold_target(&self) -> usize {
        let s = self.state();
        let tenants = s
            .lines
            .keys()
            .chain(s.running.keys().filter(|t| !s.lines.contains_key(*t)));
        let sum: usize = tenants.map(|t| s.share.ahead(t)).sum();
        sum.clamp(self.slots, s.share.most())
    }

    /// A tenant's jobs here, waiting or running.
    fn here(s: &State, tenant: &str) -> usize {
        s.lines.get(tenant).map_or(0, |l| l.jobs.len())
            + s.running.get(tenant).copied().unwrap_or(0)
    }

    /// Whether the prompt lane is free and a tenant with nothing running
    /// has a job waiting. Only then is the lane woken: waking its thread
    /// for every claim and every ended attempt cost `bench tenants`' flood
    /// of short jobs about a tenth of its throughput.
    fn lane_has_work(&self, s: &State) -> bool {
        self.lane
            && !s.lane_busy
            && s.lines.iter().any(|(tenant, line)| {
                line.jobs.front().is_some_and(|j| j.begun) && !s.running.contains_key(tenant)
            })
    }

    /// Every job not started yet, taken out (the runner is stopping); no
    /// more start after this.
    pub fn close(&self) -> Vec<ClaimedJob> {
        let mut s = self.state();
        s.closed = true;
        s.turns.clear();
        s.waiting = 0;
        s.begun_waiting = 0;
        s.unmarked = 0;
        s.marking.clear();
        let jobs = s.lines.drain().flat_map(|(_, line)| line.jobs).collect();
        drop(s);
        self.ready.notify_waiters();
        self.lane_ready.notify_waiters();
        self.mark_wanted.notify_waiters();
        jobs
    }
}

#[cfg(test)]
mod tests;
