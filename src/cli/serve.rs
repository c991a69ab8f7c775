//! `taskbox serve`: the flags (each also a `TASKBOX_*` variable), then the
//! server until SIGINT or SIGTERM.

use crate::app::App;
use crate::config::{self, ServeConfig};
use crate::store::sqlite::Durability;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DurabilityArg {
    /// Each acknowledged write is on disk (synchronous=FULL).
    Full,
    /// A power cut may lose the last acknowledged writes (synchronous=NORMAL).
    Normal,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address and port of the HTTP API (port 0 picks a free one).
    #[arg(long, env = "TASKBOX_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Where the database and compiled components live.
    #[arg(long, env = "TASKBOX_DATA_DIR", default_value = "./taskbox-data")]
    pub data_dir: PathBuf,
    /// Database URL [default: sqlite://DATA_DIR/taskbox.db]
    #[arg(long, env = "TASKBOX_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Attempts run at once; 0 serves the API only [default: the number of cores]
    #[arg(long, env = "TASKBOX_RUNNERS")]
    pub runners: Option<usize>,
    /// How hard each acknowledged write is kept.
    #[arg(long, env = "TASKBOX_DURABILITY", value_enum, default_value = "full")]
    pub durability: DurabilityArg,
    /// Queues the runners serve, comma-separated [default: all]
    #[arg(long, env = "TASKBOX_QUEUES", default_value = "")]
    pub queues: String,
    /// On stop, how long running attempts get to finish before their jobs are given back.
    #[arg(long, env = "TASKBOX_GRACE_MS", default_value_t = 10_000)]
    pub grace_ms: u64,
    /// Largest JSON request body, in bytes.
    #[arg(long, env = "TASKBOX_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
    /// Largest component upload, in bytes.
    #[arg(long, env = "TASKBOX_MAX_COMPONENT_BYTES", default_value_t = 64 << 20)]
    pub max_component_bytes: usize,
}

impl ServeArgs {
    fn config(self) -> Result<ServeConfig, String> {
        config::check_environment(std::env::vars())?;
        let database_url = self
            .database_url
            .unwrap_or_else(|| format!("sqlite://{}", self.data_dir.join("taskbox.db").display()));
        let cfg = ServeConfig {
            listen: self.listen,
            runners: self
                .runners
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            durability: match self.durability {
                DurabilityArg::Full => Durability::Full,
                DurabilityArg::Normal => Durability::Normal,
            },
            queues: config::parse_queues(&self.queues)?,
            grace: Duration::from_millis(self.grace_ms),
            max_body_bytes: self.max_body_bytes,
            max_component_bytes: self.max_component_bytes,
            admin_token: std::env::var("TASKBOX_ADMIN_TOKEN")
                .ok()
                .filter(|t| !t.is_empty()),
            max_instances: crate::sandbox::engine::DEFAULT_MAX_INSTANCES,
            compile_cache: None,
            data_dir: self.data_dir,
            database_url,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

pub fn main(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let cfg = args.config().map_err(anyhow::Error::msg)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let started = App::start(cfg.clone()).await?;
        if let Some(token) = &started.generated_admin_token {
            eprintln!("taskbox: generated the admin token; it is shown only this once, keep it:");
            eprintln!("  export TASKBOX_TOKEN={token}");
        }
        let app = started.app;
        println!(
            "taskbox listening on http://{} (data dir {}, {} runners, durability {:?})",
            app.addr,
            cfg.data_dir.display(),
            cfg.runners,
            cfg.durability
        );
        let _ = std::io::stdout().flush();
        shutdown_signal().await;
        eprintln!(
            "taskbox: stopping (grace period {} ms)",
            cfg.grace.as_millis()
        );
        app.stop().await;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
