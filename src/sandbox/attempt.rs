//! One attempt, read top to bottom as named steps:
//! prepare store → instantiate → call → classify.

use super::attempt_spans::AttemptSpans;
use super::bindings::{Job, Outcome};
use super::capture::{AttemptLog, Level, LogBuffer, OutputCapture, Source};
use super::classify::{self, Circumstances, Interrupted};
use super::determinism::Determinism;
use super::ending::Ending;
use super::host::{
    Attempt, AttemptHost, ComponentHost, ModuleHost, Orchestrate, Progress, ProgressHook,
};
use super::limits::{Limits, StoreLimiter};
use super::network::{GuestHttp, NetworkGrant, NetworkUsage};
use super::redact::Redactor;
use super::ticker::EPOCH_PERIOD;
use super::{Prepared, Program, Sandbox};
use crate::job::JobError;
use crate::network_tally::NetworkTally;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wasmtime::component::ResourceTable;
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::WasiCtxBuilder;

/// Past the deadline, how long the outer timer waits for the epoch check to
/// stop the guest before it drops the call (a guest blocked in a host call).
const OUTER_SLACK: Duration = Duration::from_millis(3);

/// Extra hostcall fuel beyond the output cap, for the job record and framing.
const HOSTCALL_FUEL_SLACK: usize = 64 * 1024;

/// Which job and attempt is running, as the guest sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobRef {
    pub id: String,
    pub attempt: u32,
    pub queue: String,
}

/// Everything one attempt needs besides the program.
#[derive(Clone)]
pub struct AttemptRequest {
    pub job: JobRef,
    /// The job's input, JSON text.
    pub input: String,
    /// Clamped by the sandbox's ceilings before use.
    pub limits: Limits,
    /// Cancelling stops the guest within an epoch slice.
    pub cancel: Option<CancellationToken>,
    pub on_progress: Option<ProgressHook>,
    /// What the guest's orchestration imports do (`None`: they fail).
    pub orchestrate: Option<Arc<dyn Orchestrate>>,
    /// Whose attempt it is: outbound connections are capped per tenant.
    pub tenant: Arc<str>,
    /// What the guest's outbound HTTP may reach (`None`: nothing; every
    /// request is refused).
    pub network: Option<Arc<NetworkGrant>>,
    /// `(name, value)` of the secrets the guest may read through
    /// `wasi:config/store`; their values are redacted from all it leaves.
    pub secrets: Vec<(String, String)>,
    /// A deterministic task's clock and random seed (`None`: the real ones).
    pub determinism: Option<Determinism>,
    /// The attempt's span and where spans go, when traces are on: its
    /// outbound requests are spans under it.
    pub trace: Option<super::AttemptTrace>,
}

impl AttemptRequest {
    pub fn new(job: JobRef, input: impl Into<String>, limits: Limits) -> Self {
        AttemptRequest {
            job,
            input: input.into(),
            limits,
            cancel: None,
            on_progress: None,
            orchestrate: None,
            tenant: Arc::from(""),
            network: None,
            secrets: Vec::new(),
            determinism: None,
            trace: None,
        }
    }
}

/// What an attempt did and cost.
#[derive(Debug, Clone)]
pub struct AttemptReport {
    pub ending: Ending,
    pub fuel_used: u64,
    pub peak_memory_bytes: u64,
    pub duration: Duration,
    pub log: AttemptLog,
    pub progress: Option<Progress>,
    /// What its outbound HTTP did.
    pub network: NetworkTally,
}

/// What the guest handed back before classification.
enum Raw {
    Task(Result<Outcome, super::bindings::Failure>),
    /// A command returned normally (`Ok`) or via `wasi:cli/run`'s `err`.
    Command(Result<(), ()>),
}

/// Where the call failed, which decides who is to blame.
enum Failure {
    Instantiate(wasmtime::Error),
    Call(wasmtime::Error),
}

