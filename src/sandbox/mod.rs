//! The sandbox: validates and compiles guests once, then runs each attempt in
//! a fresh wasmtime store with fuel, wall-clock and memory limits.

mod attempt;
mod attempt_spans;
pub mod bindings;
mod cache;
pub mod capture;
pub(crate) mod classify;
mod clocks;
pub mod compiler;
mod determinism;
mod ending;
pub mod engine;
mod guest_spans;
mod host;
pub mod inspect;
pub mod limits;
pub mod network;
mod redact;
mod sleeps;
mod ticker;
mod virtual_timers;

pub use crate::abi::Abi;
pub use crate::network_tally::NetworkTally;
pub use attempt::{AttemptReport, AttemptRequest, JobRef};
pub use attempt_spans::{AttemptTrace, MAX_SPANS_PER_ATTEMPT};
pub use cache::ArtifactCache;
pub use capture::AttemptLog;
pub use compiler::Compiler;
pub use determinism::Determinism;
pub use ending::Ending;
pub use host::{GuestFailure, Orchestrate, Progress, ProgressHook};
pub use inspect::{Invalid, Shape};
pub use limits::{Ceilings, Limits};
pub use network::{NetworkConfig, NetworkGrant};
pub use redact::Redactor;

use crate::digest::Digest;
use bindings::SandboxPre as TaskPre;
use cache::Cached;
use host::{ComponentHost, ModuleHost};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasmtime::component::{Component, HasSelf};
use wasmtime::{Engine, Module};
use wasmtime_wasi::p2::bindings::CommandPre;

/// Whose compiles the local tools' are (`taskbox run`, `job replay`,
/// `bench`): their own bytes, one caller.
pub const LOCAL_TENANT: &str = "local";

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
    /// Longest a compile may take before the component is refused (and,
    /// in a child, the compile stopped); also the longest a load waits for
    /// its turn to compile.
    pub compile_timeout: Duration,
    /// Where compiles run: a child process for tenants' bytes.
    pub compiler: Compiler,
    /// Compiles at once, each of another tenant.
    pub compile_slots: usize,
    /// Most bytes of compiled artifacts the disk cache keeps.
    pub cache_max_bytes: u64,
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
            max_component_bytes: inspect::DEFAULT_MAX_COMPONENT_BYTES,
            max_instances: engine::DEFAULT_MAX_INSTANCES,
            compile_timeout: compiler::DEFAULT_TIMEOUT,
            compiler: Compiler::InProcess,
            compile_slots: compiler::DEFAULT_SLOTS,
            cache_max_bytes: ArtifactCache::DEFAULT_MAX_BYTES,
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
    Module(ModulePre),
}

/// A preview-1 module linked twice: to WASI as it is, and for deterministic
/// attempts, whose `poll_oneoff` sleeps on the virtual clock.
struct ModulePre {
    plain: wasmtime::InstancePre<ModuleHost>,
    deterministic: wasmtime::InstancePre<ModuleHost>,
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
    /// The same, but for `poll_oneoff`, which sleeps on the virtual clock.
    deterministic_modules: wasmtime::Linker<ModuleHost>,
    preview1: HashSet<String>,
    cache: Option<ArtifactCache>,
    programs: Mutex<Programs>,
    /// Compiles: one at a time per tenant, `compile_slots` in all, shared
    /// in turn, so that one tenant's uploads wait behind its own.
    compiles_lanes: crate::lanes::Lanes,
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
        clocks::add_clocks(&mut components).map_err(engine_err)?;
        sleeps::add_sleeps(&mut components).map_err(engine_err)?;
        bindings::Sandbox::add_to_linker::<_, HasSelf<ComponentHost>>(&mut components, |h| h)
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
        clocks::add_module_clocks(&mut modules).map_err(engine_err)?;
        let preview1 = preview1_names(&engine, &modules);
        let mut deterministic_modules = modules.clone();
        sleeps::add_module_sleeps(&mut deterministic_modules).map_err(engine_err)?;

