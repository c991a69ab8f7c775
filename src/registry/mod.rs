//! The registry: components by digest and versioned task definitions, with
//! what each version needs at run time (limits, retry policy, compiled
//! schemas) made once and cached.

pub mod key_template;
pub mod pattern;
pub mod rollout;
pub mod schema;
pub mod spec;
pub mod workflow;

use crate::bounds::MAX_FALLBACK_DEPTH;
use crate::digest::Digest;
use crate::lanes::Lanes;
use crate::retry::RetryPolicy;
use crate::sandbox::{Ceilings, Invalid, Limits, Program, Sandbox};
use crate::secrets::Vault;
use crate::store::{
    ComponentRecord, JobStore, NewComponent, NewTask, RolloutChange, StoreError, TaskRecord,
};
use rollout::{Staged, TaskHead};
use schema::{CheckError, Schema};
use spec::TaskSpec;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Task versions kept compiled in memory.
const MAX_CACHED_VERSIONS: usize = 4096;
/// How long what new jobs of a task pin (its live version, and a staged
/// one) is remembered. Defines and rollout changes made in this process
/// take effect at once; this bounds how stale another process's can look
/// (a store shared by many servers).
const NEWEST_FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(1);
/// Schema steps a check may take on an async thread; a check that needs
/// more finishes on the blocking pool.
const INLINE_STEPS: u64 = 20_000;

/// A task version ready to run: its definition and what is derived from it.
pub struct TaskVersion {
    pub record: TaskRecord,
    pub spec: TaskSpec,
    pub limits: Limits,
    pub retry: RetryPolicy,
    pub input_schema: Option<Schema>,
    pub output_schema: Option<Schema>,
    /// Its outbound HTTP grant, clamped by the server's settings.
    pub network: Option<Arc<crate::sandbox::NetworkGrant>>,
}

/// A workflow version as a job is enqueued with it.
pub struct WorkflowVersion {
    pub tenant: String,
    pub name: String,
    pub version: u32,
    pub spec: workflow::WorkflowSpec,
    pub input_schema: Option<Schema>,
}

