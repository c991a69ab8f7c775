//! The one enqueue path: the rules every new job is held to (its task and
//! input, queue, priority, times, keys, idempotency, the tenant's enqueue
//! rate), whoever asks for it — a request, a batch, and the callbacks,
//! cron slots and workflow steps to come — and the insert, through the
//! `Intake` the server gives it (the runner, which may claim with the
//! insert and wakes itself after it).
//!
//! `spec` says what is asked, why it is refused, and where and when a job
//! runs; `prepare` makes a task's job, `workflow` a workflow's job and its
//! stages. Nothing here names the runner: it sits above, as an `Intake`.

pub(crate) mod cache;
mod prepare;
pub mod spec;
pub mod traced;
pub mod workflow;

pub use prepare::prepare_job;
pub use spec::{EnqueueError, JobSpec, MAX_KEY_LEN, PRIORITY_RANGE};

use crate::registry::rollout::TaskHead;
use crate::registry::Registry;
use crate::store::{Idempotency, Inserted, NewJob, StoreError, StoreResult, Write, Written};
use spec::bad;
use std::collections::HashMap;
use std::sync::Arc;

/// Where the enqueuer's jobs go in, and who is told of jobs it queued
/// by a write of its own (a workflow's job and its stages). The runner
/// is one: its insert claims for a tenant with room at once. A trait
/// defined here, so that enqueue, below the runner, never names it.
#[async_trait::async_trait]
pub trait Intake: Send + Sync {
    /// Inserts jobs, answering each in order; a store that does not
    /// answer fails them all.
    async fn insert(&self, jobs: Vec<NewJob>) -> StoreResult<Vec<StoreResult<Inserted>>>;
    /// Jobs of `tenant` were queued by a write of the enqueuer's own.
    fn queued(&self, tenant: &str);
}

/// Most jobs one batch may hold.
pub const MAX_BATCH: usize = 1_000;

/// Enqueues jobs for tenants. One per process, shared by every caller.
pub struct Enqueuer {
    registry: Arc<Registry>,
    intake: Arc<dyn Intake>,
}

impl Enqueuer {
    pub fn new(registry: Arc<Registry>, intake: Arc<dyn Intake>) -> Self {
        Enqueuer { registry, intake }
    }

    /// A new job id (`job::new_id`).
    pub fn new_job_id(&self) -> String {
        crate::job::new_id()
    }

    /// Enqueues one job: `Created`, or `Existing` when its idempotency key
    /// was seen before with the same request.
    pub async fn enqueue(
        &self,
        tenant: &str,
        spec: JobSpec,
        idempotency: Option<Idempotency>,
    ) -> Result<Inserted, EnqueueError> {
        if let (0, Some(over)) = self.registry.admission().take(tenant, 1).await? {
            return Err(over.into());
        }
        if spec.workflow.is_some() {
            return self.enqueue_workflow(tenant, spec, idempotency).await;
        }
        let new = self.prepare(tenant, spec, idempotency).await?;
        self.intake
            .insert(vec![new])
            .await?
            .pop()
            .ok_or_else(|| StoreError::Internal("an insert answered nothing".into()))?
            .map_err(EnqueueError::Store)
    }

    /// Enqueues a job made elsewhere under its own rules (a verification,
    /// `verify::prepare`): the tenant's enqueue rate, then the insert
    /// and the store's rules (`max_queued`).
    pub async fn enqueue_made(&self, tenant: &str, job: NewJob) -> Result<Inserted, EnqueueError> {
        if let (0, Some(over)) = self.registry.admission().take(tenant, 1).await? {
            return Err(over.into());
        }
        self.intake
            .insert(vec![job])
            .await?
            .pop()
            .ok_or_else(|| StoreError::Internal("an insert answered nothing".into()))?
            .map_err(EnqueueError::Store)
    }