impl Sandbox {
    /// Runs one attempt of `program` in a fresh store. Never panics on guest
    /// behaviour; every ending is classified.
    pub async fn run(&self, program: &Program, req: AttemptRequest) -> AttemptReport {
        let _alive = self.enter();
        let limits = req.limits.clamped(&self.inner.config.ceilings);
        let started = Instant::now();
        let deadline = started + Duration::from_millis(limits.timeout_ms);
        let _ticking = self.inner.ticker.start(deadline);
        let redactor = Redactor::new(&req.secrets);
        let log = LogBuffer::redacting(
            self.inner.config.ceilings.max_log_bytes,
            started,
            redactor.clone(),
        );
        let mut network: Option<Arc<NetworkUsage>> = None;
        let attempt = Attempt {
            limiter: StoreLimiter::new(limits.memory_bytes()),
            log: log.clone(),
            progress: None,
            on_progress: req.on_progress.clone(),
        };
        let output_cap = self.inner.config.ceilings.max_output_bytes;

        let (ending, fuel_left, attempt) = match &program.pre {
            Prepared::Task(pre) => {
                let mut store = self.component_store(attempt, &log, None, &req, &limits, deadline);
                network = Some(store.data().http.usage());
                let job = Job {
                    id: req.job.id.clone(),
                    attempt: req.job.attempt,
                    queue: req.job.queue.clone(),
                };
                let work = async {
                    let task = pre
                        .instantiate_async(&mut store)
                        .await
                        .map_err(Failure::Instantiate)?;
                    task.call_run(&mut store, &job, &req.input)
                        .await
                        .map(Raw::Task)
                        .map_err(Failure::Call)
                };
                let result = guard(work, deadline, req.cancel.as_ref()).await;
                settle(store, result, None, &limits, output_cap, &log, &redactor)
            }
            Prepared::Command(pre) => {
                let output = OutputCapture::new(output_cap);
                let mut store =
                    self.component_store(attempt, &log, Some(&output), &req, &limits, deadline);
                network = Some(store.data().http.usage());
                let work = async {
                    let command = pre
                        .instantiate_async(&mut store)
                        .await
                        .map_err(Failure::Instantiate)?;
                    command
                        .wasi_cli_run()
                        .call_run(&mut store)
                        .await
                        .map(Raw::Command)
                        .map_err(Failure::Call)
                };
                let result = guard(work, deadline, req.cancel.as_ref()).await;
                settle(
                    store,
                    result,
                    Some(&output),
                    &limits,
                    output_cap,
                    &log,
                    &redactor,
                )
            }
            Prepared::Module(pres) => {
                // A deterministic module sleeps on its virtual clock.
                let pre = match req.determinism {
                    Some(_) => &pres.deterministic,
                    None => &pres.plain,
                };
                let output = OutputCapture::new(output_cap);
                let mut wasi = command_wasi(&log, &output, &req.input);
                if let Some(d) = &req.determinism {
                    d.seed_random(&mut wasi);
                }
                let host = ModuleHost {
                    wasi: wasi.build_p1(),
                    attempt,
                    clock: req
                        .determinism
                        .map(|d| d.clock(limits.fuel, limits.timeout_ms)),
                };
                let mut store = Store::new(&self.inner.engine, host);
                store.limiter(|h| &mut h.attempt.limiter);
                self.arm(&mut store, &limits, deadline, req.cancel.clone());
                let work = async {
                    let instance = pre
                        .instantiate_async(&mut store)
                        .await
                        .map_err(Failure::Instantiate)?;
                    let start = instance
                        .get_typed_func::<(), ()>(&mut store, "_start")
                        .map_err(Failure::Instantiate)?;
                    start
                        .call_async(&mut store, ())
                        .await
                        .map(|()| Raw::Command(Ok(())))
                        .map_err(Failure::Call)
                };
                let result = guard(work, deadline, req.cancel.as_ref()).await;
                settle(
                    store,
                    result,
                    Some(&output),
                    &limits,
                    output_cap,
                    &log,
                    &redactor,
                )
            }
        };

        AttemptReport {
            ending,
            fuel_used: limits.fuel.saturating_sub(fuel_left),
            peak_memory_bytes: attempt.limiter.peak_bytes(),
            duration: started.elapsed(),
            log: log.finish(),
            progress: attempt.progress,
            network: network.map(|n| n.tally()).unwrap_or_default(),
        }
    }

