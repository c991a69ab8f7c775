//! The CLI's event commands as a user runs them, against the real binary:
//! `taskbox events` (pages, and `--follow` through a server restart), `job
//! enqueue --wait` following a job's events, and `taskbox webhook …`.

use crate::common::guests_dir;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

const ADMIN: &str = "admin-token-for-the-cli-event-tests";
/// Longest any one thing a test waits for may take.
const WAIT: Duration = Duration::from_secs(60);

/// The binary, with none of the caller's `TASKBOX_*` variables.
fn taskbox() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_taskbox"));
    for (k, _) in std::env::vars() {
        if k.starts_with("TASKBOX_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("TASKBOX_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// Lines a child writes to one of its pipes, as they come.
fn lines_of(pipe: impl Read + Send + 'static, tag: &'static str) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            eprintln!("[{tag}] {line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A `taskbox serve` on `listen`; killed when dropped.
pub(crate) struct Server {
    child: Child,
    url: String,
}

impl Server {
    pub(crate) fn start(dir: &Path, listen: &str, extra: &[&str]) -> Server {
        let mut child = taskbox()
            .args(["serve", "--listen", listen, "--runners", "2"])
            .args(extra)
            .arg("--data-dir")
            .arg(dir)
            .env("TASKBOX_ADMIN_TOKEN", ADMIN)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start taskbox serve");
        let out = lines_of(child.stdout.take().unwrap(), "serve");
        let _err = lines_of(child.stderr.take().unwrap(), "serve");
        let deadline = Instant::now() + WAIT;
        let url = loop {
            let line = out
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("the server says where it listens");
            if let Some(at) = line.find("http://") {
                break line[at..].split_whitespace().next().unwrap().to_owned();
            }
        };
        // Keeps draining its stdout, so that it never blocks on a full pipe.
        std::thread::spawn(move || out.iter().for_each(drop));
        Server { child, url }
    }

    /// Runs the CLI against this server with the admin token: its exit
    /// code, stdout and stderr.
    pub(crate) fn cli(&self, args: &[&str]) -> (Option<i32>, String, String) {
        self.cli_as(ADMIN, args)
    }

    /// Runs the CLI as `cli` does, with another token.
    pub(crate) fn cli_as(&self, token: &str, args: &[&str]) -> (Option<i32>, String, String) {
        let out = taskbox()
            .args(args)
            .env("TASKBOX_URL", &self.url)
            .env("TASKBOX_TOKEN", token)
            .output()
            .expect("run taskbox");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs the CLI as `cli` does, with `input` on its stdin.
    pub(crate) fn cli_stdin(&self, args: &[&str], input: &[u8]) -> (Option<i32>, String, String) {
        use std::io::Write;
        let mut child = taskbox()
            .args(args)
            .env("TASKBOX_URL", &self.url)
            .env("TASKBOX_TOKEN", ADMIN)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run taskbox");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input).unwrap();
        drop(stdin);
        let out = child.wait_with_output().expect("taskbox ends");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `task push NAME GUEST.wasm FLAGS…`, which must succeed.
    pub(crate) fn push(&self, name: &str, guest: &str, flags: &[&str]) {
        let wasm = guests_dir().join(format!("{guest}.wasm"));
        let mut args = vec!["task", "push", name, wasm.to_str().unwrap()];
        args.extend(flags);
        let (code, _, err) = self.cli(&args);
        assert_eq!(code, Some(0), "task push {name}: {err}");
    }

    /// Enqueues a job without waiting; its id.
    fn enqueue(&self, task: &str, input: &str) -> String {
        let (code, out, err) = self.cli(&["job", "enqueue", task, "--input", input]);
        assert_eq!(code, Some(0), "{err}");
        out.trim().to_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A long-running CLI command (`events --follow`) whose output is read as
/// it comes; killed when dropped.
struct Running {
    child: Child,
    out: Receiver<String>,
    err: Receiver<String>,
    /// What it wrote to stderr so far.
    said: Vec<String>,
}

impl Running {
    fn start(url: &str, args: &[&str]) -> Running {
        let mut child = taskbox()
            .args(args)
            .env("TASKBOX_URL", url)
            .env("TASKBOX_TOKEN", ADMIN)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start taskbox");
        let out = lines_of(child.stdout.take().unwrap(), "cli");
        let err = lines_of(child.stderr.take().unwrap(), "cli err");
        Running {
            child,
            out,
            err,
            said: Vec::new(),
        }
    }

    /// The next line on stdout, as JSON.
    fn event(&self) -> Value {
        let line = self
            .out
            .recv_timeout(WAIT)
            .unwrap_or_else(|e| panic!("no event within {WAIT:?}: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Events up to and including `job`'s `job.completed`.
    fn until_completed(&self, job: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let e = self.event();
            let done = e["job"]["id"] == job && e["type"] == "job.completed";
            seen.push(e);
            if done {
                return seen;
            }
        }
    }

    /// Waits until a line on stderr contains `text`.
    fn until_stderr(&mut self, text: &str) {
        if self.said.iter().any(|l| l.contains(text)) {
            return;
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.err.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(text);
                    self.said.push(line);
                    if found {
                        return;
                    }
                }
                Err(e) => panic!("{text:?} never came on stderr ({e}): {:#?}", self.said),
            }
        }
    }

    /// Ctrl-C (SIGINT), then waits for it to end: its exit status.
    fn interrupt(&mut self) -> ExitStatus {
        let sent = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        // Its pipes close when it exits.
        let deadline = Instant::now() + WAIT;
        while self
            .out
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok()
        {}
        assert!(Instant::now() < deadline, "it did not end after Ctrl-C");
        self.child.wait().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The types of `job`'s events among `events`, in order.
fn types_of(events: &[Value], job: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["job"]["id"] == job)
        .map(|e| e["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[track_caller]
fn assert_in_order(events: &[Value]) {
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sequence numbers rise, without repeats: {seqs:?}"
    );
}

const LIFE: [&str; 3] = ["job.queued", "job.started", "job.completed"];

#[test]
fn events_lists_a_jobs_events_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "127.0.0.1:0", &[]);
    server.push("noop", "noop", &[]);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (code, out, err) = server.cli(&[
            "job", "enqueue", "noop", "--input", "{}", "--wait", "--json",
        ]);
        assert_eq!(code, Some(0), "{err}");
        let job: Value = serde_json::from_str(&out).expect("--json prints the job");
        ids.push(job["id"].as_str().unwrap().to_owned());
    }
    let id = ids[1].clone();

    let (code, out, err) = server.cli(&["events", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let all = json_lines(&out);
    assert_eq!(all.len(), 9, "three jobs, three events each: {out}");
    assert_in_order(&all);
    assert_eq!(types_of(&all, &id), LIFE, "{out}");
    for e in &all {
        assert_eq!(e["job"]["task"], "noop", "{e}");
        assert!(e["at"].is_string() && e["attempt"].is_u64(), "{e}");
    }

    // Narrowed to the job, or to one type; and from a sequence number on.
    let (code, out, err) = server.cli(&["events", "--json", "--job", &id]);
    assert_eq!(code, Some(0), "{err}");
    let mine = json_lines(&out);
    assert_eq!(types_of(&mine, &id), LIFE);
    assert_eq!(mine.len(), 3, "{out}");
    let (code, out, err) = server.cli(&["events", "--json", "--type", "job.completed"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(json_lines(&out).len(), 3, "{out}");
    assert!(json_lines(&out)
        .iter()
        .all(|e| e["type"] == "job.completed"));
    let started = mine[1]["seq"].as_u64().unwrap().to_string();
    let (code, out, err) = server.cli(&["events", "--json", "--job", &id, "--after", &started]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(types_of(&json_lines(&out), &id), ["job.completed"]);

    // For people: one line each, with the job.
    let (code, out, err) = server.cli(&["events", "--job", &id]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[2].contains("job.completed") && lines[2].contains(&id),
        "{out}"
    );

    let (code, _, err) = server.cli(&["events", "--type", "job.completed,job.done"]);
    assert_eq!(code, Some(2), "a misspelled type is refused: {err}");
    assert!(
        err.contains("\"job.done\" is not an event type") && err.contains("job.completed"),
        "it names the real ones: {err}"
    );
}

#[test]
fn events_follow_prints_new_jobs_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    // One port for both servers, so that the follower finds the second.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let server = Server::start(dir.path(), &listen, &[]);
    server.push("noop", "noop", &[]);
    server.push("other", "noop", &[]);
    let before = server.enqueue("noop", "{}");

    let mut follow = Running::start(
        &server.url,
        &["events", "--follow", "--json", "--task", "noop"],
    );
    follow.until_stderr("following the events");
    // Another task's job: left out by --task.
    server.enqueue("other", "{}");
    let first = server.enqueue("noop", "{}");
    let mut seen = follow.until_completed(&first);
    assert_eq!(types_of(&seen, &first), LIFE, "{seen:#?}");

    drop(server);
    follow.until_stderr("reconnecting after event");
    let server = Server::start(dir.path(), &listen, &[]);
    let second = server.enqueue("noop", "{}");
    seen.extend(follow.until_completed(&second));
    follow.until_stderr("reconnected");
    assert_eq!(types_of(&seen, &second), LIFE, "{seen:#?}");
    assert_in_order(&seen);
    assert!(
        seen.iter().all(|e| e["job"]["task"] == "noop"),
        "only the task's events: {seen:#?}"
    );
    // From when it started: an earlier job's events may be there only if
    // they happened after it started following.
    assert!(
        !types_of(&seen, &before).contains(&"job.queued".to_owned()),
        "{seen:#?}"
    );
    let exit = follow.interrupt();
    assert_eq!(exit.code(), Some(0), "Ctrl-C ends it with 0: {exit:?}");

    // --job: only that job's events, as they happen.
    let (code, _, err) = server.cli(&["queue", "pause", "held"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) =
        server.cli(&["job", "enqueue", "noop", "--input", "{}", "--queue", "held"]);
    assert_eq!(code, Some(0), "{err}");
    let held = out.trim().to_owned();
    let mut follow = Running::start(
        &server.url,
        &["events", "--follow", "--json", "--job", &held],
    );
    follow.until_stderr("following the events");
    server.enqueue("noop", "{}");
    let (code, _, err) = server.cli(&["queue", "resume", "held"]);
    assert_eq!(code, Some(0), "{err}");
    let events = follow.until_completed(&held);
    assert_eq!(types_of(&events, &held), ["job.started", "job.completed"]);
    assert_eq!(events.len(), 2, "{events:#?}");
}

#[test]
fn job_enqueue_wait_follows_the_jobs_events() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "127.0.0.1:0", &[]);
    server.push(
        "limits",
        "limits",
        &[
            "--max-attempts",
            "2",
            "--backoff",
            "fixed",
            "--delay-ms",
            "10",
        ],
    );
    let echo = r#"{"op": "echo", "value": {"hello": "world"}}"#;
    let (code, out, err) = server.cli(&["job", "enqueue", "limits", "--input", echo, "--wait"]);
    assert_eq!(code, Some(0), "a job that completes exits 0: {err}");
    let output: Value = serde_json::from_str(&out).expect("the output, as JSON");
    assert_eq!(output, json!({"hello": "world"}));
    assert!(
        err.contains("running (attempt 1/2)") && err.contains("completed (attempt 1/2"),
        "the job's changes on stderr: {err}"
    );

    let (code, out, err) = server.cli(&[
        "job", "enqueue", "limits", "--input", echo, "--wait", "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let job: Value = serde_json::from_str(&out).expect("the job, as JSON");
    assert_eq!(job["status"], "completed");
    assert_eq!(job["output"], json!({"hello": "world"}));

    let fail = r#"{"op": "fail", "code": "bad", "retryable": true}"#;
    let (code, out, err) = server.cli(&["job", "enqueue", "limits", "--input", fail, "--wait"]);
    assert_eq!(
        code,
        Some(1),
        "a job that fails for good exits 1: {out}{err}"
    );
    for said in [
        "attempt 1/2 failed: task_failed bad: asked to fail",
        "queued for attempt 2/2",
        "running (attempt 2/2)",
        "failed (attempt 2/2)",
    ] {
        assert!(err.contains(said), "{said:?} is on stderr: {err}");
    }
    assert!(
        err.lines()
            .any(|l| l.starts_with("job ") && l.ends_with("failed: task_failed bad: asked to fail")),
        "the error, as --wait has always said it: {err}"
    );
    assert!(out.is_empty(), "nothing on stdout: {out}");
}

#[test]
fn webhooks_are_added_listed_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "127.0.0.1:0", &["--webhook-allow-private"]);
    let url = "http://127.0.0.1:9/hook";
    let (code, out, err) = server.cli(&[
        "webhook",
        "add",
        url,
        "--events",
        "job.completed,job.failed",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("secret: "), "the secret is shown: {out}");
    assert!(err.contains("shown only now"), "{err}");
    let id = out
        .split_whitespace()
        .nth(1)
        .expect("`webhook ID sends …`")
        .to_owned();
    assert!(id.starts_with("wh_"), "{out}");

    let (code, out, err) = server.cli(&[
        "webhook",
        "add",
        url,
        "--events",
        "*",
        "--secret",
        "a-secret-of-enough-length",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let second: Value = serde_json::from_str(&out).expect("--json prints JSON");
    assert_eq!(second["secret"], "a-secret-of-enough-length");
    let second = second["id"].as_str().unwrap().to_owned();

    let (code, out, err) = server.cli(&["webhook", "list"]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("EVENTS"),
        "{out}"
    );
    let row = lines
        .iter()
        .find(|l| l.starts_with(&id))
        .unwrap_or_else(|| panic!("{id} is listed: {out}"));
    assert!(
        row.contains(url) && row.contains("job.completed,job.failed"),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&second) && l.contains(" * ")),
        "{out}"
    );
    assert!(!out.contains("secret"), "a list never shows secrets: {out}");

    let (code, out, err) = server.cli(&["webhook", "deliveries", &id]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.is_empty() && err.contains("no deliveries"),
        "{out}{err}"
    );

    let (code, out, err) = server.cli(&["webhook", "delete", &id]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&format!("deleted webhook {id}")), "{out}");
    let (code, out, err) = server.cli(&["webhook", "list", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let list: Value = serde_json::from_str(&out).expect("--json prints JSON");
    let ids: Vec<&str> = list["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["id"].as_str())
        .collect();
    assert_eq!(ids, [second.as_str()], "{out}");
    let (code, _, err) = server.cli(&["webhook", "delete", &id]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("WEBHOOK_NOT_FOUND") && err.contains("taskbox webhook list"),
        "{err}"
    );

    let (code, _, err) = server.cli(&["webhook", "add", url, "--events", "job.finished"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("job.completed"),
        "the real types are named: {err}"
    );
}

#[test]
fn a_private_webhook_needs_the_servers_leave() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "127.0.0.1:0", &[]);
    let (code, out, err) = server.cli(&[
        "webhook",
        "add",
        "http://127.0.0.1:9/",
        "--events",
        "job.completed",
    ]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("--webhook-allow-private"),
        "it says how to allow it: {err}"
    );
    let (code, _, err) = server.cli(&["webhook", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("no webhooks"), "{err}");
}