impl TaskVersion {
    /// The queue its jobs go to when the enqueue names none.
    pub fn queue(&self) -> &str {
        self.spec.queue.as_deref().unwrap_or("default")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("component {0} was not found; upload it with POST /v1/components first")]
    ComponentNotFound(String),
    #[error("task {0:?} was not found")]
    TaskNotFound(String),
    #[error("invalid component: {0}")]
    InvalidComponent(#[from] Invalid),
    #[error("invalid task definition: {}", .0.join("; "))]
    InvalidTask(Vec<String>),
    #[error("workflow {0:?} was not found")]
    WorkflowNotFound(String),
    #[error("invalid workflow definition: {}", .0.join("; "))]
    InvalidWorkflow(Vec<String>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl RegistryError {
    /// Why an upload may be sent again later: the compile slots were full
    /// (`Invalid::Busy`). The API answers it 503 without knowing the sandbox.
    pub fn busy(&self) -> Option<&str> {
        match self {
            RegistryError::InvalidComponent(Invalid::Busy(m)) => Some(m),
            _ => None,
        }
    }
}

/// Which of a task version's schemas to check a value against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Input,
    Output,
}

/// Where checks that outgrow an async thread run: on threads of a guest's
/// priority (`priority::run_lowered`), in the tenants' lanes: one at a
/// time per tenant and a few at a time in all.
fn check_lanes() -> Lanes {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Lanes::new((cores / 2).max(1))
}

/// What new jobs of each task pin, by tenant and task, and when it was
/// looked up.
type Heads = HashMap<(String, String), (Arc<TaskHead>, std::time::Instant)>;

/// Components and task versions, for one process.
pub struct Registry {
    store: Arc<dyn JobStore>,
    sandbox: Sandbox,
    defaults: Limits,
    versions: Mutex<HashMap<(String, String, u32), Arc<TaskVersion>>>,
    /// What new jobs of each task pin, and when it was looked up.
    heads: Mutex<Heads>,
    checks: Lanes,
    /// What opens the tenants' secrets for attempts; set once at start
    /// (`App::start`), so that no constructor takes it.
    vault: OnceLock<Arc<Vault>>,
    /// Each tenant's enqueue rate, which every path that makes a job takes.
    admission: crate::admission::Admission,
    /// Where jobs' spans go; set once at start, off until then.
    traces: OnceLock<crate::otel::Traces>,
}

/// Compiles a task version's schemas off the async threads (a schema can be
/// large, and compiling it is CPU work).
async fn compile_schemas(
    input: Option<serde_json::Value>,
    output: Option<serde_json::Value>,
) -> Result<(Option<Schema>, Option<Schema>), Vec<String>> {
    let compiled = tokio::task::spawn_blocking(move || {
        let one = |field: &str, s: Option<serde_json::Value>| {
            s.map(|s| {
                Schema::compile(&s).map_err(|e| format!("{field} is not a valid JSON Schema: {e}"))
            })
            .transpose()
        };
        (one("input_schema", input), one("output_schema", output))
    })
    .await
    .map_err(|e| vec![format!("compiling the schemas failed: {e}")])?;
    match compiled {
        (Ok(i), Ok(o)) => Ok((i, o)),
        (i, o) => Err([i.err(), o.err()].into_iter().flatten().collect()),
    }
}

impl Registry {
    /// `quotas` are the server's defaults of the tenants' quotas.
    pub fn new(
        store: Arc<dyn JobStore>,
        sandbox: Sandbox,
        defaults: Limits,
        quotas: crate::quota::Quotas,
    ) -> Self {
        Registry {
            admission: crate::admission::Admission::new(store.clone(), quotas),
            store,
            sandbox,
            defaults,
            versions: Mutex::new(HashMap::new()),
            heads: Mutex::new(HashMap::new()),
            checks: check_lanes(),
            vault: OnceLock::new(),
            traces: OnceLock::new(),
        }
    }

    /// Gives the registry where jobs' spans go (`App::start`). Set once.
    pub fn set_traces(&self, t: crate::otel::Traces) {
        if self.traces.set(t).is_err() {
            tracing::warn!("the registry's traces were set already; the first stay");
        }
    }

    /// Where jobs' spans go: every path that makes a span takes it here.
    pub fn traces(&self) -> &crate::otel::Traces {
        static OFF: OnceLock<crate::otel::Traces> = OnceLock::new();
        self.traces
            .get()
            .unwrap_or_else(|| OFF.get_or_init(crate::otel::Traces::off))
    }

    /// Gives the registry the vault that opens secrets. Set once: a later
    /// call leaves the first vault in place (and says so in the log), as
    /// secrets sealed under one key do not open under another.
    pub fn set_vault(&self, v: Arc<Vault>) {
        if self.vault.set(v).is_err() {
            tracing::warn!("the registry's secrets vault was set already; the first one stays");
        }
    }

    /// The vault that opens the tenants' secrets (`secrets::reveal`);
    /// `None` until one is set.
    /// The secrets `task` declares, opened for an attempt of `tenant`'s
    /// (the runner's and an invoke's one way to them).
    pub async fn secrets_for(
        &self,
        tenant: &str,
        task: &TaskVersion,
    ) -> Result<Vec<(String, String)>, crate::secrets::SecretsError> {
        if task.spec.secrets.is_empty() {
            return Ok(Vec::new());
        }
        let vault = self.vault().ok_or(crate::secrets::SecretsError::NoKey)?;
        crate::secrets::reveal(self.store.as_ref(), vault, tenant, &task.spec.secrets).await
    }

    pub fn vault(&self) -> Option<&Arc<Vault>> {
        self.vault.get()
    }

    /// Each tenant's enqueue rate and quotas, for every path that makes a
    /// job.
    pub fn admission(&self) -> &crate::admission::Admission {
        &self.admission
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    pub fn store(&self) -> &Arc<dyn JobStore> {
        &self.store
    }

    fn ceilings(&self) -> &Ceilings {
        &self.sandbox.config().ceilings
    }

    /// Validates and compiles uploaded bytes, then records them for the
    /// tenant. `created` is false when the tenant had them already. Its
    /// quotas are checked before anything is compiled (and again when the
    /// record is written, which is exact); bytes it has already are not
    /// compiled again.
    pub async fn upload(
        &self,
        tenant: &str,
        bytes: Vec<u8>,
    ) -> Result<(ComponentRecord, bool), RegistryError> {
        let digest = Digest::of(&bytes).to_string();
        if let Some(known) = self.store.component_get(tenant, &digest).await? {
            return Ok((known, false));
        }
        let (count, held) = self.store.component_usage(tenant).await?;
        let quotas = self.admission.quotas_of(tenant).await?;
        crate::store::tenants::component_room(
            &quotas,
            i64::try_from(count).unwrap_or(i64::MAX),
            i64::try_from(held).unwrap_or(i64::MAX),
            bytes.len() as u64,
        )?;
        let program = self.sandbox.load(tenant, &bytes).await?;
        let abi = match program.abi() {
            crate::abi::Abi::Task => "task",
            crate::abi::Abi::Command => "command",
        };
        Ok(self
            .store
            .component_insert(NewComponent {
                tenant: tenant.to_owned(),
                digest: program.digest.to_string(),
                abi: abi.to_owned(),
                bytes,
            })
            .await?)
    }

    /// Checks a definition against everything it refers to and stores it as
    /// the task's next version.
    pub async fn define(
        &self,
        tenant: &str,
        name: &str,
        mut spec: TaskSpec,
    ) -> Result<Arc<TaskVersion>, RegistryError> {
        let mut problems = spec.validate(name).err().unwrap_or_default();
        // How the version goes live, not what it is: kept on the version's
        // row, not in its definition.
        let rollout = spec.rollout.take();
        if let Err(mut p) =
            compile_schemas(spec.input_schema.clone(), spec.output_schema.clone()).await
        {
            problems.append(&mut p);
        }
        if !problems.is_empty() {
            return Err(RegistryError::InvalidTask(problems));
        }
        let digest = spec.component.to_string();
        if self.store.component_get(tenant, &digest).await?.is_none() {
            return Err(RegistryError::ComponentNotFound(digest));
        }
        if let Some(fallback) = &spec.fallback {
            if self.store.task_get(tenant, fallback, None).await?.is_none() {
                return Err(RegistryError::InvalidTask(vec![format!(
                    "fallback task {fallback:?} does not exist; define it first"
                )]));
            }
            let known = self.fallbacks_of(tenant).await?;
            if let Some(cycle) =
                spec::fallback_cycle(name, fallback, MAX_FALLBACK_DEPTH as usize, |t| {
                    known.get(t).cloned()
                })
            {
                return Err(RegistryError::InvalidTask(vec![format!(
                    "fallback chain {} is a cycle (or longer than {MAX_FALLBACK_DEPTH}); a job would never end",
                    cycle.join(" → ")
                )]));
            }
        }
        for (field, callback) in [("on_success", &spec.on_success), ("on_fail", &spec.on_fail)] {
            if let Some(c) = callback {
                if self.store.task_get(tenant, c, None).await?.is_none() {
                    return Err(RegistryError::InvalidTask(vec![format!(
                        "{field} task {c:?} does not exist; define it first"
                    )]));
                }
            }
        }
        // A loop through callbacks (and fallbacks) would make jobs for
        // ever from one enqueue. It is looked for through every version
        // that can be live, staged ones too (`every_successor_of`), so a
        // staged version, even at 0 %, closes none that promote would
        // make live. Two definitions at once could still close one (each
        // read the other's old version): each job's callback depth ends
        // that (`MAX_CALLBACK_DEPTH`).
        let first = spec::successors(&spec);
        if spec.on_success.is_some() || spec.on_fail.is_some() || spec.fallback.is_some() {
            let known = self.every_successor_of(tenant).await?;
            if let Some(cycle) =
                spec::cycle_through(name, &first, |t| known.get(t).cloned().unwrap_or_default())
            {
                return Err(RegistryError::InvalidTask(vec![format!(
                    "callbacks and fallbacks close a cycle, {cycle}: one job would enqueue \
                     another for ever; break it (change or drop one of them first)"
                )]));
            }
        }
        if rollout.is_some() && self.store.task_get(tenant, name, None).await?.is_none() {
            return Err(RegistryError::InvalidTask(vec![format!(
                "rollout: task {name:?} has no live version to roll this one out beside; define \
                 its first version without \"rollout\""
            )]));
        }
        let record = self
            .store
            .task_insert(NewTask {
                tenant: tenant.to_owned(),
                name: name.to_owned(),
                digest,
                spec: serde_json::to_string(&spec)
                    .map_err(|e| StoreError::Internal(e.to_string()))?,
                rollout: rollout.map(|r| r.percent),
            })
            .await?;
        // Enqueues in this process pin the new version from now on.
        self.forget_head(tenant, name);
        self.prepare(record).await
    }

    /// Changes a task's rollout (its share, promote, rollback), answering
    /// the staged version as it is after; `None` when none is staged.
    pub async fn change_rollout(
        &self,
        tenant: &str,
        name: &str,
        change: RolloutChange,
    ) -> Result<Option<TaskRecord>, RegistryError> {
        let changed = match self.store.task_rollout(tenant, name, change).await {
            Ok(r) => Some(r),
            Err(StoreError::NotFound) => None,
            Err(e) => return Err(e.into()),
        };
        self.forget_head(tenant, name);
        Ok(changed)
    }

    fn forget_head(&self, tenant: &str, name: &str) {
        self.heads_cache()
            .remove(&(tenant.to_owned(), name.to_owned()));
    }

    /// Each of the tenant's tasks' current fallback.
    async fn fallbacks_of(&self, tenant: &str) -> Result<HashMap<String, String>, RegistryError> {
        Ok(self
            .successors_of(tenant)
            .await?
            .into_iter()
            .filter_map(|(t, next)| {
                next.into_iter()
                    .find(|(kind, _)| *kind == "fallback")
                    .map(|(_, f)| (t, f))
            })
            .collect())
    }

    /// Each of the tenant's tasks' fallback and callbacks in every
    /// version that can be live: its live version's and its staged one's.
    /// A staged version runs some jobs (a callback's job pins either
    /// version of its task by its own id) and is live once promoted, at
    /// any share, 0 % too; so a cycle through any mix of them is one that
    /// jobs can run. A rolled-back version can be live no more.
    async fn every_successor_of(
        &self,
        tenant: &str,
    ) -> Result<HashMap<String, Vec<(&'static str, String)>>, RegistryError> {
        let mut out = self.successors_of(tenant).await?;
        // At most one staged version a task, and the tenant's tasks are
        // held by its `max_task_versions` quota: every one is read.
        for t in self.store.tasks_staged(Some(tenant), u32::MAX).await? {
            if let Ok(spec) = serde_json::from_str::<TaskSpec>(&t.spec) {
                out.entry(t.name)
                    .or_default()
                    .extend(spec::successors(&spec));
            }
        }
        Ok(out)
    }

    /// Each of the tenant's tasks' live fallback and callbacks.
    async fn successors_of(
        &self,
        tenant: &str,
    ) -> Result<HashMap<String, Vec<(&'static str, String)>>, RegistryError> {
        let mut out = HashMap::new();
        for t in self.store.task_list(Some(tenant)).await? {
            if let Ok(spec) = serde_json::from_str::<TaskSpec>(&t.spec) {
                out.insert(t.name, spec::successors(&spec));
            }
        }
        Ok(out)
    }

    /// Checks a workflow definition against everything it names (each
    /// task exists, the input schema compiles) and stores it as the
    /// workflow's next version. Every problem names its step.
    pub async fn define_workflow(
        &self,
        tenant: &str,
        name: &str,
        spec: workflow::WorkflowSpec,
    ) -> Result<crate::store::WorkflowRecord, RegistryError> {
        let mut problems = spec.validate(name).err().unwrap_or_default();
        if let Err(mut p) = compile_schemas(spec.input_schema.clone(), None).await {
            problems.append(&mut p);
        }
        if problems.is_empty() {
            for (at, task) in spec.tasks() {
                if self.store.task_get(tenant, task, None).await?.is_none() {
                    problems.push(format!(
                        "{at}: task {task:?} does not exist; define it first (PUT /v1/tasks/{task})"
                    ));
                }
            }
        }
        if !problems.is_empty() {
            return Err(RegistryError::InvalidWorkflow(problems));
        }
        Ok(self
            .store
            .workflow_insert(crate::store::NewWorkflow {
                tenant: tenant.to_owned(),
                name: name.to_owned(),
                spec: serde_json::to_string(&spec)
                    .map_err(|e| StoreError::Internal(e.to_string()))?,
            })
            .await?)
    }

    /// A task version (`None`: the live one), compiled and cached.
    pub async fn task(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> Result<Arc<TaskVersion>, RegistryError> {
        let Some(v) = version else {
            return Ok(self.head(tenant, name).await?.live.clone());
        };
        let key = (tenant.to_owned(), name.to_owned(), v);
        if let Some(tv) = self.cache().get(&key) {
            return Ok(tv.clone());
        }
        let record = self
            .store
            .task_get(tenant, name, Some(v))
            .await?
            .ok_or_else(|| RegistryError::TaskNotFound(name.to_owned()))?;
        self.version_of(record).await
    }

    /// The version a new job with id `job_id` pins: the live one, or a
    /// staged one for the rollout's share of ids (`rollout::TaskHead`).
    pub async fn task_for(
        &self,
        tenant: &str,
        name: &str,
        job_id: &str,
    ) -> Result<Arc<TaskVersion>, RegistryError> {
        Ok(self.head(tenant, name).await?.pick(job_id).clone())
    }

    /// What new jobs of a task pin, remembered for `NEWEST_FRESH_FOR`.
    pub async fn head(&self, tenant: &str, name: &str) -> Result<Arc<TaskHead>, RegistryError> {
        let key = (tenant.to_owned(), name.to_owned());
        if let Some((head, at)) = self.heads_cache().get(&key) {
            if at.elapsed() < NEWEST_FRESH_FOR {
                return Ok(head.clone());
            }
        }
        let found = self
            .store
            .task_head(tenant, name)
            .await?
            .ok_or_else(|| RegistryError::TaskNotFound(name.to_owned()))?;
        let staged = match found.staged {
            Some(r) => Some(Staged {
                percent: r.rollout_percent.unwrap_or(0),
                started_at: r.rollout_since(),
                version: self.version_of(r).await?,
            }),
            None => None,
        };
        let head = Arc::new(TaskHead {
            live: self.version_of(found.live).await?,
            staged,
        });
        let mut heads = self.heads_cache();
        if heads.len() >= MAX_CACHED_VERSIONS {
            heads.clear();
        }
        heads.insert(key, (head.clone(), std::time::Instant::now()));
        Ok(head)
    }

    /// A stored version, compiled once.
    async fn version_of(&self, record: TaskRecord) -> Result<Arc<TaskVersion>, RegistryError> {
        if let Some(tv) =
            self.cache()
                .get(&(record.tenant.clone(), record.name.clone(), record.version))
        {
            return Ok(tv.clone());
        }
        self.prepare(record).await
    }

    fn heads_cache(&self) -> std::sync::MutexGuard<'_, Heads> {
        self.heads.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String, u32), Arc<TaskVersion>>> {
        self.versions.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn prepare(&self, record: TaskRecord) -> Result<Arc<TaskVersion>, RegistryError> {
        let spec: TaskSpec = serde_json::from_str(&record.spec)
            .map_err(|e| StoreError::Internal(format!("stored task definition unreadable: {e}")))?;
        let (input_schema, output_schema) =
            compile_schemas(spec.input_schema.clone(), spec.output_schema.clone())
                .await
                .map_err(RegistryError::InvalidTask)?;
        let network = match &spec.network {
            Some(n) => Some(Arc::new(
                crate::sandbox::NetworkGrant::resolve(
                    &n.allow,
                    n.max_requests,
                    n.max_response_bytes,
                    &self.sandbox.config().network,
                )
                .map_err(RegistryError::InvalidTask)?,
            )),
            None => None,
        };
        let tv = Arc::new(TaskVersion {
            network,
            limits: Limits::resolve(
                &spec.limits.unwrap_or_default(),
                self.defaults,
                self.ceilings(),
            ),
            retry: spec.retry.clone().unwrap_or_default(),
            input_schema,
            output_schema,
            spec,
            record,
        });
        let mut cache = self.cache();
        if cache.len() >= MAX_CACHED_VERSIONS {
            cache.clear();
        }
        cache.insert(
            (
                tv.record.tenant.clone(),
                tv.record.name.clone(),
                tv.record.version,
            ),
            tv.clone(),
        );
        Ok(tv)
    }

    /// The compiled program for a digest, loading its bytes from the store
    /// when this process has not seen it yet (a compile of `tenant`'s, in
    /// its turn).
    pub async fn program(&self, tenant: &str, digest: &str) -> Result<Arc<Program>, RegistryError> {
        let parsed: Digest = digest
            .parse()
            .map_err(|_| RegistryError::ComponentNotFound(digest.to_owned()))?;
        if let Some(p) = self.sandbox.loaded(&parsed) {
            return Ok(p);
        }
        let bytes = self
            .store
            .component_bytes(digest)
            .await?
            .ok_or_else(|| RegistryError::ComponentNotFound(digest.to_owned()))?;
        Ok(self.sandbox.load(tenant, &bytes).await?)
    }

    /// Checks a value against one of a task version's schemas, within the
    /// bound of work every check has (`schema::MAX_STEPS`). A check that
    /// needs more than a few steps moves off the async threads into the
    /// tenant's lane. The value comes back when it passes.
    pub async fn check(
        &self,
        tv: &Arc<TaskVersion>,
        which: Which,
        value: serde_json::Value,
    ) -> Result<serde_json::Value, CheckError> {
        let pick: fn(&TaskVersion) -> Option<&Schema> = match which {
            Which::Input => |tv| tv.input_schema.as_ref(),
            Which::Output => |tv| tv.output_schema.as_ref(),
        };
        self.check_in(&tv.record.tenant, tv.clone(), pick, value)
            .await
    }

    /// Checks a workflow job's input against the workflow's input schema.
    pub async fn check_workflow_input(
        &self,
        wf: &Arc<WorkflowVersion>,
        value: serde_json::Value,
    ) -> Result<serde_json::Value, CheckError> {
        self.check_in(&wf.tenant, wf.clone(), |w| w.input_schema.as_ref(), value)
            .await
    }

    /// Checks `value` against the schema `pick` finds in `holder`, a
    /// schema of `tenant`'s: small checks inline, the rest off the async
    /// threads within the tenant's share of the checking lanes.
    async fn check_in<T: Send + Sync + 'static>(
        &self,
        tenant: &str,
        holder: Arc<T>,
        pick: fn(&T) -> Option<&Schema>,
        value: serde_json::Value,
    ) -> Result<serde_json::Value, CheckError> {
        let Some(s) = pick(&holder) else {
            return Ok(value);
        };
        if schema::depth(&value) <= schema::MAX_DEPTH
            && s.is_valid_within(&value, INLINE_STEPS) == Some(true)
        {
            return Ok(value);
        }
        let too_complex = |message: String| {
            CheckError::TooComplex(schema::Violation {
                pointer: String::new(),
                message,
            })
        };
        let place = self
            .checks
            .enter(tenant, None)
            .await
            .map_err(|_| too_complex("the server is stopping; try again".into()))?;
        // At a guest's priority: its cost is the tenant's schema's. The
        // permits go with it, so a caller who gives up frees no lane
        // before the check ends.
        crate::priority::run_lowered("taskbox-check", move || {
            let _place = place;
            let checked = pick(&holder).map_or(Ok(()), |s| s.check(&value, schema::MAX_STEPS));
            checked.map(|()| value)
        })
        .await
        .unwrap_or_else(|| Err(too_complex("the check failed".into())))
    }

    /// A version of a workflow (`None`: the newest), its input schema
    /// compiled.
    pub async fn workflow(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> Result<Arc<WorkflowVersion>, RegistryError> {
        let record = self
            .store
            .workflow_get(tenant, name, version)
            .await?
            .ok_or_else(|| RegistryError::WorkflowNotFound(name.to_owned()))?;
        let spec: workflow::WorkflowSpec = serde_json::from_str(&record.spec)
            .map_err(|e| StoreError::Internal(format!("a stored workflow does not parse: {e}")))?;
        let (input_schema, _) = compile_schemas(spec.input_schema.clone(), None)
            .await
            .map_err(RegistryError::InvalidWorkflow)?;
        Ok(Arc::new(WorkflowVersion {
            tenant: record.tenant,
            name: record.name,
            version: u32::try_from(record.version).unwrap_or(0),
            spec,
            input_schema,
        }))
    }
}
