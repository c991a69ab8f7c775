//! The sandbox: validates and compiles guests once, then runs each attempt in
//! a fresh wasmtime store with fuel, wall-clock and memory limits.

mod attempt;
pub mod bindings;
mod cache;
pub mod capture;
pub(crate) mod classify;
pub mod engine;
mod host;
pub mod inspect;
pub mod limits;
pub mod network;
mod redact;
mod ticker;

pub use attempt::{AttemptReport, AttemptRequest, Ending, JobRef};
pub use cache::ArtifactCache;
pub use capture::AttemptLog;
pub use host::{GuestFailure, Orchestrate, Progress, ProgressHook};
pub use inspect::{Abi, Invalid, Shape};
pub use limits::{Ceilings, Limits};
pub use network::{NetworkConfig, NetworkGrant, NetworkTally};
pub use redact::Redactor;

use crate::digest::Digest;
use bindings::OrchestratorPre as TaskPre;
use cache::Cached;
use host::{ComponentHost, ModuleHost};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;
use wasmtime::component::{Component, HasSelf};
use wasmtime::{Engine, Module};
use wasmtime_wasi::p2::bindings::CommandPre;

/// How the sandbox is set up; chosen by whoever runs the process.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Where compiled artifacts are cached; `None` compiles in memory only.
    pub cache_dir: Option<PathBuf>,
    pub ceilings: Ceilings,
    /// Largest component accepted, in bytes.
    pub max_component_bytes: usize,
    /// Most attempts instantiated at once.
    pub max_instances: u32,
    /// Longest a compile may take before the component is refused.
    pub compile_timeout: Duration,
    /// Most compiled programs kept in memory.
    pub max_programs: usize,
    /// How guests are metered. Anything but the default exists only to
    /// measure what metering costs.
    pub metering: Metering,
    /// What guests' outbound HTTP may do at most.
    pub network: NetworkConfig,
}

/// Which of wasmtime's instrumentation the engine compiles in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metering {
    /// Fuel for CPU budgets and epochs for wall-clock limits: what production uses.
    #[default]
    FuelAndEpoch,
    /// Epochs only: wall-clock limits, no fuel budget.
    EpochOnly,
    /// Neither: only the outer timer can stop a guest, and only at a host call.
    Unmetered,
}

impl Metering {
    pub fn fuel(self) -> bool {
        self == Metering::FuelAndEpoch
    }

    pub fn epoch(self) -> bool {
        self != Metering::Unmetered
    }
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            cache_dir: None,
            ceilings: Ceilings::DEFAULT,
            max_component_bytes: 64 << 20,
            max_instances: engine::DEFAULT_MAX_INSTANCES,
            compile_timeout: Duration::from_secs(300),
            max_programs: 256,
            metering: Metering::FuelAndEpoch,
            network: NetworkConfig::default(),
        }
    }
}

/// The sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("cannot configure the WebAssembly engine: {0}")]
    Engine(String),
    #[error("cannot open the compile cache at {path}: {source}")]
    Cache {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where a loaded program's machine code came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Compiled now; `rejected` says why a cached artifact was not used.
    Compiled { rejected: Option<String> },
    /// Loaded from the on-disk cache after its MAC checked out.
    DiskCache,
}

/// A guest ready to run: validated, compiled, linked.
pub struct Program {
    pub digest: Digest,
    pub shape: Shape,
    pub size: usize,
    pub origin: Origin,
    pre: Prepared,
}

impl Program {
    pub fn abi(&self) -> Abi {
        self.shape.abi()
    }
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("digest", &self.digest)
            .field("shape", &self.shape)
            .field("size", &self.size)
            .field("origin", &self.origin)
            .finish()
    }
}

enum Prepared {
    Task(TaskPre<ComponentHost>),
    Command(CommandPre<ComponentHost>),
    Module(wasmtime::InstancePre<ModuleHost>),
}

enum Compiled {
    Component(Component),
    Module(Module),
}

/// Compiled programs in memory, least recently used evicted first.
#[derive(Default)]
struct Programs {
    map: HashMap<Digest, (Arc<Program>, u64)>,
    clock: u64,
}

impl Programs {
    /// The next use stamp, for least-recently-used eviction.
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }
}

