//! Dead letters and redrive: failed jobs sent back to the queue for a new
//! series of attempts, one by id or many by a filter, on the version they
//! pinned or on their task's newest; the runners are woken after. Each
//! job redriven is charged to the tenant's enqueue rate, as a new one is.

use crate::enqueue::EnqueueError;
use crate::job::{ErrorKind, JobStatus};
use crate::registry::{Registry, TaskVersion};
use crate::runner::Runner;
use crate::store::{JobQuery, JobRecord, Redrive, StoreError, TaskRef};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Most jobs one filtered redrive takes; the answer says whether more
/// matched.
pub const MAX_REDRIVE: u32 = 10_000;
/// Jobs a filtered redrive reads and writes at a time.
const PAGE: u32 = 500;

/// Which task version a redriven job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The version and digest it pinned at enqueue.
    Pinned,
    /// Its task's newest version.
    Latest,
}

/// Which failed jobs a filtered redrive takes.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub task: Option<String>,
    pub queue: Option<String>,
    /// The error's kind (`timeout`, `task_failed`, …).
    pub kind: Option<ErrorKind>,
    /// The error's code (a guest's own, for `task_failed`).
    pub code: Option<String>,
}

impl Filter {
    fn takes(&self, j: &JobRecord) -> bool {
        let e = j.error.as_ref();
        self.kind.is_none_or(|k| e.is_some_and(|e| e.kind == k))
            && self
                .code
                .as_deref()
                .is_none_or(|c| e.is_some_and(|e| e.code == c))
    }
}

/// What a filtered redrive did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Redriven {
    pub retried: u64,
    /// Matched but refused (a unique key taken since, `max_queued`).
    pub refused: u64,
    /// More failed jobs matched past the limit.
    pub more: bool,
}

pub struct Redriver {
    registry: Arc<Registry>,
    runner: Arc<Runner>,
}

impl Redriver {
    pub fn new(registry: Arc<Registry>, runner: Arc<Runner>) -> Self {
        Redriver { registry, runner }
    }

