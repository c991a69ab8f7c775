//! The one conformance suite every `JobStore` backend runs (River's
//! driver tests): each case takes a fresh, empty store whose clock the case
//! moves, and panics with what broke. Every backend's test file runs every
//! case, from the one list in [`conformance_cases!`]. Built for tests only
//! (the `conformance` feature, which the integration tests turn on), never
//! into the release binary. The cases are by subject: `driver` (each of
//! `Exec`'s primitives once), `inserts` (what is
//! written before a job runs), `jobs` (the life of a queued job),
//! `attempts` (each read back as written, wherever it is kept),
//! `queues` (paused queues, expiry), `prune` (retention), `redrive`,
//! `tenants` (fair claims, quotas, budgets and usage), `events` (the
//! outbox, callbacks, webhooks), `leases` (one holder at a time),
//! `schedules` (cron schedules moved on against their rev), `workflows`
//! (versioned definitions), `rollouts` (staged task versions and their
//! figures), `verify` (what a verification reads), `secrets` (sealed values kept per tenant),
//! `tokens` (listed, revoked, expiring, their uses recorded).

mod attempts;
mod cache;
mod debounce;
mod driver;
mod events;
mod inserts;
mod jobs;
mod leases;
mod prune;
mod queues;
mod redrive;
mod rollouts;
mod schedules;
mod secrets;
mod series;
mod tenants;
mod throttle;
mod tokens;
mod usage;
mod verify;
mod workflows;

use attempts::*;
use cache::*;
use debounce::*;
use driver::*;
use events::*;
use inserts::*;
use jobs::*;
use leases::*;
use prune::*;
use queues::*;
use redrive::*;
use rollouts::*;
use schedules::*;
use secrets::*;
use series::*;
use tenants::*;
use throttle::*;
use tokens::*;
use usage::*;
use verify::*;
use workflows::*;

use super::*;
use crate::job::{ErrorKind, JobError, JobStatus};
use std::sync::Arc;

/// A fresh store and the clock it reads.
pub struct Harness {
    pub store: Arc<dyn JobStore>,
    pub clock: ManualClock,
}

pub(crate) const A: &str = "tenant-a";
pub(crate) const B: &str = "tenant-b";
pub(crate) const DIGEST: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000001";

pub(crate) async fn setup(h: &Harness) {
    h.store.tenant_insert(A).await.unwrap();
    h.store.tenant_insert(B).await.unwrap();
}

pub(crate) fn task_ref() -> TaskRef {
    TaskRef {
        name: "t".into(),
        version: 1,
        digest: DIGEST.into(),
    }
}

