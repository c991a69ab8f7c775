//! What a tenant's policy admits, decided the same way for every backend
//! from the rows it reads: its weight and quotas (the server's defaults
//! where unset), whether a quota admits more, and whether a claim may give
//! it jobs.

use crate::fair::Contender;
use crate::quota::{window_start, Exceeded, Quotas, DEFAULT_WEIGHT};
use crate::records::{ClaimedJob, FuelWindow, TenantCaps};
use crate::store_error::{StoreError, StoreResult};
use crate::time::Millis;
use std::collections::HashMap;

pub fn quotas_col(tenant: &str, text: Option<String>) -> StoreResult<Quotas> {
    text.map_or(Ok(Quotas::default()), |q| {
        serde_json::from_str(&q).map_err(|e| {
            StoreError::Internal(format!("unreadable quotas of tenant {tenant:?}: {e}"))
        })
    })
}

/// A tenant's weight and quotas, the server's defaults where unset.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub weight: u32,
    pub quotas: Quotas,
}

/// The policy of `tenant` from its row's `weight` and `quotas` (none: a
/// tenant without a row gets the defaults).
pub fn policy_from(
    tenant: &str,
    row: Option<(Option<i64>, Option<String>)>,
    defaults: &Quotas,
) -> StoreResult<Policy> {
    let (weight, quotas) = row.unwrap_or((None, None));
    Ok(Policy {
        weight: weight
            .and_then(|w| u32::try_from(w).ok())
            .filter(|w| *w > 0)
            .unwrap_or(DEFAULT_WEIGHT),
        quotas: quotas_col(tenant, quotas)?.or(defaults),
    })
}

/// Refuses `adding` more of something of which `used` are taken, past `limit`.
pub fn within(quota: &'static str, limit: Option<u64>, used: i64, adding: i64) -> StoreResult<()> {
    match limit {
        Some(limit) if used.saturating_add(adding) > i64::try_from(limit).unwrap_or(i64::MAX) => {
            Err(StoreError::QuotaExceeded(Exceeded { quota, limit }))
        }
        _ => Ok(()),
    }
}

/// Whether a tenant holding `count` components of `bytes` in all may add
/// one of `size` bytes: the rule an upload is held to before it is
/// compiled (`JobStore::component_room`) and when it is stored.
pub fn component_room(q: &Quotas, count: i64, bytes: i64, size: u64) -> StoreResult<()> {
    within("max_components", q.max_components, count, 1)?;
    within(
        "max_component_bytes",
        q.max_component_bytes,
        bytes,
        i64::try_from(size).unwrap_or(i64::MAX),
    )
}

/// What a claim read of a tenant: its name, policy, jobs running and fuel
/// used in the window.
pub type TenantView = (String, Policy, i64, i64);

/// The claim's contenders from what it read of the tenants (each by
/// [`contender`]), the budgets to stamp their jobs with, and whether a
/// tenant was left out for want of room or fuel. Every backend's claim
/// makes them here.
pub fn contenders(
    views: impl IntoIterator<Item = TenantView>,
    caps: &TenantCaps,
    now: Millis,
) -> (Vec<Contender>, Budgets, bool) {
    let (mut contenders, mut budgets, mut left_out) = (Vec::new(), Budgets::default(), false);
    for (tenant, policy, running, fuel_used) in views {
        let cap = caps.of(&tenant);
        match contender(tenant, &policy, (running, fuel_used), cap, now) {
            Some((c, fuel)) => {
                budgets.insert(&c, fuel);
                contenders.push(c);
            }
            None => left_out = true,
        }
    }
    (contenders, budgets, left_out)
}

/// A tenant as a claim sees it: its room under `max_running` and under
/// the claim's cap for it (`TenantCaps`), and its fuel in the window, or
/// `None` when it may be given no job now.
pub fn contender(
    tenant: String,
    policy: &Policy,
    (running, fuel_used): (i64, i64),
    cap: u64,
    now: Millis,
) -> Option<(Contender, Option<FuelWindow>)> {
    let room = policy
        .quotas
        .max_running
        .map_or(u64::MAX, |m| {
            m.saturating_sub(u64::try_from(running).unwrap_or(0))
        })
        .min(cap);
    let fuel = policy.quotas.fuel_per_minute.map(|budget| FuelWindow {
        start: window_start(now),
        budget,
        used: u64::try_from(fuel_used).unwrap_or(0),
    });
    if room == 0 || fuel.is_some_and(|f| f.used >= f.budget) {
        return None;
    }
    Some((
        Contender {
            tenant,
            weight: policy.weight,
            room,
            ran_out: false,
        },
        fuel,
    ))
}

/// What a claim read of each tenant it gave jobs to, told to each of
/// their jobs: the fuel window (the runner's ledger starts from it) and the
/// weight (the runner's dispatch shares its slots by it).
#[derive(Debug, Default)]
pub struct Budgets(HashMap<String, (Option<FuelWindow>, u32)>);

impl Budgets {
    pub fn insert(&mut self, c: &Contender, fuel: Option<FuelWindow>) {
        self.0.insert(c.tenant.clone(), (fuel, c.weight.max(1)));
    }

    /// Tells a claimed job what the claim read of its tenant.
    pub fn stamp(&self, job: &mut ClaimedJob) {
        if let Some(&(fuel, weight)) = self.0.get(&job.tenant) {
            job.fuel = fuel;
            job.weight = weight;
        }
    }
}