    /// Re-drives one failed job of the tenant's.
    pub async fn one(
        &self,
        tenant: &str,
        id: &str,
        version: Version,
    ) -> Result<JobRecord, EnqueueError> {
        let store = self.registry.store();
        let job = store
            .job_get(tenant, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        if job.status != JobStatus::Failed {
            return Err(StoreError::Conflict(format!(
                "job {id} is {}; only a failed job can be retried",
                job.status
            ))
            .into());
        }
        let r = self
            .plan(tenant, &job, version, &mut HashMap::new())
            .await?;
        if let Err(over) = self.registry.admission().take_one(tenant).await? {
            return Err(over.into());
        }
        let out = store
            .job_redrive(tenant, vec![r])
            .await?
            .pop()
            .ok_or_else(|| StoreError::Internal("a redrive answered nothing".into()))??;
        self.runner.queued_again(tenant);
        Ok(out)
    }

    /// Re-drives up to `limit` of the tenant's failed jobs that match
    /// (`None`: every tenant's, the admin's), newest first, a page at a
    /// time, each charged to its own tenant's enqueue rate: a tenant past
    /// its rate keeps the rest of its jobs (`more` says some were left),
    /// and the other tenants' go on. Of one tenant's, none at all is
    /// refused.
    pub async fn many(
        &self,
        tenant: Option<&str>,
        filter: &Filter,
        version: Version,
        limit: u32,
    ) -> Result<Redriven, EnqueueError> {
        let store = self.registry.store();
        let limit = limit.clamp(1, MAX_REDRIVE) as u64;
        let mut done = Redriven::default();
        let mut before: Option<String> = None;
        let mut tasks = HashMap::new();
        // Tenants past their enqueue rate in this redrive: their later
        // matches are left, as more.
        let mut over_rate: HashSet<String> = HashSet::new();
        loop {
            let page = store
                .job_list(JobQuery {
                    tenant: tenant.map(str::to_owned),
                    status: Some(JobStatus::Failed),
                    task: filter.task.clone(),
                    queue: filter.queue.clone(),
                    limit: PAGE,
                    before: before.clone(),
                    max_bytes: 8 << 20,
                })
                .await?;
            let last = page.jobs.last().map(|j| j.id.clone());
            let full = page.cut || page.jobs.len() == PAGE as usize;
            // Each tenant's plans, in the order its jobs were read.
            let mut plans: BTreeMap<&str, Vec<Redrive>> = BTreeMap::new();
            let mut planned = 0u64;
            let mut hit_limit = false;
            for j in page.jobs.iter().filter(|j| filter.takes(j)) {
                if over_rate.contains(&j.tenant) {
                    done.more = true;
                    continue;
                }
                if done.retried + done.refused + planned >= limit {
                    hit_limit = true;
                    done.more = true;
                    break;
                }
                match self.plan(&j.tenant, j, version, &mut tasks).await {
                    Ok(r) => {
                        plans.entry(j.tenant.as_str()).or_default().push(r);
                        planned += 1;
                    }
                    Err(_) => done.refused += 1,
                }
            }
            for (t, mut mine) in plans {
                let (granted, over) = self.registry.admission().take(t, mine.len()).await?;
                if let Some(over) = over {
                    if tenant.is_some() && granted == 0 && done.retried == 0 {
                        return Err(over.into());
                    }
                    mine.truncate(granted);
                    over_rate.insert(t.to_owned());
                    done.more = true;
                }
                if mine.is_empty() {
                    continue;
                }
                for r in store.job_redrive(t, mine).await? {
                    match r {
                        Ok(_) => done.retried += 1,
                        Err(_) => done.refused += 1,
                    }
                }
                self.runner.queued_again(t);
            }
            // Redriven jobs left the failed ones: the next page goes on
            // from the last read. A tenant past its rate ends the redrive
            // of its own jobs; across tenants the others' go on.
            let stop = hit_limit || (tenant.is_some() && done.more);
            match last {
                Some(id) if full && !stop => before = Some(id),
                _ => break,
            }
        }
        Ok(done)
    }

    /// The redrive of a failed workflow job: on the versions it was
    /// enqueued with, from the step that failed (its workflow's `restore`)
    /// or from the start.
    async fn plan_workflow(
        &self,
        tenant: &str,
        job: &JobRecord,
        version: Version,
        steps: &[crate::store::StepRecord],
    ) -> Result<Redrive, EnqueueError> {
        if version == Version::Latest {
            return Err(EnqueueError::BadRequest(format!(
                "job {} is a workflow job; it is retried on the task versions it pinned, so \
                 digest \"latest\" does not apply (enqueue a new job for the newest)",
                job.id
            )));
        }
        let wf = self
            .registry
            .workflow(tenant, &job.task.name, Some(job.task.version))
            .await?;
        let (task, input, attempts, writes) =
            crate::workflow::plan::restart(steps, &job.input, wf.spec.restore).ok_or_else(
                || StoreError::Internal(format!("job {}'s stages cannot be restarted", job.id)),
            )?;
        Ok(Redrive {
            id: job.id.clone(),
            task: None,
            attempts,
            stage: Some(Box::new((task, input, writes))),
            // A workflow job ends with its stages' output: it has no key.
            cache_key: None,
        })
    }

    /// The redrive of one failed job: on which task version, with how many
    /// attempts (that version's retry policy's), under which result cache
    /// key (that version's digest on the job's input).
    async fn plan(
        &self,
        tenant: &str,
        job: &JobRecord,
        version: Version,
        tasks: &mut HashMap<(String, String, Option<u32>), Arc<TaskVersion>>,
    ) -> Result<Redrive, EnqueueError> {
        if let Some(task) = crate::verify::task_of(&job.task.name) {
            return Err(EnqueueError::BadRequest(format!(
                "job {} is a verification; it is not retried: ask for another (POST \
                 /v1/tasks/{task}/verify)",
                job.id
            )));
        }
        let steps = self.registry.store().job_steps(&job.id).await?;
        if steps.iter().any(|s| s.kind == crate::store::StepKind::Step) {
            return self.plan_workflow(tenant, job, version, &steps).await;
        }
        let pick = match version {
            Version::Pinned => Some(job.task.version),
            Version::Latest => None,
        };
        let key = (tenant.to_owned(), job.task.name.clone(), pick);
        let tv = match tasks.get(&key) {
            Some(tv) => tv.clone(),
            None => {
                let tv = self.registry.task(tenant, &job.task.name, pick).await?;
                tasks.insert(key, tv.clone());
                tv
            }
        };
        Ok(Redrive {
            id: job.id.clone(),
            task: (version == Version::Latest).then(|| TaskRef {
                name: tv.record.name.clone(),
                version: tv.record.version,
                digest: tv.record.digest.clone(),
            }),
            attempts: tv.retry.max_attempts,
            stage: None,
            // Written again, never kept: on the newest version the job
            // runs another digest, and its output is that digest's.
            cache_key: crate::enqueue::cache::key_of(&tv, &job.input),
        })
    }
}
