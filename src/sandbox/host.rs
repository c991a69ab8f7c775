//! What lives in an attempt's `Store`: the WASI context that grants nothing,
//! the outbound HTTP hooks and the secrets the guest may read, the limiter,
//! the task world's `log` and `progress` imports, and the orchestrator
//! world's `invoke` and `spawn`, which the runner answers, `fetch`, which
//! goes through the same outbound hooks as `wasi:http`, and the guest's own
//! spans (`guest_spans`).

use super::bindings::{taskbox::task::host, GuestLevel};
use super::capture::{Level, LogBuffer, Source};
use super::limits::StoreLimiter;
use super::network::GuestHttp;
use std::sync::Arc;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_config::WasiConfigVariables;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// Longest progress note kept.
pub const MAX_NOTE_BYTES: usize = 256;

/// A progress report from the guest.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    pub percent: u8,
    pub note: String,
}

/// Called on each progress report, e.g. to extend the job's lease.
pub type ProgressHook = Arc<dyn Fn(&Progress) + Send + Sync>;

/// State shared by both kinds of store.
pub struct Attempt {
    pub limiter: StoreLimiter,
    pub log: LogBuffer,
    pub progress: Option<Progress>,
    pub on_progress: Option<ProgressHook>,
}

impl Attempt {
    fn progress(&mut self, percent: u8, note: String) {
        let p = Progress {
            percent: percent.min(100),
            note: crate::text::bounded(&self.log.redact(&note), MAX_NOTE_BYTES),
        };
        if let Some(hook) = &self.on_progress {
            hook(&p);
        }
        self.progress = Some(p);
    }
}

/// What the orchestration imports do for one attempt: the runner's answer,
/// which knows the job, its tenant and the store. The sandbox only passes
/// the calls on.
#[async_trait::async_trait]
pub trait Orchestrate: Send + Sync {
    async fn invoke(&self, task: String, input: String) -> Result<String, GuestFailure>;
    async fn spawn(&self, task: String, input: String) -> Result<String, GuestFailure>;
}

pub use super::bindings::Failure as GuestFailure;

/// Store data for components (task world and preview-2 commands).
pub struct ComponentHost {
    pub wasi: WasiCtx,
    pub table: ResourceTable,
    pub attempt: Attempt,
    pub orchestrate: Option<Arc<dyn Orchestrate>>,
    /// The hooks every `wasi:http` request goes through.
    pub http: GuestHttp,
    pub http_ctx: WasiHttpCtx,
    /// What `wasi:config/store` answers: the task's declared secrets.
    pub config: WasiConfigVariables,
    /// A deterministic attempt's clock (`None`: the real clocks).
    pub clock: Option<super::determinism::VirtualClock>,
    /// A deterministic attempt's clock subscriptions (`sleeps.rs`).
    pub timers: super::virtual_timers::VirtualTimers,
    /// The guest's own spans (`taskbox:task/trace`).
    pub spans: super::guest_spans::GuestSpans,
}

impl WasiHttpView for ComponentHost {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}

impl ComponentHost {
    fn orchestrator(&self) -> Result<Arc<dyn Orchestrate>, GuestFailure> {
        if self.clock.is_some() {
            // Another job's result comes from outside the attempt: a
            // replay could not give it again.
            return Err(GuestFailure {
                code: "unavailable".into(),
                message: "a deterministic task cannot run sub-tasks".into(),
                retryable: false,
            });
        }
        self.orchestrate.clone().ok_or_else(|| GuestFailure {
            code: "unavailable".into(),
            message: "sub-tasks cannot be run from here".into(),
            retryable: false,
        })
    }
}

impl super::bindings::taskbox::task::fetch::Host for ComponentHost {
    async fn send(
        &mut self,
        request: super::bindings::taskbox::task::fetch::Request,
    ) -> Result<
        super::bindings::taskbox::task::fetch::Response,
        super::bindings::taskbox::task::fetch::FetchError,
    > {
        self.http.fetch(request).await
    }
}

impl super::bindings::taskbox::task::orchestration::Host for ComponentHost {
    async fn invoke(&mut self, task: String, input: String) -> Result<String, GuestFailure> {
        self.orchestrator()?.invoke(task, input).await
    }

    async fn spawn(&mut self, task: String, input: String) -> Result<String, GuestFailure> {
        self.orchestrator()?.spawn(task, input).await
    }
}

/// Store data for preview-1 command modules.
pub struct ModuleHost {
    pub wasi: WasiP1Ctx,
    pub attempt: Attempt,
    /// A deterministic attempt's clock (`None`: the real clocks).
    pub clock: Option<super::determinism::VirtualClock>,
}

/// Either kind of store data, as the steps after the call see it.
pub trait AttemptHost: Send + 'static {
    fn attempt(&self) -> &Attempt;
    fn into_attempt(self) -> Attempt;
}

impl AttemptHost for ComponentHost {
    fn attempt(&self) -> &Attempt {
        &self.attempt
    }

    fn into_attempt(self) -> Attempt {
        self.attempt
    }
}

impl AttemptHost for ModuleHost {
    fn attempt(&self) -> &Attempt {
        &self.attempt
    }

    fn into_attempt(self) -> Attempt {
        self.attempt
    }
}

impl WasiView for ComponentHost {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl host::Host for ComponentHost {
    fn log(&mut self, level: GuestLevel, message: String) {
        let level = match level {
            GuestLevel::Trace => Level::Trace,
            GuestLevel::Debug => Level::Debug,
            GuestLevel::Info => Level::Info,
            GuestLevel::Warn => Level::Warn,
            GuestLevel::Error => Level::Error,
        };
        self.attempt.log.line(level, Source::Guest, &message);
    }

    fn progress(&mut self, percent: u8, note: String) {
        self.attempt.progress(percent, note);
    }
}

impl super::bindings::taskbox::task::types::Host for ComponentHost {}

impl super::bindings::taskbox::task::trace::Host for ComponentHost {
    fn start_span(&mut self, name: String, attributes: Vec<(String, String)>) -> u32 {
        self.spans.start(name, attributes)
    }

    fn add_event(&mut self, span: u32, name: String, attributes: Vec<(String, String)>) {
        self.spans.event(span, name, attributes);
    }

    fn set_error(&mut self, span: u32, message: String) {
        self.spans.error(span, message);
    }

    fn end_span(&mut self, span: u32) {
        self.spans.end(span);
    }
}
