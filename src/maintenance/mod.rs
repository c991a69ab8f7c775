//! Background services that keep the queue healthy. Each has a `run_once`
//! that tests call directly; `spawn` drives them all on their intervals.

pub mod pruner;
pub mod queue_keeper;
pub mod rescuer;
pub mod sampler;

use futures_util::FutureExt;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// One background service.
#[async_trait::async_trait]
pub trait Service: Send + Sync + 'static {
    fn name(&self) -> &'static str;
    fn interval(&self) -> Duration;
    async fn run_once(&self);
}

/// Runs each service every `interval` until `stop` is cancelled.
pub fn spawn(services: Vec<Box<dyn Service>>, stop: CancellationToken) -> Vec<JoinHandle<()>> {
    services
        .into_iter()
        .map(|s| {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(s.interval());
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        _ = tick.tick() => {
                            // A panic is a bug; it must not end the service
                            // for the life of the process (a rescuer gone
                            // would leave lost jobs running for ever).
                            let round = std::panic::AssertUnwindSafe(s.run_once());
                            if let Err(panic) = round.catch_unwind().await {
                                tracing::error!(
                                    service = s.name(),
                                    panic = %crate::text::panic_message(panic.as_ref()),
                                    "a round of a background service panicked; the next round runs as usual"
                                );
                            }
                        }
                        _ = stop.cancelled() => return,
                    }
                }
            })
        })
        .collect()
}