        let cache = match &config.cache_dir {
            Some(dir) => Some(
                ArtifactCache::open(dir, &engine::fingerprint(&engine), config.cache_max_bytes)
                    .map_err(|source| SetupError::Cache {
                        path: dir.clone(),
                        source,
                    })?,
            ),
            None => None,
        };
        let outbound = Arc::new(network::Outbound::new(config.network.clone()));
        let compile_slots = config.compile_slots;
        Ok(Sandbox {
            inner: Arc::new(Inner {
                engine,
                ticker,
                config,
                components,
                modules,
                deterministic_modules,
                preview1,
                cache,
                programs: Mutex::new(Programs::default()),
                compiles_lanes: crate::lanes::Lanes::new(compile_slots),
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

    /// Validates, compiles (or loads from the cache) and links a guest of
    /// `tenant`'s. An artifact on disk is loaded without waiting for any
    /// compile; a compile waits its turn in the tenant's lane (one at a
    /// time per tenant, `compile_slots` in all) and runs in a child
    /// process when the sandbox has one, stopped at `compile_timeout`.
    /// Loads of the same bytes at once share one compile, and a load
    /// whose caller gave up still finishes and is kept: the compile is not
    /// wasted, and the next caller finds it done.
    pub async fn load(&self, tenant: &str, bytes: &[u8]) -> Result<Arc<Program>, Invalid> {
        let digest = Digest::of(bytes);
        if let Some(p) = self.find(&digest) {
            return Ok(p);
        }
        let shape = self.inspect(bytes)?;
        let one = self.load_lock(&digest);
        let held = one.clone().lock_owned().await;
        let loaded = self.load_alone(tenant, digest, shape, bytes, held).await;
        self.forget_load_lock(&digest, one);
        loaded
    }

    /// How many compiles this sandbox has begun.
    pub fn compiles(&self) -> u64 {
        self.inner
            .compiles
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Forgets a program: its artifact on disk and its place in memory
    /// (a collected component's: no tenant has its bytes any more).
    pub fn forget(&self, digest: &Digest) {
        if let Some(cache) = &self.inner.cache {
            cache.discard(digest);
        }
        let mut p = self
            .inner
            .programs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        p.map.remove(digest);
    }

    /// A load while no other of the same digest runs (`held` says so). The
    /// work runs on a task of its own, which holds `held` (and its place
    /// in the lanes) until it ends, even if the caller gives up first.
    async fn load_alone(
        &self,
        tenant: &str,
        digest: Digest,
        shape: Shape,
        bytes: &[u8],
        held: tokio::sync::OwnedMutexGuard<()>,
    ) -> Result<Arc<Program>, Invalid> {
        if let Some(p) = self.find(&digest) {
            return Ok(p);
        }
        let (this, tenant, bytes) = (self.clone(), tenant.to_owned(), bytes.to_vec());
        let work = tokio::spawn(async move {
            let _held = held;
            this.load_owned(&tenant, digest, shape, bytes).await
        });
        work.await
            .map_err(|e| Invalid::Compile(format!("the compiler failed: {e}")))?
    }

    async fn load_owned(
        &self,
        tenant: &str,
        digest: Digest,
        shape: Shape,
        bytes: Vec<u8>,
    ) -> Result<Arc<Program>, Invalid> {
        let size = bytes.len();
        let (compiled, origin) = match self.load_from_disk(digest, shape).await {
            Ok(c) => (c, Origin::DiskCache),
            Err(rejected) => {
                let timeout = self.inner.config.compile_timeout;
                let _place = self
                    .inner
                    .compiles_lanes
                    .enter(tenant, Some(timeout))
                    .await
                    .map_err(|e| match e {
                        crate::lanes::LaneError::TimedOut => Invalid::Busy(format!(
                            "the compiler stayed busy with other uploads for {} s; try again",
                            timeout.as_secs()
                        )),
                        crate::lanes::LaneError::Closed => {
                            Invalid::Busy("the compiler is shut down".into())
                        }
                    })?;
                (
                    self.compile(digest, shape, bytes).await?,
                    Origin::Compiled { rejected },
                )
            }
        };
        let this = self.clone();
        let pre = tokio::task::spawn_blocking(move || this.link(shape, compiled))
            .await
            .map_err(|e| Invalid::Link(format!("linking failed: {e}")))??;
        let program = Arc::new(Program {
            digest,
            shape,
            size,
            origin,
            pre,
        });
        self.remember(program.clone());
        Ok(program)
    }

    /// The artifact on disk, loaded off the async threads; `Err` says why
    /// none was used (`None`: there was none).
    async fn load_from_disk(
        &self,
        digest: Digest,
        shape: Shape,
    ) -> Result<Compiled, Option<String>> {
        let Some(cache) = self.inner.cache.clone() else {
            return Err(None);
        };
        let this = self.clone();
        let found = tokio::task::spawn_blocking(move || match cache.load(&digest) {
            Cached::Hit(artifact) => match this.deserialize(shape, &artifact) {
                Ok(c) => Ok(c),
                Err(e) => {
                    cache.discard(&digest);
                    Err(Some(format!("the engine refused it: {e}")))
                }
            },
            Cached::Rejected(why) => Err(Some(why)),
            Cached::Miss => Err(None),
        })
        .await
        .unwrap_or_else(|e| Err(Some(format!("reading it failed: {e}"))));
        match &found {
            Ok(_) => crate::metrics::get().loaded("disk", None),
            Err(Some(why)) => {
                tracing::warn!(%digest, reason = %why, "cached artifact rejected; compiling again")
            }
            Err(None) => {}
        }
        found
    }

    /// Compiles, where the sandbox compiles, and keeps the artifact on disk.
    async fn compile(
        &self,
        digest: Digest,
        shape: Shape,
        bytes: Vec<u8>,
    ) -> Result<Compiled, Invalid> {
        self.inner
            .compiles
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t0 = std::time::Instant::now();
        let timeout = self.inner.config.compile_timeout;
        let compiled = match &self.inner.config.compiler {
            Compiler::Child { exe, max_memory_mb } => {
                let kind = if shape.is_component() {
                    compiler::Kind::Component
                } else {
                    compiler::Kind::Module
                };
                let artifact = compiler::compile_in_child(
                    exe,
                    *max_memory_mb,
                    kind,
                    self.inner.config.metering,
                    &bytes,
                    timeout,
                )
                .await?;
                let this = self.clone();
                tokio::task::spawn_blocking(move || {
                    this.keep(&digest, &artifact);
                    this.deserialize(shape, &artifact).map_err(|e| {
                        Invalid::Compile(format!("the compiled artifact does not load: {e:#}"))
                    })
                })
                .await
                .map_err(|e| Invalid::Compile(format!("the compiler failed: {e}")))??
            }
            Compiler::InProcess => {
                let this = self.clone();
                let work = tokio::task::spawn_blocking(move || {
                    let compiled = if shape.is_component() {
                        Component::new(&this.inner.engine, &bytes).map(Compiled::Component)
                    } else {
                        Module::new(&this.inner.engine, &bytes).map(Compiled::Module)
                    }
                    .map_err(|e| Invalid::Compile(format!("{e:#}")))?;
                    let artifact = match &compiled {
                        Compiled::Component(c) => c.serialize(),
                        Compiled::Module(m) => m.serialize(),
                    };
                    match artifact {
                        Ok(a) => this.keep(&digest, &a),
                        Err(e) => {
                            tracing::warn!(%digest, error = %e, "could not serialize the compiled artifact")
                        }
                    }
                    Ok(compiled)
                });
                // In a thread, the timeout ends the wait, not the compile.
                match tokio::time::timeout(timeout, work).await {
                    Err(_) => {
                        return Err(Invalid::Compile(format!(
                            "compiling took longer than {} s; the component is too large or too complex",
                            timeout.as_secs()
                        )))
                    }
                    Ok(Err(join)) => {
                        return Err(Invalid::Compile(format!("the compiler failed: {join}")))
                    }
                    Ok(Ok(r)) => r?,
                }
            }
        };
        crate::metrics::get().loaded("compiled", Some(t0.elapsed()));
        Ok(compiled)
    }

    /// Keeps a compiled artifact on disk, if the sandbox has a cache.
    fn keep(&self, digest: &Digest, artifact: &[u8]) {
        if let Some(cache) = &self.inner.cache {
            if let Err(e) = cache.store(digest, artifact) {
                tracing::warn!(%digest, error = %e, "could not cache the compiled artifact");
            }
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

    fn deserialize(&self, shape: Shape, artifact: &[u8]) -> wasmtime::Result<Compiled> {
        // SAFETY: the artifact comes from the disk cache, whose MAC (made
        // with this cache's secret key over exactly these bytes) checked
        // out, so this process family wrote it with `serialize` under this
        // engine configuration (the directory is keyed by the engine's
        // compatibility hash); or from our own compiling child, this
        // binary, over a pipe. wasmtime checks the configuration again.
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
            (Shape::CommandModule, Compiled::Module(m)) => Ok(Prepared::Module(ModulePre {
                plain: self.inner.modules.instantiate_pre(&m).map_err(link_err)?,
                deterministic: self
                    .inner
                    .deterministic_modules
                    .instantiate_pre(&m)
                    .map_err(link_err)?,
            })),
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
            clock: None,
        },
    );
    linker
        .iter(&mut store)
        .filter(|(module, _, _)| *module == "wasi_snapshot_preview1")
        .map(|(_, name, _)| name.to_owned())
        .collect()
}