    /// Step 1: a fresh store for a component, its WASI granting nothing.
    fn component_store(
        &self,
        attempt: Attempt,
        log: &LogBuffer,
        command_output: Option<&OutputCapture>,
        req: &AttemptRequest,
        limits: &Limits,
        deadline: Instant,
    ) -> Store<ComponentHost> {
        let mut wasi = match command_output {
            Some(output) => command_wasi(log, output, &req.input),
            None => {
                let mut b = WasiCtxBuilder::new();
                b.stdout(log.stream(Source::Stdout))
                    .stderr(log.stream(Source::Stderr));
                deny_network(&mut b);
                b
            }
        };
        if let Some(d) = &req.determinism {
            d.seed_random(&mut wasi);
        }
        let wasi = wasi.build();
        // One budget of spans and one redactor for the attempt's requests
        // and its `trace` calls (made only when traces are on).
        let spans = req
            .trace
            .clone()
            .map(|t| AttemptSpans::new(t, Redactor::new(&req.secrets)));
        let http = GuestHttp::new(
            self.inner.outbound.clone(),
            req.network.clone(),
            req.tenant.clone(),
            deadline,
            log.clone(),
        )
        .traced(spans.clone());
        let host = ComponentHost {
            wasi,
            table: ResourceTable::new(),
            attempt,
            orchestrate: req.orchestrate.clone(),
            http,
            http_ctx: wasmtime_wasi_http::WasiHttpCtx::new(),
            config: req.secrets.iter().cloned().collect(),
            clock: req
                .determinism
                .map(|d| d.clock(limits.fuel, limits.timeout_ms)),
            timers: Default::default(),
            spans: super::guest_spans::GuestSpans::new(spans),
        };
        let mut store = Store::new(&self.inner.engine, host);
        store.limiter(|h| &mut h.attempt.limiter);
        store.set_hostcall_fuel(self.inner.config.ceilings.max_output_bytes + HOSTCALL_FUEL_SLACK);
        self.arm(&mut store, limits, deadline, req.cancel.clone());
        store
    }

    /// Sets fuel and the epoch deadline, and the callback that enforces the
    /// deadline and cancellation at each slice.
    fn arm<T: Send + 'static>(
        &self,
        store: &mut Store<T>,
        limits: &Limits,
        deadline: Instant,
        cancel: Option<CancellationToken>,
    ) {
        let metering = self.inner.config.metering;
        if metering.fuel() {
            // Cannot fail: the engine has fuel enabled.
            let _ = store.set_fuel(limits.fuel);
        }
        if !metering.epoch() {
            return;
        }
        // Every tick: the ticker ticks at this attempt's deadline and
        // periodically, so each tick is worth a look at the clock.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                return Err(Interrupted::Cancelled.into());
            }
            if Instant::now() >= deadline {
                return Err(Interrupted::Timeout.into());
            }
            // Yield to the executor now and then, but not near the deadline:
            // a tick that lands while the guest is yielded is not seen.
            if deadline.saturating_duration_since(Instant::now()) > EPOCH_PERIOD {
                // Tokio's own yield puts the guest behind the tasks waiting
                // on its thread; a plain wake put it in the slot run next,
                // so an attempt woken to start beside it (a nudge) waited
                // for more of its time slices.
                Ok(UpdateDeadline::YieldCustom(
                    1,
                    Box::pin(tokio::task::yield_now()),
                ))
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
    }
}

/// WASI for a command: the input on stdin, stdout captured as the output.
fn command_wasi(log: &LogBuffer, output: &OutputCapture, input: &str) -> WasiCtxBuilder {
    let mut b = WasiCtxBuilder::new();
    b.stdin(MemoryInputPipe::new(input.to_owned()))
        .stdout(output.clone())
        .stderr(log.stream(Source::Stderr))
        .arg("task");
    deny_network(&mut b);
    b
}

/// No sockets at all: WASI's default already denies every address; this
/// also refuses to create TCP or UDP sockets, so the answer is immediate.
fn deny_network(b: &mut WasiCtxBuilder) -> &mut WasiCtxBuilder {
    b.allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
}

/// Step 4: what the store knew, classified; the fuel left; the store's
/// attempt state handed back.
fn settle<T: AttemptHost>(
    store: Store<T>,
    result: Guarded,
    command_output: Option<&OutputCapture>,
    limits: &Limits,
    output_cap: usize,
    log: &LogBuffer,
    red: &Redactor,
) -> (Ending, u64, Attempt) {
    let c = Circumstances {
        memory_refused: store.data().attempt().limiter.refused(),
        memory_limit_bytes: limits.memory_bytes(),
        output_overflowed: command_output.is_some_and(|o| o.overflowed()),
        output_cap,
        timeout_ms: limits.timeout_ms,
        fuel: limits.fuel,
    };
    let ending = classify_result(result, &c, log, command_output, red);
    let fuel_left = store.get_fuel().unwrap_or(limits.fuel);
    (ending, fuel_left, store.into_data().into_attempt())
}

