//! A private PostgreSQL cluster for the fault harness: `initdb` into a
//! temporary directory and `pg_ctl` on a spare port, so that the harness can
//! crash and restart its database without touching the machine's own.

use anyhow::{bail, Context};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A running cluster; stopped (immediately) and deleted when dropped.
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    /// The server refuses to run as root: then it runs as `postgres`.
    run_as: Option<(u32, u32)>,
}

/// The directory holding `initdb` and `pg_ctl`: the one given, else the
/// newest `/usr/lib/postgresql/*/bin`, else `pg_config --bindir`.
pub fn find_bin(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = given {
        if dir.join("initdb").is_file() && dir.join("pg_ctl").is_file() {
            return Ok(dir.to_path_buf());
        }
        bail!("{} holds no initdb and pg_ctl", dir.display());
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Ok(bin);
    }
    let out = Command::new("pg_config").arg("--bindir").output();
    if let Ok(out) = out {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").is_file() {
            return Ok(dir);
        }
    }
    bail!(
        "no PostgreSQL server programs found (initdb, pg_ctl); install PostgreSQL's server package or give --pg-bin DIR"
    )
}

/// The uid and gid of the `postgres` user, when this process is root.
fn run_as() -> anyhow::Result<Option<(u32, u32)>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = c"postgres";
    // SAFETY: a NUL-terminated name; the entry is read at once, before any
    // other call could reuse getpwnam's static buffer.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        bail!("PostgreSQL refuses to run as root, and there is no postgres user to run it as");
    }
    // SAFETY: non-null, pointing to getpwnam's entry.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some((uid, gid)))
}

/// A port nobody listens on now (it may be taken before the server binds
/// it; then the start fails and says so).
fn spare_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

impl Cluster {
    /// Creates and starts a cluster with room for `connections` clients.
    pub fn start(bin: &Path, connections: u32) -> anyhow::Result<Cluster> {
        let dir = tempfile::Builder::new()
            .prefix("taskbox-faults-pg-")
            .tempdir()?;
        let run_as = run_as()?;
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .context("cannot give the cluster's directory to the postgres user")?;
        }
        let c = Cluster {
            bin: bin.to_path_buf(),
            port: spare_port()?,
            run_as,
            dir,
        };
        c.run(
            "initdb",
            &[
                "-D",
                &c.data().display().to_string(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        let conf = format!(
            "port = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\nmax_connections = {connections}\nsynchronous_commit = on\n",
            c.port,
            c.dir.path().display()
        );
        let auto = c.data().join("postgresql.auto.conf");
        let mut text = std::fs::read_to_string(&auto).unwrap_or_default();
        text.push_str(&conf);
        std::fs::write(&auto, text)?;
        c.up()?;
        Ok(c)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn up(&self) -> anyhow::Result<()> {
        let data = self.data().display().to_string();
        let log = self.dir.path().join("server.log").display().to_string();
        self.run(
            "pg_ctl",
            &["-D", &data, "-l", &log, "-w", "-t", "60", "start"],
        )
    }

    /// Stops the server as a crash would (`-m immediate`: no checkpoint,
    /// connections cut) and starts it again; how long it was down.
    pub fn crash_and_restart(&self) -> anyhow::Result<Duration> {
        let t0 = Instant::now();
        let data = self.data().display().to_string();
        self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"])?;
        self.up()?;
        Ok(t0.elapsed())
    }

    /// Runs one of the server's programs as the user the server runs as.
    fn run(&self, program: &str, args: &[&str]) -> anyhow::Result<()> {
        let mut cmd = Command::new(self.bin.join(program));
        cmd.args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some((uid, gid)) = self.run_as {
            cmd.uid(uid).gid(gid);
        }
        let out = cmd
            .output()
            .with_context(|| format!("cannot run {}", self.bin.join(program).display()))?;
        if !out.status.success() {
            let log =
                std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
            bail!(
                "{program} {} failed: {}{}\n{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                log.lines().rev().take(20).collect::<Vec<_>>().join("\n")
            );
        }
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data().display().to_string();
        let _ = self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }
}
