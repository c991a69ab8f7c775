//! How a runner claims: the claim loop's batches up to what it should
//! hold, and the claims at once for sparse tenants (with their enqueue's
//! insert, or by a task of their own), both handing what they got to the
//! dispatch.

use super::{give_back, Inner, RunnerEvent, MAX_PREFETCH, POLL_EVERY};
use crate::store::{ClaimParams, ClaimedJob, StoreError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most jobs asked for in one claim (the store makes it of small writes).
const MAX_CLAIM: usize = 512;

impl Inner {
    /// How many jobs to hold: what each tenant held here may hold by its
    /// own cost (`Share::ahead`: the slots, or more when its attempts are
    /// short enough that a claim round trip would leave slots idle), the
    /// slots when none is held.
    pub(super) fn hold_target(&self) -> usize {
        self.dispatch.hold_target()
    }

    /// A tenant holding this many jobs here (waiting, running, or ending)
    /// is not sparse: its jobs come in the claim loop's batches.
    pub(super) fn sparse_held(&self) -> usize {
        (self.hold_target() / 2).max(2 * self.config.slots)
    }

    /// How many jobs to claim with a sparse tenant's enqueue, if this
    /// runner is to claim with it at all: it runs, has room, and holds none
    /// of the tenant's jobs waiting and few of them in all. A few, so that
    /// a tenant that fell behind catches up. A tenant holding nothing here
    /// has room whatever others hold, up to a ceiling (`sparse_room`).
    pub(super) fn room_for(&self, tenant: &str) -> Option<usize> {
        // A tenant with many jobs held is served by the claim loop's
        // batches; this is for one that sends a job now and then.
        let slots = self.config.slots;
        if slots == 0
            || self.stopping.is_cancelled()
            || self.dispatch.has_waiting(tenant)
            || self.held.of_tenant(tenant) >= self.sparse_held()
        {
            return None;
        }
        if self.held.of_tenant(tenant) == 0 {
            let room = self.sparse_room_for_none();
            return (room > 0).then(|| room.min(slots));
        }
        // With an attempt of its own running, its job waits for a slot; it
        // is worth the room only while slots come free often.
        if self.hold_target() <= slots && self.dispatch.has_running(tenant) {
            return None;
        }
        let room = self.sparse_room();
        (room > 0).then(|| room.min(slots))
    }

    /// How many more jobs sparse tenants' claims may add: up to the slots
    /// beyond what the claim loop holds. Counted by what waits or runs, not
    /// by what is held: attempts that ended and wait for their end to be
    /// written take no room.
    pub(super) fn sparse_room(&self) -> usize {
        (self.hold_target() + self.config.slots).saturating_sub(self.dispatch.load())
    }

    /// How many more jobs claims for tenants holding nothing here may add:
    /// room is kept for them whatever the others hold (so that what
    /// another tenant's claims ahead hold never keeps them waiting), up to
    /// a ceiling of the most the runner may hold and as many again.
    pub(super) fn sparse_room_for_none(&self) -> usize {
        (2 * MAX_PREFETCH + self.config.slots).saturating_sub(self.dispatch.load())
    }

    /// A claim of up to `limit` jobs (only those tenants' if `only` names
    /// them), taking begun those that start at once: a sparse tenant's
    /// first (it has nothing running here, so it may start beyond the
    /// slots), or every one while the runner claims no further ahead than
    /// its free slots. Jobs claimed ahead wait for the marker.
    pub(super) fn claim_params(&self, limit: usize, only: Option<Vec<String>>) -> ClaimParams {
        let begin_each = match &only {
            Some(_) => 1,
            None if self.hold_target() <= self.config.slots => u32::MAX,
            None => 0,
        };
        ClaimParams {
            begin_each,
            owner: self.config.owner.clone(),
            queues: self.config.queues.clone(),
            limit: u32::try_from(limit).unwrap_or(u32::MAX),
            lease_ms: self.config.lease_ms,
            only_tenants: only,
            caps: self.dispatch.caps(),
        }
    }
}

/// Claims jobs whenever there is room, waking on enqueues, on due times and
/// on a slow poll. When it holds all it may, it waits for room: jobs of
/// tenants it holds nothing of are the sparse claimer's.
pub(super) async fn claimer(inner: Arc<Inner>) {
    let store = inner.registry.store().clone();
    let slots = inner.config.slots;
    while !inner.stopping.is_cancelled() {
        let held = inner.held.len();
        let target = inner.hold_target();
        // Claiming ahead, a claim waits until there is room for a good
        // batch: a claim is a write, and many small ones cost more.
        let worth = if target > slots {
            (target / 4).min(MAX_CLAIM)
        } else {
            1
        };
        let limit = if held < target && (target - held >= worth || held == 0) {
            (target - held).min(MAX_CLAIM)
        } else {
            // An enqueue while full wakes the sparse claimer, not this one:
            // a flood of one tenant's enqueues must not become a flood of
            // claims that find nothing.
            tokio::select! {
                _ = inner.space.notified() => {}
                _ = inner.stopping.cancelled() => break,
            };
            continue;
        };
        let t0 = Instant::now();
        // Jobs due before this claim that it passes over are not worth a
        // poll (with a margin for this clock's distance from the store's).
        let claimed_at = store.now() - 10;
        let (got, passed_over) = match claim(&inner, limit, None).await {
            Ok(got) => got,
            Err(e) => {
                tracing::warn!(error = %e, "claim failed; retrying shortly");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = inner.stopping.cancelled() => break,
                }
                continue;
            }
        };
        tracing::debug!(
            limit,
            got,
            took_us = t0.elapsed().as_micros() as u64,
            "claimed"
        );
        if got < limit {
            let idle = match store.job_next_run_at(claimed_at).await {
                Ok(Some(t)) => Duration::from_millis(u64::try_from(t - store.now()).unwrap_or(0))
                    .min(POLL_EVERY),
                _ => POLL_EVERY,
            };
            if idle.is_zero() {
                // Due, but not claimable (its concurrency key is running,
                // its tenant is at a quota, or it is not staged yet).
                tokio::select! {
                    _ = inner.wake.notified() => {}
                    _ = inner.space.notified() => {}
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    _ = inner.stopping.cancelled() => break,
                }
                continue;
            }
            // A claim that left nothing due behind is not made again when
            // an attempt ends and frees a seat: there is nothing for it
            // (an end that queues its job again wakes this loop itself).
            // Made anyway, it was an empty claim and a look for the next
            // due time after every job of a sparse load.
            tokio::select! {
                _ = inner.wake.notified() => {}
                _ = inner.space.notified(), if passed_over => {}
                _ = tokio::time::sleep(idle) => {}
                _ = inner.stopping.cancelled() => break,
            }
        }
    }
}