/// A job for tenant A, due now, with three attempts.
pub fn new_job(id: &str) -> NewJob {
    NewJob::plain(id, A, task_ref(), r#"{"n":1}"#)
}

pub(crate) async fn insert(h: &Harness, job: NewJob) -> JobRecord {
    match h.store.job_insert(vec![job]).await.unwrap().pop().unwrap() {
        Ok(Inserted::Created(j)) => j,
        other => panic!("expected a created job, got {other:?}"),
    }
}

pub(crate) async fn claim(h: &Harness, limit: u32) -> Vec<ClaimedJob> {
    claim_whole(h, limit).await.jobs
}

/// A claim of every tenant's jobs, and what it says it passed over.
pub(crate) async fn claim_whole(h: &Harness, limit: u32) -> Claim {
    h.store
        .job_claim(ClaimParams {
            owner: "r1".into(),
            queues: None,
            limit,
            lease_ms: 30_000,
            only_tenants: None,
            begin_each: u32::MAX,
            caps: Default::default(),
        })
        .await
        .unwrap()
}

/// The ids of claimed jobs, in claim order.
pub(crate) fn ids(claimed: &[ClaimedJob]) -> Vec<&str> {
    claimed.iter().map(|c| c.id.as_str()).collect()
}

pub(crate) async fn get(h: &Harness, id: &str) -> JobRecord {
    h.store
        .job_get(A, id)
        .await
        .unwrap()
        .expect("the job exists")
}

pub(crate) fn attempt(
    c: &ClaimedJob,
    outcome: &str,
    error: Option<JobError>,
) -> Option<AttemptRecord> {
    Some(AttemptRecord {
        attempt: c.attempts,
        task: c.task.clone(),
        started_at: c.started_at,
        finished_at: c.started_at + 5,
        outcome: outcome.into(),
        error,
        fuel_used: 42,
        peak_memory_bytes: 65536,
        log: None,
        network: None,
    })
}

pub(crate) async fn finalize(h: &Harness, c: &ClaimedJob, action: Action) -> Finalized {
    let outcome = match &action {
        Action::Complete { .. } => "completed",
        Action::Fail { .. } => "failed",
        _ => "other",
    };
    finalize_recording(h, c, action, attempt(c, outcome, None)).await
}

/// Ends `c`'s attempt as `action` says, recording `attempt`.
pub(crate) async fn finalize_recording(
    h: &Harness,
    c: &ClaimedJob,
    action: Action,
    attempt: Option<AttemptRecord>,
) -> Finalized {
    h.store
        .job_finalize(vec![Finalize {
            id: c.id.clone(),
            tenant: c.tenant.clone(),
            lease_token: c.lease_token.clone(),
            attempt,
            action,
            usage: None,
            callbacks: None,
            names: c.names(),
            steps: Vec::new(),
            close_children: None,
        }])
        .await
        .unwrap()
        .pop()
        .unwrap()
}

pub(crate) fn failure() -> JobError {
    JobError::with_code(ErrorKind::TaskFailed, "boom", "it broke")
}

pub(crate) async fn rescue(h: &Harness, all_running: bool) -> Vec<ClaimedJob> {
    rescue_up_to(h, all_running, 1000).await
}

pub(crate) async fn rescue_up_to(h: &Harness, all_running: bool, limit: u32) -> Vec<ClaimedJob> {
    h.store
        .job_rescue(RescueParams {
            owner: "rescuer".into(),
            lease_ms: 30_000,
            all_running,
            limit,
        })
        .await
        .unwrap()
}

/// Expires every job past its time now, with no callbacks (as the queue
/// keeper does for tasks without `on_fail`); answers how many.
pub(crate) async fn expire_all(h: &Harness) -> u64 {
    let jobs = h
        .store
        .job_expiring(1_000)
        .await
        .unwrap()
        .into_iter()
        .map(|j| Expire {
            id: j.id,
            on_fail: None,
        })
        .collect();
    h.store.job_expire(jobs).await.unwrap()
}

/// A tenant's attempts, oldest first.
pub(crate) async fn attempts(h: &Harness, tenant: &str, id: &str) -> Vec<AttemptRecord> {
    h.store
        .attempt_list(AttemptQuery {
            tenant: tenant.into(),
            job_id: id.into(),
            after: None,
            limit: 1000,
        })
        .await
        .unwrap()
}

/// The suite's one list of cases. A backend's test file passes a macro of
/// its own, which gets every case's name (`$cb!(case, case, …)`) and makes
/// a test of each that calls [`run`]. The cases are private to the suite,
/// so one left off this list is dead code, which the build refuses.
#[macro_export]
macro_rules! conformance_cases {
    ($cb:ident) => {
        $cb!(
            the_driver_binds_each_kind_and_typed_nulls,
            the_driver_binds_parameters_by_number,
            the_driver_tells_unique_and_foreign_key_refusals_apart,
            a_write_that_fails_leaves_nothing,
            a_json_array_reads_as_a_table_in_its_order,
            registry_records,
            a_staged_version_is_promoted_or_rolled_back,
            a_rollouts_figures_count_each_versions_jobs_since_it_began,
            a_verification_reads_a_tasks_own_ended_jobs,
            insert_get_and_list,
            queues_are_listed_with_their_depths,
            one_refused_insert_does_not_undo_the_batch,
            a_batch_keeps_each_jobs_trace,
            idempotency_keys,
            unique_keys_admit_one_unfinished_job,
            unique_keys_follow_their_rules,
            concurrent_use_existing_enqueues_make_one_job,
            callback_depth_is_kept,
            the_result_cache_serves_a_tenants_completed_jobs_within_the_ttl,
            the_usage_export_adds_up_to_the_attempt_records,
            the_series_count_starts_by_their_wait_and_ends_by_tenant,
            a_queue_sample_is_kept_a_minute_replaced_and_let_go,
            claims_follow_priority_time_and_queues,
            finalize_is_fenced_by_the_lease,
            a_batch_of_ends_lands_each_as_it_would_alone,
            many_enqueues_at_once_each_get_their_own_answer,
            retries_snoozes_waits_and_resumes,
            attempts_read_back_as_written,
            cancels,
            heartbeats_extend_leases_and_record_progress,
            rescue_takes_over_expired_leases,
            concurrency_keys_run_one_at_a_time,
            a_superseding_job_cancels_the_keys_waiting_job,
            fallbacks_take_over_the_job,
            release_gives_the_attempt_back,
            claims_ahead_begin_only_when_marked,
            run_now_puts_a_job_first,
            many_concurrent_writers,
            tenant_settings,
            claims_share_tenants_by_weight,
            claims_share_runner_time_not_starts,
            a_tenants_fairness_keys_are_served_in_turn,
            fairness_keys_share_runner_time_not_starts,
            a_run_at_in_the_past_is_now,
            quotas_refuse_new_work,
            max_running_caps_claims,
            an_insert_can_claim_for_its_tenant,
            claims_say_whether_they_passed_jobs_over,
            fuel_budgets_hold_claims_until_the_window_refills,
            usage_counts_attempts_and_ended_jobs,
            a_bad_attempt_record_does_not_fail_its_batch,
            snoozes_are_counted,
            pages_are_bounded,
            a_transaction_applies_all_or_nothing,
            failed_jobs_can_be_redriven,
            a_redrive_keeps_keys_and_quotas,
            a_paused_queue_is_not_claimed,
            jobs_back_in_a_paused_queue_stay_parked,
            a_scheduled_job_of_a_paused_queue_waits_for_the_resume,
            queued_jobs_expire,
            a_concurrency_key_runs_up_to_its_limit,
            a_throttle_key_starts_its_limit_a_period_and_parks_the_rest,
            a_throttled_key_at_the_head_of_the_line_holds_nothing_up,
            a_debounced_burst_runs_once_with_the_last_input,
            a_steady_stream_runs_within_its_max_wait,
            concurrent_enqueues_of_a_key_replace_one_another_in_turn,
            ended_jobs_are_pruned_after_their_age,
            components_no_task_uses_are_collected,
            every_move_reports_its_events,
            superseded_and_pending_cancels_report_cancels,
            events_are_numbered_per_tenant_in_one_write,
            concurrent_writers_number_events_in_order,
            callbacks_land_with_the_end,
            old_events_are_pruned,
            webhook_deliveries_are_made_once_and_retried,
            a_delivery_is_redelivered_on_demand,
            a_lease_has_one_holder_at_a_time,
            concurrent_candidates_get_one_lease,
            schedules_move_on_against_their_rev,
            schedules_are_due_by_slot_and_waits,
            a_tenant_has_at_most_max_schedules,
            workflow_versions_are_kept_and_counted,
            workflow_stages_move_with_their_ends,
            a_fallbacks_stages_are_made_as_it_takes_over,
            secrets_are_put_replaced_listed_and_deleted,
            a_tenant_has_at_most_max_secrets,
            puts_of_one_secret_at_once_make_one_row,
            tokens_are_listed_revoked_and_expire,
            a_tokens_use_is_recorded,
        );
    };
}

macro_rules! dispatch {
    ($($case:ident),* $(,)?) => {
        /// Every case's name, in the suite's order.
        pub const CASES: &[&str] = &[$(stringify!($case)),*];

        /// Runs the case named `case` on the harness's fresh store.
        pub async fn run(case: &str, h: Harness) {
            match case {
                $(stringify!($case) => $case(h).await,)*
                other => panic!("no conformance case is named {other}"),
            }
        }
    };
}

crate::conformance_cases!(dispatch);
