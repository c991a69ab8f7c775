//! The processes under test: one `taskbox serve` (the API, no runners) and
//! N `taskbox worker`s on one database, each started from the `taskbox` binary,
//! with what their logs say about fenced writes counted as they go.

use anyhow::{bail, Context};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the processes' logs said, over all of them and all their lives.
#[derive(Default)]
pub struct Said {
    /// A runner's attempt end the store refused: another had taken its job.
    pub fenced_ends: AtomicU64,
    /// A lease renewal the store refused, for the same reason.
    pub fenced_renewals: AtomicU64,
    /// Ends not written at all (the database did not answer).
    pub unwritten: AtomicU64,
    /// Each kind of warning and error the processes logged: how often, and
    /// its first line. A failed run prints them, so that its cause is in
    /// the output of a run whose logs are gone (CI's).
    pub warnings: std::sync::Mutex<std::collections::BTreeMap<String, (u64, String)>>,
}

impl Said {
    /// The kinds of warning and error, the most frequent first.
    pub fn warnings(&self) -> Vec<serde_json::Value> {
        let map = self.warnings.lock().unwrap_or_else(|p| p.into_inner());
        let mut kinds: Vec<_> = map.iter().collect();
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1 .0));
        kinds
            .into_iter()
            .take(30)
            .map(|(kind, (n, first))| serde_json::json!({"kind": kind, "count": n, "first": first}))
            .collect()
    }
}

/// How the processes are started.
#[derive(Clone)]
pub struct Setup {
    pub database_url: String,
    pub admin_token: String,
    pub lease_ms: u64,
    pub runners: usize,
    /// Where each process's data dir and log go.
    pub dir: PathBuf,
    pub taskbox: crate::server::Taskbox,
}

/// One process; killed when dropped.
pub struct Proc {
    child: Child,
}

impl Proc {
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap_or(i32::MAX)
    }

    /// SIGKILL, and the exit reaped.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn signal(&self, signal: libc::c_int) -> anyhow::Result<()> {
        // SAFETY: kill(2) on a child this process started and has not reaped.
        if unsafe { libc::kill(self.pid(), signal) } != 0 {
            bail!("cannot signal process {}", self.pid());
        }
        Ok(())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Setup {
    /// Starts `taskbox serve` and answers it with its API's address.
    pub fn serve(&self, said: &Arc<Said>) -> anyhow::Result<(Proc, String)> {
        let (proc, line) = self.start(
            "serve",
            &["serve", "--listen", "127.0.0.1:0", "--runners", "0"],
            "taskbox listening on http://",
            said,
        )?;
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .context("the server did not say where it listens")?;
        Ok((proc, format!("http://{addr}")))
    }

    /// Starts worker `n` (its data dir, and so its compile cache, kept
    /// between its lives).
    pub fn worker(&self, n: usize, said: &Arc<Said>) -> anyhow::Result<Proc> {
        let runners = self.runners.to_string();
        let (proc, _) = self.start(
            &format!("worker-{n}"),
            &["worker", "--runners", &runners],
            "taskbox worker running",
            said,
        )?;
        Ok(proc)
    }

    /// Starts a process and waits for the line that says it is ready.
    fn start(
        &self,
        name: &str,
        args: &[&str],
        ready: &str,
        said: &Arc<Said>,
    ) -> anyhow::Result<(Proc, String)> {
        let data_dir = self.dir.join(name);
        std::fs::create_dir_all(&data_dir)?;
        let log_path = self.dir.join(format!("{name}.log"));
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)?;
        let _ = writeln!(log, "=== start");
        let mut child = self
            .taskbox
            .command()?
            .args(args)
            .arg("--database-url")
            .arg(&self.database_url)
            .arg("--data-dir")
            .arg(&data_dir)
            .arg("--lease-ms")
            .arg(self.lease_ms.to_string())
            // The harness's webhook endpoint is on this machine.
            .args(["--webhook-allow-private", "--webhook-backoff-ms", "200"])
            .env("TASKBOX_ADMIN_TOKEN", &self.admin_token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {name}"))?;
        let stderr = child.stderr.take().context("no stderr")?;
        {
            let (said, mut log) = (said.clone(), log.try_clone()?);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    count(&said, &line);
                    let _ = writeln!(log, "{line}");
                }
            });
        }
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        let ready = ready.to_owned();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains(&ready) {
                    let _ = tx.send(line.clone());
                }
                let _ = writeln!(log, "{line}");
            }
        });
        let proc = Proc { child };
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => Ok((proc, line)),
            Err(_) => bail!(
                "{name} did not say it was ready within 60 s; see {}",
                log_path.display()
            ),
        }
    }
}

/// Counts what a log line says of fenced and unwritten writes (the
/// runner's own words, in `runner/mod.rs`).
fn count(said: &Said, line: &str) {
    if line.contains("attempt end refused") {
        said.fenced_ends.fetch_add(1, Ordering::Relaxed);
    } else if line.contains("lease renewal refused") {
        said.fenced_renewals.fetch_add(1, Ordering::Relaxed);
    } else if line.contains("attempt ends not written") {
        said.unwritten.fetch_add(1, Ordering::Relaxed);
    }
    if let Some(kind) = warning_kind(line) {
        let mut map = said.warnings.lock().unwrap_or_else(|p| p.into_inner());
        let entry = map
            .entry(kind)
            .or_insert_with(|| (0, taskbox::text::bounded(line, 600)));
        entry.0 += 1;
    }
}

/// A warning's or error's level, target and message, without its time and
/// fields (`2026-… WARN taskbox::runner: heartbeat failed error=…` is
/// `WARN taskbox::runner: heartbeat failed`); `None` for other lines.
fn warning_kind(line: &str) -> Option<String> {
    let at = [" WARN ", " ERROR "]
        .iter()
        .filter_map(|l| line.find(l))
        .min()?;
    let words: Vec<&str> = line[at..]
        .split_whitespace()
        .take_while(|w| !w.contains('='))
        .collect();
    Some(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::warning_kind;

    #[test]
    fn a_warning_is_known_by_its_words_not_its_fields() {
        assert_eq!(
            warning_kind(
                "2026-11-26T10:00:00.1Z  WARN taskbox::runner: heartbeat failed error=gone jobs=3"
            )
            .as_deref(),
            Some("WARN taskbox::runner: heartbeat failed")
        );
        assert_eq!(
            warning_kind("2026-11-26T10:00:00.1Z ERROR taskbox::x: it panicked panic=boom")
                .as_deref(),
            Some("ERROR taskbox::x: it panicked")
        );
        assert_eq!(
            warning_kind("2026-11-26T10:00:00.1Z  INFO taskbox: fine"),
            None
        );
    }
}