    /// Enqueues a job of a workflow: the job and its stages in one write.
    async fn enqueue_workflow(
        &self,
        tenant: &str,
        spec: JobSpec,
        idempotency: Option<Idempotency>,
    ) -> Result<Inserted, EnqueueError> {
        let (job, start) =
            workflow::prepare(&self.registry, self.new_job_id(), tenant, spec, idempotency).await?;
        let written = self
            .registry
            .store()
            .apply(vec![Write::JobInsert(job), Write::WorkflowStart(start)])
            .await?;
        let inserted = match written.into_iter().next() {
            Some(Written::JobInserted(i)) => i,
            _ => return Err(StoreError::Internal("an insert answered nothing".into()).into()),
        };
        crate::figures::inserted([&inserted]);
        self.intake.queued(tenant);
        Ok(inserted)
    }

    /// Enqueues up to `MAX_BATCH` jobs in one write, each under its own
    /// rules: one refused (its input, its keys, the tenant's rate or
    /// quotas) does not refuse the others. The answers are in the order of
    /// the items. Only a store that does not answer fails the whole batch.
    pub async fn enqueue_batch(
        &self,
        tenant: &str,
        items: Vec<(JobSpec, Option<Idempotency>)>,
    ) -> Result<Vec<Result<Inserted, EnqueueError>>, EnqueueError> {
        if items.len() > MAX_BATCH {
            return Err(bad(format!(
                "a batch holds at most {MAX_BATCH} jobs, not {}; send the rest in another",
                items.len()
            )));
        }
        let n = items.len();
        // Items past what the tenant's bucket holds are refused one by one.
        let (granted, over) = self.registry.admission().take(tenant, n).await?;
        let mut answers: Vec<Option<Result<Inserted, EnqueueError>>> = Vec::with_capacity(n);
        let mut jobs = Vec::with_capacity(granted);
        let mut slots = Vec::with_capacity(granted);
        let mut tasks: HashMap<String, Arc<TaskHead>> = HashMap::new();
        for (i, (spec, idem)) in items.into_iter().enumerate() {
            if i >= granted {
                let over = over.clone().map(EnqueueError::from);
                answers.push(Some(Err(
                    over.unwrap_or_else(|| bad("over the tenant's enqueue rate"))
                )));
                continue;
            }
            match self
                .prepare_with(tenant, spec, idem, Some(&mut tasks))
                .await
            {
                Ok(job) => {
                    slots.push(i);
                    jobs.push(job);
                    answers.push(None);
                }
                Err(e) => answers.push(Some(Err(e))),
            }
        }
        if !jobs.is_empty() {
            let inserted = self.intake.insert(jobs).await?;
            if inserted.len() != slots.len() {
                return Err(StoreError::Internal(format!(
                    "a batch insert answered {} of {} jobs",
                    inserted.len(),
                    slots.len()
                ))
                .into());
            }
            for (slot, r) in slots.into_iter().zip(inserted) {
                answers[slot] = Some(r.map_err(EnqueueError::Store));
            }
        }
        Ok(answers
            .into_iter()
            .map(|a| a.unwrap_or_else(|| Err(StoreError::Internal("unanswered".into()).into())))
            .collect())
    }

    /// The job a spec asks for, under every rule of enqueue but the
    /// store's own (uniqueness, idempotency, `max_queued`).
    pub async fn prepare(
        &self,
        tenant: &str,
        spec: JobSpec,
        idempotency: Option<Idempotency>,
    ) -> Result<NewJob, EnqueueError> {
        self.prepare_with(tenant, spec, idempotency, None).await
    }

    /// `prepare`, looking each task up once for a batch (`tasks`).
    async fn prepare_with(
        &self,
        tenant: &str,
        b: JobSpec,
        idempotency: Option<Idempotency>,
        tasks: Option<&mut HashMap<String, Arc<TaskHead>>>,
    ) -> Result<NewJob, EnqueueError> {
        prepare_job(
            &self.registry,
            self.new_job_id(),
            tenant,
            b,
            idempotency,
            tasks,
        )
        .await
    }
}