/// One per process: share it by cloning.
#[derive(Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    ticker: ticker::Ticker,
    config: SandboxConfig,
    components: wasmtime::component::Linker<ComponentHost>,
    modules: wasmtime::Linker<ModuleHost>,
    preview1: HashSet<String>,
    cache: Option<ArtifactCache>,
    programs: Mutex<Programs>,
    /// One compile at a time, so uploads cannot pile up CPU and memory.
    compile_gate: Arc<Semaphore>,
    /// One load per digest at a time: a second upload of the same bytes
    /// waits for the first one's program instead of compiling it again.
    loading: Mutex<HashMap<Digest, Arc<tokio::sync::Mutex<()>>>>,
    /// Compiles begun, for tests and metrics.
    compiles: std::sync::atomic::AtomicU64,
    /// Attempts whose store is alive now (each holds one of the pooling
    /// allocator's instances while it lives).
    alive: Arc<std::sync::atomic::AtomicI64>,
    /// Guests' outbound HTTP: settings and each tenant's connections.
    outbound: Arc<network::Outbound>,
}

/// Counts one attempt alive while it is held.
pub(crate) struct Alive(Arc<std::sync::atomic::AtomicI64>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Sandbox {
    pub fn new(config: SandboxConfig) -> Result<Self, SetupError> {
        let engine_err = |e: wasmtime::Error| SetupError::Engine(format!("{e:#}"));
        let engine = engine::build(&config.ceilings, config.max_instances, config.metering)
            .map_err(engine_err)?;
        let ticker =
            ticker::Ticker::spawn(&engine).map_err(|e| SetupError::Engine(e.to_string()))?;

        let mut components = wasmtime::component::Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut components).map_err(engine_err)?;
        bindings::Orchestrator::add_to_linker::<_, HasSelf<ComponentHost>>(&mut components, |h| h)
            .map_err(engine_err)?;
        // Offered to every component, granted or not, so one component
        // runs everywhere; without a grant each request is refused.
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut components)
            .map_err(engine_err)?;
        wasmtime_wasi_config::add_to_linker(&mut components, |h: &mut ComponentHost| {
            wasmtime_wasi_config::WasiConfig::from(&h.config)
        })
        .map_err(engine_err)?;

        let mut modules = wasmtime::Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_async(&mut modules, |h: &mut ModuleHost| &mut h.wasi)
            .map_err(engine_err)?;
        let preview1 = preview1_names(&engine, &modules);

        let cache = match &config.cache_dir {
            Some(dir) => Some(
                ArtifactCache::open(dir, &engine::fingerprint(&engine)).map_err(|source| {
                    SetupError::Cache {
                        path: dir.clone(),
                        source,
                    }
                })?,
            ),
            None => None,
        };
        let outbound = Arc::new(network::Outbound::new(config.network.clone()));
        Ok(Sandbox {
            inner: Arc::new(Inner {
                engine,
                ticker,
                config,
                components,
                modules,
                preview1,
                cache,
                programs: Mutex::new(Programs::default()),
                compile_gate: Arc::new(Semaphore::new(1)),
                loading: Mutex::new(HashMap::new()),
                compiles: Default::default(),
                alive: Default::default(),
                outbound,
            }),
        })
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.inner.config
    }

    /// Connections the tenant's guests hold open now, in this process.
    pub fn open_connections(&self, tenant: &str) -> u32 {
        self.inner.outbound.open_connections(tenant)
    }

    /// Attempts running in this sandbox now.
    pub fn alive(&self) -> i64 {
        self.inner.alive.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn enter(&self) -> Alive {
        self.inner
            .alive
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Alive(self.inner.alive.clone())
    }

    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The cache of compiled artifacts, if this sandbox has one.
    pub fn artifact_cache(&self) -> Option<&ArtifactCache> {
        self.inner.cache.as_ref()
    }

    /// Checks bytes without compiling them: size, ABI, imports.
    pub fn inspect(&self, bytes: &[u8]) -> Result<Shape, Invalid> {
        inspect::inspect(bytes, self.inner.config.max_component_bytes, |m, n| {
            m == "wasi_snapshot_preview1" && self.inner.preview1.contains(n)
        })
    }

    /// A program already loaded in this process (a hit of the in-memory
    /// cache, counted).
    pub fn loaded(&self, digest: &Digest) -> Option<Arc<Program>> {
        let found = self.find(digest);
        if found.is_some() {
            crate::metrics::get().loaded("memory", None);
        }
        found
    }

    fn find(&self, digest: &Digest) -> Option<Arc<Program>> {
        let mut p = self
            .inner
            .programs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let now = p.tick();
        p.map.get_mut(digest).map(|(prog, used)| {
            *used = now;
            prog.clone()
        })
    }

    /// Makes every running guest reach its next epoch check now, where it
    /// yields its thread: an attempt that must start at once gets one.
    pub fn nudge(&self) {
        self.inner.engine.increment_epoch();
    }

    /// Validates, compiles (or loads from the cache) and links a guest.
    /// Loading happens off the async threads, compiling one at a time
    /// within the configured time. Loads of the same bytes at once share
    /// one compile, and a load whose caller gave up still finishes and is
    /// kept: the compile is not wasted, and the next caller finds it done.
    pub async fn load(&self, bytes: &[u8]) -> Result<Arc<Program>, Invalid> {
        let digest = Digest::of(bytes);
        if let Some(p) = self.find(&digest) {
            return Ok(p);
        }
        let shape = self.inspect(bytes)?;
        let one = self.load_lock(&digest);
        let held = one.clone().lock_owned().await;
        let loaded = self.load_alone(digest, shape, bytes, held).await;
        self.forget_load_lock(&digest, one);
        loaded
    }

    /// How many compiles this sandbox has begun.
    pub fn compiles(&self) -> u64 {
        self.inner
            .compiles
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A load while no other of the same digest runs (`held` says so, and
    /// is held until the compile ends, even if the caller gives up first).
    async fn load_alone(
        &self,
        digest: Digest,
        shape: Shape,
        bytes: &[u8],
        held: tokio::sync::OwnedMutexGuard<()>,
    ) -> Result<Arc<Program>, Invalid> {
        if let Some(p) = self.find(&digest) {
            return Ok(p);
        }
        let timeout = self.inner.config.compile_timeout;
        let permit = tokio::time::timeout(timeout, self.inner.compile_gate.clone().acquire_owned())
            .await
            .map_err(|_| {
                Invalid::Busy(format!(
                    "the compiler stayed busy for {} s; try again",
                    timeout.as_secs()
                ))
            })?
            .map_err(|_| Invalid::Busy("the compiler is shut down".into()))?;
        let this = self.clone();
        let bytes = bytes.to_vec();
        let job = tokio::task::spawn_blocking(move || {
            // The permit is held until the work really ends, even if the
            // caller gave up waiting: compiles never run side by side. So is
            // the digest's lock: a second load of it waits for this one.
            let _permit = permit;
            let _held = held;
            let (compiled, origin) = this.compile_cached(&digest, shape, &bytes)?;
            let pre = this.link(shape, compiled)?;
            let program = Arc::new(Program {
                digest,
                shape,
                size: bytes.len(),
                origin,
                pre,
            });
            this.remember(program.clone());
            Ok(program)
        });
        match tokio::time::timeout(timeout, job).await {
            Err(_) => Err(Invalid::Compile(format!(
                "compiling took longer than {} s; the component is too large or too complex",
                timeout.as_secs()
            ))),
            Ok(Err(join)) => Err(Invalid::Compile(format!("the compiler failed: {join}"))),
            Ok(Ok(r)) => r,
        }
    }

    fn load_lock(&self, digest: &Digest) -> Arc<tokio::sync::Mutex<()>> {
        let mut loading = self.inner.loading.lock().unwrap_or_else(|e| e.into_inner());
        loading.entry(*digest).or_default().clone()
    }

    fn forget_load_lock(&self, digest: &Digest, mine: Arc<tokio::sync::Mutex<()>>) {
        let mut loading = self.inner.loading.lock().unwrap_or_else(|e| e.into_inner());
        // Ours and the map's: no one else waits for it.
        if Arc::strong_count(&mine) <= 2 {
            loading.remove(digest);
        }
    }

    fn remember(&self, program: Arc<Program>) {
        let mut p = self
            .inner
            .programs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let now = p.tick();
        if p.map.len() >= self.inner.config.max_programs.max(1) {
            if let Some(oldest) = p
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(d, _)| *d)
            {
                p.map.remove(&oldest);
            }
        }
        p.map.insert(program.digest, (program, now));
    }

    fn compile_cached(
        &self,
        digest: &Digest,
        shape: Shape,
        bytes: &[u8],
    ) -> Result<(Compiled, Origin), Invalid> {
        let mut rejected = None;
        if let Some(cache) = &self.inner.cache {
            match cache.load(digest) {
                Cached::Hit(artifact) => match self.deserialize(shape, &artifact) {
                    Ok(c) => {
                        crate::metrics::get().loaded("disk", None);
                        return Ok((c, Origin::DiskCache));
                    }
                    Err(e) => {
                        cache.discard(digest);
                        rejected = Some(format!("the engine refused it: {e}"));
                    }
                },
                Cached::Rejected(why) => rejected = Some(why),
                Cached::Miss => {}
            }
            if let Some(why) = &rejected {
                tracing::warn!(%digest, reason = %why, "cached artifact rejected; compiling again");
            }
        }
        self.inner
            .compiles
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t0 = std::time::Instant::now();
        let compiled = if shape.is_component() {
            Component::new(&self.inner.engine, bytes).map(Compiled::Component)
        } else {
            Module::new(&self.inner.engine, bytes).map(Compiled::Module)
        }
        .map_err(|e| Invalid::Compile(format!("{e:#}")))?;
        crate::metrics::get().loaded("compiled", Some(t0.elapsed()));
        if let Some(cache) = &self.inner.cache {
            let artifact = match &compiled {
                Compiled::Component(c) => c.serialize(),
                Compiled::Module(m) => m.serialize(),
            };
            match artifact
                .map_err(|e| e.to_string())
                .and_then(|a| cache.store(digest, &a).map_err(|e| e.to_string()))
            {
                Ok(()) => {}
                Err(e) => {
                    tracing::warn!(%digest, error = %e, "could not cache the compiled artifact")
                }
            }
        }
        Ok((compiled, Origin::Compiled { rejected }))
    }

    fn deserialize(&self, shape: Shape, artifact: &[u8]) -> wasmtime::Result<Compiled> {
        // SAFETY: the artifact's MAC was made with this cache's secret key
        // over exactly these bytes, so this process family produced them with
        // `serialize` under this engine configuration (the directory is keyed
        // by the engine's compatibility hash, and wasmtime re-checks it).
        unsafe {
            Ok(if shape.is_component() {
                Compiled::Component(Component::deserialize(&self.inner.engine, artifact)?)
            } else {
                Compiled::Module(Module::deserialize(&self.inner.engine, artifact)?)
            })
        }
    }

    fn link(&self, shape: Shape, compiled: Compiled) -> Result<Prepared, Invalid> {
        let link_err = |e: wasmtime::Error| Invalid::Link(format!("{e:#}"));
        match (shape, compiled) {
            (Shape::TaskComponent, Compiled::Component(c)) => {
                let pre = self
                    .inner
                    .components
                    .instantiate_pre(&c)
                    .map_err(link_err)?;
                TaskPre::new(pre).map(Prepared::Task).map_err(link_err)
            }
            (Shape::CommandComponent, Compiled::Component(c)) => {
                let pre = self
                    .inner
                    .components
                    .instantiate_pre(&c)
                    .map_err(link_err)?;
                CommandPre::new(pre)
                    .map(Prepared::Command)
                    .map_err(link_err)
            }
            (Shape::CommandModule, Compiled::Module(m)) => self
                .inner
                .modules
                .instantiate_pre(&m)
                .map(Prepared::Module)
                .map_err(link_err),
            _ => Err(Invalid::Link(
                "the compiled artifact does not match its kind".into(),
            )),
        }
    }
}

/// The preview-1 functions the module linker defines, so an upload can be
/// told every import it lacks, not just the first.
fn preview1_names(engine: &Engine, linker: &wasmtime::Linker<ModuleHost>) -> HashSet<String> {
    let mut store = wasmtime::Store::new(
        engine,
        ModuleHost {
            wasi: wasmtime_wasi::WasiCtxBuilder::new().build_p1(),
            attempt: host::Attempt {
                limiter: limits::StoreLimiter::new(0),
                log: capture::LogBuffer::new(0, std::time::Instant::now()),
                progress: None,
                on_progress: None,
            },
        },
    );
    linker
        .iter(&mut store)
        .filter(|(module, _, _)| *module == "wasi_snapshot_preview1")
        .map(|(_, name, _)| name.to_owned())
        .collect()
}
