//! End to end against the real binary: the README's quick start, a server
//! killed with SIGKILL mid-job and restarted, tenant isolation by every
//! route, and many concurrent HTTP clients.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const ADMIN: &str = "admin-token-for-the-e2e-tests";

pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `taskbox serve` process; killed when dropped.
pub(crate) struct Served {
    child: Child,
    pub(crate) url: String,
    /// Everything it wrote to stderr so far.
    stderr: Arc<Mutex<String>>,
    /// Where it serves `/metrics` without a token, once it said so.
    metrics: Arc<Mutex<Option<String>>>,
}

impl Served {
    fn start(data_dir: &Path) -> Served {
        Served::spawn(data_dir, &["--grace-ms", "2000"], Some(ADMIN))
    }

    pub(crate) fn spawn(data_dir: &Path, extra: &[&str], admin: Option<&str>) -> Served {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_taskbox"));
        cmd.args(["serve", "--listen", "127.0.0.1:0"]);
        if !extra.contains(&"--runners") {
            cmd.args(["--runners", "2"]);
        }
        cmd.args(extra)
            .arg("--data-dir")
            .arg(data_dir)
            .env_remove("TASKBOX_ADMIN_TOKEN")
            .env_remove("TASKBOX_URL")
            .env_remove("TASKBOX_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(token) = admin {
            cmd.env("TASKBOX_ADMIN_TOKEN", token);
        }
        let mut child = cmd.spawn().expect("start taskbox serve");
        let stdout = child.stdout.take().unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                eprintln!("[serve] {line}");
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let metrics: Arc<Mutex<Option<String>>> = Arc::default();
        let metrics_said = metrics.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(at) = line.find("http://") {
                    let url = line[at..].split_whitespace().next().unwrap().to_owned();
                    if line.starts_with("taskbox metrics at") {
                        *metrics_said.lock().unwrap() = Some(url);
                    } else {
                        let _ = tx.send(url);
                    }
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server says where it listens");
        Served {
            child,
            url,
            stderr,
            metrics,
        }
    }

    /// The URL of its `--metrics-listen` scrape, once it said it.
    pub(crate) fn metrics_url(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(url) = self.metrics.lock().unwrap().clone() {
                return url;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not say where its metrics are"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Runs the CLI against this server with the admin token, from the
    /// repository: its exit code, stdout and stderr.
    pub(crate) fn cli(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_taskbox"))
            .args(args)
            .current_dir(repo())
            .env("TASKBOX_URL", &self.url)
            .env("TASKBOX_TOKEN", ADMIN)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// SIGTERM, then waits for the process to end; its exit status.
    fn terminate(&mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(exit) = self.child.try_wait().unwrap() {
                return exit;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The server process's id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(crate) struct Client {
    http: reqwest::Client,
    url: String,
    token: String,
}

impl Client {
    pub(crate) fn new(url: &str, token: &str) -> Client {
        Client {
            http: taskbox::http::default_client(),
            url: url.to_owned(),
            token: token.to_owned(),
        }
    }

    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.body(b.to_string());
        }
        let resp = req.send().await.expect("the server answers");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    pub(crate) async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::PUT, path, Some(body)).await
    }

    pub(crate) async fn upload(&self, guest: &str) -> String {
        let resp = self
            .http
            .post(format!("{}/v1/components", self.url))
            .bearer_auth(&self.token)
            .body(crate::common::guest(guest))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success());
        let body: Value = resp.json().await.unwrap();
        body["digest"].as_str().unwrap().to_owned()
    }

    /// With the admin token: makes `tenant` (unless it is there already)
    /// and mints it a token with these scopes.
    pub(crate) async fn mint(&self, tenant: &str, scopes: &[&str]) -> String {
        let (status, body) = self.post("/v1/tenants", json!({"name": tenant})).await;
        assert!(status == 201 || status == 409, "{status} {body}");
        let (status, body) = self
            .post("/v1/tokens", json!({"tenant": tenant, "scopes": scopes}))
            .await;
        assert_eq!(status, 201, "{body}");
        body["token"].as_str().unwrap().to_owned()
    }

    pub(crate) async fn task(&self, name: &str, guest: &str) -> String {
        let digest = self.upload(guest).await;
        let (status, body) = self
            .send(
                reqwest::Method::PUT,
                &format!("/v1/tasks/{name}"),
                Some(json!({"component": digest})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        digest
    }

    pub(crate) async fn until(&self, id: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (status, job) = self.get(&format!("/v1/jobs/{id}")).await;
            assert_eq!(status, 200, "{job}");
            if pred(&job) {
                return job;
            }
            assert!(
                Instant::now() < deadline,
                "the job never got there: {job:#}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Runs `script` with bash (`-euo pipefail`) in the repository, as a user
/// would against `url` with `token`: the built binary first on `PATH`.
pub(crate) async fn run_script(
    script: &str,
    url: &str,
    token: &str,
    env: &[(&str, String)],
) -> std::process::Output {
    run_script_in(&repo(), script, url, token, env).await
}

/// `run_script`, in the directory `dir`.
pub(crate) async fn run_script_in(
    dir: &Path,
    script: &str,
    url: &str,
    token: &str,
    env: &[(&str, String)],
) -> std::process::Output {
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_taskbox"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("TASKBOX_URL", url)
        .env("TASKBOX_TOKEN", token);
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap()
}

/// The shell block of a page (the README, a page of the book) that follows `marker` (an HTML
/// comment); tests/it/book.rs checks that each such block has its test.
pub(crate) fn doc_block(page: &str, marker: &str) -> String {
    let text = crate::common::repo_file(page);
    let after = text
        .split(marker)
        .nth(1)
        .unwrap_or_else(|| panic!("{page} has no {marker}"));
    let block = after
        .split("```sh\n")
        .nth(1)
        .expect("a ```sh block follows the marker");
    block.split("\n```").next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_books_api_walk_through_works() {
    let dir = tempfile::tempdir().unwrap();
    let server = Served::start(dir.path());
    let script = doc_block("docs/book/src/api-by-hand.md", "<!-- api-by-hand -->");
    let out = run_script(&script, &server.url, ADMIN, &[]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the walk-through failed:\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    // Once through the CLI, once through curl.
    assert_eq!(
        stdout.matches("INV-A-1001").count(),
        2,
        "{stdout}\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_job_finishes_it_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Served::start(dir.path());
    let c = Client::new(&server.url, ADMIN);
    c.task("limits", "limits").await;
    let (status, slow) = c
        .post(
            "/v1/jobs",
            json!({"task": "limits", "input": {"op": "sleep", "ms": 1500}}),
        )
        .await;
    assert_eq!(status, 201);
    let slow_id = slow["id"].as_str().unwrap().to_owned();
    // Acknowledged while the slow job runs; none may be lost.
    let mut acked = vec![slow_id.clone()];
    let mut clients = Vec::new();
    for i in 0..8 {
        let c = Client::new(&server.url, ADMIN);
        clients.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for j in 0..10 {
                let (status, job) = c
                    .post("/v1/jobs", json!({"task": "limits", "input": {"op": "echo", "value": [i, j]}, "delay_ms": 600_000}))
                    .await;
                assert_eq!(status, 201, "{job}");
                ids.push(job["id"].as_str().unwrap().to_owned());
            }
            ids
        }));
    }
    for t in clients {
        acked.extend(t.await.unwrap());
    }
    c.until(&slow_id, |j| j["status"] == "running").await;
    server.kill();

    let server = Served::start(dir.path());
    let c = Client::new(&server.url, ADMIN);
    let done = c.until(&slow_id, |j| j["status"] == "completed").await;
    assert_eq!(done["output"], json!({"slept_ms": 1500}));
    let (_, attempts) = c.get(&format!("/v1/jobs/{slow_id}/attempts")).await;
    // The attempt the killed server was running failed with runner_lost,
    // and was retried after the task's backoff.
    let outcomes: Vec<(&str, &str)> = attempts["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["outcome"].as_str().unwrap(),
                a["error"]["kind"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(outcomes, [("retried", "runner_lost"), ("completed", "-")]);
    for id in &acked {
        let (status, job) = c.get(&format!("/v1/jobs/{id}")).await;
        assert_eq!(status, 200, "acknowledged job {id} was lost: {job}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_see_nothing_of_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let server = Served::start(dir.path());
    let admin = Client::new(&server.url, ADMIN);
    let mut tokens = Vec::new();
    for (tenant, scopes) in [
        ("acme", json!(crate::server::ALL_SCOPES)),
        ("globex", json!(crate::server::ALL_SCOPES)),
        ("acme", json!(["jobs:read", "jobs:queue"])),
    ] {
        if tokens.len() < 2 {
            let (status, body) = admin.post("/v1/tenants", json!({"name": tenant})).await;
            assert_eq!(status, 201, "{body}");
        }
        let (status, body) = admin
            .post("/v1/tokens", json!({"tenant": tenant, "scopes": scopes}))
            .await;
        assert_eq!(status, 201, "{body}");
        tokens.push(body["token"].as_str().unwrap().to_owned());
    }
    let a = Client::new(&server.url, &tokens[0]);
    let b = Client::new(&server.url, &tokens[1]);
    let a_reader = Client::new(&server.url, &tokens[2]);
    let digest = a.task("private", "limits").await;
    let (status, job) = a
        .post(
            "/v1/jobs",
            json!({"task": "private", "input": {"op": "wait", "for": "x"}}),
        )
        .await;
    assert_eq!(status, 201);
    let id = job["id"].as_str().unwrap();
    a.until(id, |j| j["status"] == "waiting").await;

    let code = |v: &Value| v["error"]["code"].as_str().unwrap_or_default().to_owned();
    for (method, path) in [
        (reqwest::Method::GET, format!("/v1/jobs/{id}")),
        (reqwest::Method::POST, format!("/v1/jobs/{id}/cancel")),
        (reqwest::Method::POST, format!("/v1/jobs/{id}/run")),
        (reqwest::Method::POST, format!("/v1/jobs/{id}/resume")),
        (reqwest::Method::GET, format!("/v1/jobs/{id}/attempts")),
    ] {
        let (status, body) = b.send(method, &path, Some(json!({}))).await;
        assert_eq!(
            (status, code(&body)),
            (404, "JOB_NOT_FOUND".into()),
            "{path}: {body}"
        );
    }
    let (status, body) = b.get("/v1/tasks/private").await;
    assert_eq!((status, code(&body)), (404, "TASK_NOT_FOUND".into()));
    let (status, body) = b
        .post("/v1/jobs", json!({"task": "private", "input": {}}))
        .await;
    assert_eq!((status, code(&body)), (404, "TASK_NOT_FOUND".into()));
    let (status, body) = b
        .send(
            reqwest::Method::PUT,
            "/v1/tasks/mine",
            Some(json!({"component": digest})),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (404, "COMPONENT_NOT_FOUND".into()),
        "A's component is not B's"
    );
    let (_, list) = b.get("/v1/jobs").await;
    assert_eq!(list["jobs"], json!([]));
    let (_, list) = b.get("/v1/tasks").await;
    assert_eq!(list["tasks"], json!([]));
    // The admin acting as default sees none of them either.
    let (status, _) = admin.get(&format!("/v1/jobs/{id}")).await;
    assert_eq!(status, 404);

    // A's own token without jobs:cancel may read but not cancel.
    let (status, _) = a_reader.get(&format!("/v1/jobs/{id}")).await;
    assert_eq!(status, 200);
    let (status, body) = a_reader
        .post(&format!("/v1/jobs/{id}/cancel"), json!({}))
        .await;
    assert_eq!(
        (status, code(&body)),
        (403, "JOB_ACCESS_DENIED".into()),
        "{body}"
    );
    let (status, body) = a.post(&format!("/v1/jobs/{id}/cancel"), json!({})).await;
    assert_eq!((status, body["status"].clone()), (200, json!("cancelled")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_clients_enqueue_at_once_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    let server = Served::start(dir.path());
    let admin = Client::new(&server.url, ADMIN);
    admin.task("noop", "noop").await;
    const CLIENTS: usize = 32;
    const EACH: usize = 40;
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let c = Client::new(&server.url, ADMIN);
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..EACH {
                let (status, body) = c
                    .post("/v1/jobs", json!({"task": "noop", "input": {}}))
                    .await;
                assert_eq!(status, 201, "every enqueue is acknowledged: {body}");
                ids.push(body["id"].as_str().unwrap().to_owned());
            }
            ids
        }));
    }
    let mut all = std::collections::HashSet::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    assert_eq!(all.len(), CLIENTS * EACH, "every id is distinct");
    // Every one of them runs to completion.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, page) = admin.get("/v1/jobs?status=completed&limit=500").await;
        let mut n = page["jobs"].as_array().unwrap().len();
        let mut cursor = page["next_cursor"].as_str().map(str::to_owned);
        while let Some(c) = cursor {
            let (_, p) = admin
                .get(&format!("/v1/jobs?status=completed&limit=500&cursor={c}"))
                .await;
            n += p["jobs"].as_array().unwrap().len();
            cursor = p["next_cursor"].as_str().map(str::to_owned);
        }
        if n == CLIENTS * EACH {
            break;
        }
        assert!(Instant::now() < deadline, "only {n} completed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_reports_failures_with_its_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let server = Served::start(dir.path());
    let taskbox = |args: &[&str]| server.cli(args);
    let guest = crate::common::guests_dir().join("limits.wasm");
    let (code, _, err) = taskbox(&[
        "task",
        "push",
        "limits",
        guest.to_str().unwrap(),
        "--max-attempts",
        "1",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = taskbox(&[
        "job",
        "enqueue",
        "limits",
        "--input",
        r#"{"op":"fail","code":"bad","retryable":true}"#,
        "--wait",
    ]);
    assert_eq!(code, Some(1), "a failed job exits 1: {out}{err}");
    assert!(err.contains("bad"), "the error is shown: {err}");
    let (code, out, err) = taskbox(&["job", "list", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let list: Value = serde_json::from_str(&out).expect("--json prints JSON");
    assert_eq!(list["jobs"][0]["status"], "failed");
    let (code, out, _) = taskbox(&["job", "list"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("failed") && out.contains("limits"),
        "a table for people: {out}"
    );
    let (code, _, err) = taskbox(&["job", "get", "01JZZZZZZZZZZZZZZZZZZZZZZZ"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("JOB_NOT_FOUND"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admins_cli_lists_and_retries_every_tenants_failed_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let server = Served::start(dir.path());
    let admin = Client::new(&server.url, ADMIN);
    let guest = crate::common::guests_dir().join("limits.wasm");
    let guest = guest.to_str().unwrap();
    let mut failed = Vec::new();
    let mut tokens = Vec::new();
    for tenant in ["acme", "globex"] {
        let token = admin.mint(tenant, crate::server::ALL_SCOPES).await;
        let as_tenant = |args: &[&str]| {
            let mut all = args.to_vec();
            all.extend(["--token", token.as_str()]);
            server.cli(&all)
        };
        let push = ["task", "push", "t", guest, "--max-attempts", "1"];
        let (code, _, err) = as_tenant(&push);
        assert_eq!(code, Some(0), "{err}");
        let fail = r#"{"op":"fail","code":"bad"}"#;
        let (code, out, err) = as_tenant(&["job", "enqueue", "t", "--input", fail, "--wait"]);
        assert_eq!(code, Some(1), "{out}{err}");
        let (_, out, _) = as_tenant(&["job", "list", "--json"]);
        let list: Value = serde_json::from_str(&out).unwrap();
        failed.push((tenant, list["jobs"][0]["id"].as_str().unwrap().to_owned()));
        tokens.push(token);
    }

    // The admin's list of every tenant's, as JSON and as a table.
    let (code, out, err) = server.cli(&["job", "list", "--all-tenants", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let list: Value = serde_json::from_str(&out).unwrap();
    let mut shown: Vec<(&str, String)> = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["tenant"].as_str().unwrap(),
                j["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    shown.sort();
    assert_eq!(shown, failed);
    let (_, table, _) = server.cli(&["job", "list", "--all-tenants"]);
    assert!(table.contains("TENANT"), "{table}");
    for (tenant, id) in &failed {
        let row = table.lines().find(|l| l.contains(id.as_str())).unwrap();
        assert!(row.contains(tenant), "{row}");
    }

    // A tenant's token is refused it, with how to go on.
    let (code, _, err) = server.cli(&[
        "job",
        "retry-failed",
        "--all-tenants",
        "--token",
        &tokens[0],
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("leave out all_tenants"), "{err}");

    // The admin retries both tenants' at once; each ran again.
    let (code, out, err) = server.cli(&["job", "retry-failed", "--all-tenants", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let done: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(done, json!({"retried": 2, "refused": 0, "more": false}));
    for ((tenant, id), token) in failed.iter().zip(&tokens) {
        let job = Client::new(&server.url, token)
            .until(id, |j| j["status"] == "failed" && j["attempts"] == 2)
            .await;
        assert_eq!(job["tenant"], *tenant);
    }
    let (_, out, _) = server.cli(&["job", "retry-failed", "--all-tenants"]);
    assert!(out.contains("retried 2 failed jobs"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_sets_and_shows_a_tenants_quotas_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let server = Served::start(dir.path());
    let taskbox = |args: &[&str]| server.cli(args);
    let (code, out, err) = taskbox(&[
        "tenant",
        "set",
        "acme",
        "--weight",
        "3",
        "--quota",
        "max_queued=5",
        "--quota",
        "fuel_per_minute=1_000_000",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("created tenant acme"), "{err}");
    assert!(
        out.contains("max_queued") && out.contains("tenant"),
        "{out}"
    );
    // A second set keeps what it does not name, and `default` forgets one.
    let (code, _, err) = taskbox(&["tenant", "set", "acme", "--quota", "max_queued=default"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = taskbox(&["tenant", "show", "acme", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let view: Value = serde_json::from_str(&out).expect("--json prints JSON");
    assert_eq!(view["weight"], 3);
    assert_eq!(view["quotas"]["fuel_per_minute"]["limit"], 1_000_000);
    assert_eq!(view["quotas"]["fuel_per_minute"]["source"], "tenant");
    assert_eq!(view["quotas"]["max_queued"]["source"], "server");
    let (code, out, err) = taskbox(&["tenant", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("acme") && out.contains("fuel_per_minute=1000000"),
        "{out}"
    );
    let (code, out, err) = taskbox(&["tenant", "usage", "acme"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("FUEL USED") && out.contains("1,000,000"),
        "{out}"
    );
    let (code, _, err) = taskbox(&["tenant", "set", "acme", "--quota", "max_quued=1"]);
    assert_eq!(code, Some(2), "a misspelled quota is refused: {err}");
    assert!(err.contains("max_queued"), "it names the real ones: {err}");
    let (code, _, err) = taskbox(&["tenant", "show", "nobody"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("TENANT_NOT_FOUND"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_pauses_and_resumes_a_queue() {
    let dir = tempfile::tempdir().unwrap();
    let server = Served::start(dir.path());
    let taskbox = |args: &[&str]| server.cli(args);
    let guest = crate::common::guests_dir().join("noop.wasm");
    let (code, _, err) = taskbox(&["task", "push", "noop", guest.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = taskbox(&["queue", "pause", "mail"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("queue mail is paused"), "{out}");
    let (code, out, err) = taskbox(&[
        "job", "enqueue", "noop", "--input", "{}", "--queue", "mail", "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let job: Value = serde_json::from_str(&out).expect("--json prints JSON");
    let (code, out, err) = taskbox(&["queue", "list"]);
    assert_eq!(code, Some(0), "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("mail"))
        .unwrap_or_default();
    assert!(line.trim_end().ends_with("yes"), "mail is paused: {out}");
    let (code, out, err) = taskbox(&["queue", "resume", "mail", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let answer: Value = serde_json::from_str(&out).expect("--json prints JSON");
    assert_eq!(answer["paused"], false);
    let id = job["id"].as_str().unwrap();
    let (code, out, err) = taskbox(&["job", "get", id, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["queue"], "mail");
    let (code, out, _) = taskbox(&["queue", "resume", "mail"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("(it was already)"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_short_attempts_and_gives_long_ones_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Served::spawn(dir.path(), &["--grace-ms", "1000"], Some(ADMIN));
    let c = Client::new(&server.url, ADMIN);
    c.task("limits", "limits").await;
    let (_, short) = c
        .post(
            "/v1/jobs",
            json!({"task": "limits", "input": {"op": "sleep", "ms": 300}}),
        )
        .await;
    let (_, long) = c
        .post(
            "/v1/jobs",
            json!({"task": "limits", "input": {"op": "sleep", "ms": 4000}}),
        )
        .await;
    let (short, long) = (
        short["id"].as_str().unwrap().to_owned(),
        long["id"].as_str().unwrap().to_owned(),
    );
    c.until(&short, |j| j["status"] == "running").await;
    c.until(&long, |j| j["status"] == "running").await;
    let exit = server.terminate();
    assert!(exit.success(), "a graceful stop exits 0: {exit:?}");

    let server = Served::start(dir.path());
    let c = Client::new(&server.url, ADMIN);
    let (_, s) = c.get(&format!("/v1/jobs/{short}")).await;
    assert_eq!(
        s["status"], "completed",
        "it finished within the grace period: {s:#}"
    );
    let done = c.until(&long, |j| j["status"] == "completed").await;
    assert_eq!(
        done["attempts"], 1,
        "the interrupted attempt was given back, not counted: {done:#}"
    );
    let (_, attempts) = c.get(&format!("/v1/jobs/{long}/attempts")).await;
    assert_eq!(attempts["attempts"].as_array().unwrap().len(), 1);
    assert!(
        !server.stderr.lock().unwrap().contains("rescued"),
        "nothing was left running to rescue"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_start_prints_the_admin_token_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Served::spawn(dir.path(), &[], None);
    let token = {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let err = server.stderr.lock().unwrap().clone();
            if let Some(at) = err.find("TASKBOX_TOKEN=") {
                break err[at + "TASKBOX_TOKEN=".len()..]
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .to_owned();
            }
            assert!(Instant::now() < deadline, "no token printed: {err}");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let (status, _) = Client::new(&server.url, &token).get("/v1/jobs").await;
    assert_eq!(status, 200);
    // And what to do next: the dashboard, and a first task.
    let deadline = Instant::now() + Duration::from_secs(10);
    let said = loop {
        let err = server.stderr.lock().unwrap().clone();
        if err.contains("taskbox job enqueue hello") {
            break err;
        }
        assert!(Instant::now() < deadline, "no next steps printed: {err}");
        std::thread::sleep(Duration::from_millis(10));
    };
    let url = server.url.trim_end_matches('/');
    assert!(
        said.contains(&format!("the dashboard is at {url}/")),
        "{said}"
    );
    assert!(
        said.contains(&format!("export TASKBOX_URL={url}")),
        "{said}"
    );
    assert!(said.contains("taskbox init rust hello"), "{said}");
    assert!(server.terminate().success());
    let db = std::fs::read(dir.path().join("taskbox.db")).unwrap();
    assert!(
        !db.windows(token.len()).any(|w| w == token.as_bytes()),
        "only the token's hash is stored"
    );
    let again = Served::spawn(dir.path(), &[], None);
    let (status, _) = Client::new(&again.url, &token).get("/v1/jobs").await;
    assert_eq!(status, 200, "the token still works");
    let said = again.stderr.lock().unwrap().clone();
    assert!(!said.contains("TASKBOX_TOKEN="), "it is shown only once");
    assert!(!said.contains("a first task"), "{said}");
}

#[test]
fn a_second_server_on_one_data_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Served::start(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_taskbox"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("TASKBOX_ADMIN_TOKEN", ADMIN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another taskbox serve is using the data dir"),
        "{err}"
    );
}

#[test]
fn misspelled_settings_are_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_taskbox"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("TASKBOX_RUNNER", "4")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean TASKBOX_RUNNERS"), "{err}");
}