/// Claims, as soon as it is told of them, for tenants with nothing
/// waiting or running in this runner (up to the slots again beyond what it
/// may hold): their jobs may start beyond the slots, and must not wait for
/// the batch the claim loop is taking. The store takes such a claim ahead
/// of bulk writes.
pub(super) async fn sparse_claimer(inner: Arc<Inner>) {
    let slots = inner.config.slots;
    loop {
        tokio::select! {
            _ = inner.sparse.notified() => {}
            _ = inner.stopping.cancelled() => break,
        }
        let mut fresh = std::mem::take(&mut *inner.fresh.lock().unwrap_or_else(|p| p.into_inner()));
        fresh.retain(|t| !inner.dispatch.has_waiting(t));
        if inner.held.is_empty() {
            // Holding nothing, the claim loop is claiming already.
            continue;
        }
        // Holding all it may, a tenant's job waits for room like any
        // other's, unless the tenant holds nothing here: room is kept for
        // those.
        let room = match inner.sparse_room() {
            0 => {
                fresh.retain(|t| inner.held.of_tenant(t) == 0);
                inner.sparse_room_for_none()
            }
            room => room,
        };
        if fresh.is_empty() || room == 0 {
            continue;
        }
        // A few each, so that one that fell behind catches up.
        let limit = room.min(fresh.len() * slots);
        if let Err(e) = claim(&inner, limit, Some(fresh)).await {
            tracing::warn!(error = %e, "claim for a sparse tenant failed; the claim loop will take it");
        }
    }
}

/// Claims up to `limit` jobs (only those tenants' if `only` names them),
/// holds them and hands them to the dispatch, or back to the queue if the
/// runner stopped meanwhile. Answers how many it got, and whether it
/// passed any over (`Claim::passed_over`).
async fn claim(
    inner: &Inner,
    limit: usize,
    only: Option<Vec<String>>,
) -> Result<(usize, bool), StoreError> {
    let t0 = Instant::now();
    let claimed = inner
        .registry
        .store()
        .job_claim(inner.claim_params(limit, only))
        .await?;
    let got = claimed.jobs.len();
    crate::metrics::get().claim_took(t0.elapsed());
    hold(inner, claimed.jobs).await;
    Ok((got, claimed.passed_over))
}

/// Holds claimed jobs and hands them to the dispatch, or back to the queue
/// if the runner stopped meanwhile.
pub(super) async fn hold(inner: &Inner, claimed: Vec<ClaimedJob>) {
    for job in &take_in(inner, claimed) {
        give_back(inner, job, 0).await;
    }
}

/// Holds claimed jobs (their leases are renewed from now on) and hands
/// them to the dispatch; answers those it could not take because the
/// runner is stopping, to be given back. It does not block: a store may
/// call it on its writer's thread.
pub(super) fn take_in(inner: &Inner, claimed: Vec<ClaimedJob>) -> Vec<ClaimedJob> {
    if claimed.is_empty() {
        return claimed;
    }
    crate::metrics::get().claimed(claimed.len());
    inner.emit(|| RunnerEvent::Claimed {
        ids: claimed.iter().map(|j| j.id.clone()).collect(),
        tenant: claimed
            .iter()
            .all(|j| j.tenant == claimed[0].tenant)
            .then(|| claimed[0].tenant.clone()),
        at: Instant::now(),
    });
    for job in &claimed {
        if let Some(stale) = inner.held.insert(&job.id, &job.tenant, &job.lease_token) {
            // Claimed again after its lease here ran out: a copy under the
            // old lease that has not started must not.
            let waited = inner.dispatch.drop_stale(&job.tenant, &job.id, &stale);
            tracing::info!(job = %job.id, waited, "claimed again under a new lease; the copy under the old one is dropped");
        }
    }
    match inner.dispatch.push(claimed) {
        // A tenant with nothing running got a job while every slot is
        // busy: the running guests yield, so that it starts at once.
        Ok(true) => {
            inner.registry.sandbox().nudge();
            Vec::new()
        }
        Ok(false) => Vec::new(),
        Err(closed) => closed,
    }
}