/// Step 2–3 guard: the call runs until it ends, the job is cancelled, or the
/// deadline passes while the guest is blocked where epochs cannot reach it.
async fn guard<F>(work: F, deadline: Instant, cancel: Option<&CancellationToken>) -> Guarded
where
    F: std::future::Future<Output = Result<Raw, Failure>>,
{
    let mut work = std::pin::pin!(work);
    // Most attempts finish in their first poll. Only one that does not gets
    // timers: registering a tokio timer costs a syscall to wake the driver.
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(work.as_mut().poll(cx))).await;
    if let std::task::Poll::Ready(r) = first {
        return Guarded::Finished(r);
    }
    let cancelled = async {
        match cancel {
            Some(c) => c.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let outer = tokio::time::Instant::from_std(deadline + OUTER_SLACK);
    tokio::select! {
        r = work => Guarded::Finished(r),
        () = cancelled => Guarded::Cancelled,
        () = tokio::time::sleep_until(outer) => Guarded::TimedOut,
    }
}

enum Guarded {
    Finished(Result<Raw, Failure>),
    Cancelled,
    TimedOut,
}

/// One exhaustive match from what happened to how the attempt ended. The
/// guest's text is redacted where it is classified, before any cut or cap.
fn classify_result(
    result: Guarded,
    c: &Circumstances,
    log: &LogBuffer,
    command_output: Option<&OutputCapture>,
    red: &Redactor,
) -> Ending {
    let command_done = |status: i32| match status {
        0 => {
            let bytes = command_output.map(OutputCapture::take).unwrap_or_default();
            match String::from_utf8(bytes) {
                Ok(text) if text.trim().is_empty() => Ending::Done("null".into()),
                Ok(text) => done(red, text.trim().to_owned(), c.output_cap),
                Err(_) => Ending::Failed(JobError::new(
                    crate::job::ErrorKind::InvalidOutput,
                    "the command's stdout is not UTF-8 text",
                )),
            }
        }
        n => classify::command_exit(n, &log.stderr_tail()),
    };
    match result {
        Guarded::Cancelled => Ending::Cancelled,
        Guarded::TimedOut => classify::timeout(c),
        Guarded::Finished(Ok(Raw::Task(Ok(Outcome::Done(text))))) => done(red, text, c.output_cap),
        Guarded::Finished(Ok(Raw::Task(Ok(Outcome::Snooze(ms))))) => Ending::Snooze(ms),
        Guarded::Finished(Ok(Raw::Task(Ok(Outcome::Wait(text))))) => {
            match classify::check_output(red, text, c.output_cap) {
                Ok(text) => Ending::Wait(text),
                Err(e) => Ending::Failed(e),
            }
        }
        Guarded::Finished(Ok(Raw::Task(Err(f)))) => {
            classify::guest_failure(red, &f.code, &f.message, f.retryable)
        }
        Guarded::Finished(Ok(Raw::Command(Ok(())))) => command_done(0),
        Guarded::Finished(Ok(Raw::Command(Err(())))) => command_done(1),
        Guarded::Finished(Err(Failure::Call(err))) => {
            trap_to_log(log, &err);
            classify::error(&err, c, red).unwrap_or_else(command_done)
        }
        Guarded::Finished(Err(Failure::Instantiate(err))) => {
            trap_to_log(log, &err);
            let guest_fault = err.is::<wasmtime::Trap>()
                || err.is::<Interrupted>()
                || err.is::<wasmtime_wasi::I32Exit>()
                || c.memory_refused;
            if guest_fault {
                classify::error(&err, c, red).unwrap_or_else(command_done)
            } else {
                Ending::Unavailable(
                    red.apply(&format!("could not instantiate: {err:#}"))
                        .into_owned(),
                )
            }
        }
    }
}

fn done(red: &Redactor, text: String, cap: usize) -> Ending {
    match classify::check_output(red, text, cap) {
        Ok(text) => Ending::Done(text),
        Err(e) => Ending::Failed(e),
    }
}

/// The full error with its wasm backtrace goes to the attempt log, where the
/// task's author looks when debugging; the job's error keeps a short message.
fn trap_to_log(log: &LogBuffer, err: &wasmtime::Error) {
    if err.is::<wasmtime_wasi::I32Exit>() || err.is::<Interrupted>() {
        return;
    }
    log.line(Level::Error, Source::Host, &format!("{err:?}"));
}
