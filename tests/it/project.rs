//! A task author's first hour with the real binary: `taskbox init`, `taskbox build` and
//! `taskbox run` from an empty directory, the first-task pages run step by step against a
//! server, and the schema a build derives enforced by it. These build real guests with the
//! language's toolchain and its registry.

use crate::e2e::{run_script_in, Client, Served, ADMIN};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

/// Where the projects' cargo builds go: shared across tests and runs, so that the SDK's
/// dependencies compile once.
fn cargo_target() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/target/project-tests").to_owned()
}

/// PATH with the Go that scripts/build-guests installed first, as a user's own Go would be.
fn path_with_go() -> String {
    let go = concat!(env!("CARGO_MANIFEST_DIR"), "/target/toolchains/go-venv/bin");
    format!("{go}:{}", std::env::var("PATH").unwrap_or_default())
}

fn taskbox(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_taskbox"))
        .args(args)
        .current_dir(dir)
        .env("PATH", path_with_go())
        .env("CARGO_TARGET_DIR", cargo_target())
        .env(
            "TASKBOX_CACHE_DIR",
            concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-artifacts"),
        )
        .output()
        .expect("start taskbox")
}

fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The shell blocks of a docs page that follow its `<!-- step -->` markers, in order.
fn page_steps(page: &str) -> String {
    let text = crate::common::repo_file(page);
    let steps: Vec<&str> = text
        .split("<!-- step -->")
        .skip(1)
        .map(|after| {
            let block = after
                .split("```sh\n")
                .nth(1)
                .expect("a ```sh block follows each step marker");
            block.split("\n```").next().unwrap()
        })
        .collect();
    assert!(!steps.is_empty(), "{page} has no steps");
    steps.join("\n")
}

#[test]
fn a_rust_project_goes_from_init_to_a_run_and_rebuilds_after_a_change() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("greeter");
    let created: Value = serde_json::from_str(&ok(
        &taskbox(tmp.path(), &["init", "rust", "greeter", "--json"]),
        "init",
    ))
    .unwrap();
    assert_eq!(created["name"], "greeter");

    let built: Value =
        serde_json::from_str(&ok(&taskbox(&dir, &["build", "--json"]), "build")).unwrap();
    assert_eq!(built["component"], "dist/task.wasm", "{built}");
    assert_eq!(built["schema"], "dist/schema.json", "{built}");
    assert!(built["component_bytes"].as_u64().unwrap() > 1000, "{built}");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("dist/schema.json")).unwrap())
            .unwrap();
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
    assert_eq!(schema["properties"]["times"]["maximum"], 10, "{schema}");

    let run = |dir: &Path| {
        let out = ok(
            &taskbox(dir, &["run", "dist/task.wasm", "--input", "@example.json"]),
            "run",
        );
        serde_json::from_str::<Value>(&out).unwrap()
    };
    assert_eq!(run(&dir), json!({"greeting": "Hello, Ada! Hello, Ada!"}));

    // A one-line change, built again.
    let lib = dir.join("src/lib.rs");
    let code = std::fs::read_to_string(&lib)
        .unwrap()
        .replace("Hello, {name}!", "Hi, {name}!");
    std::fs::write(&lib, code).unwrap();
    // From the parent directory this time: every path the build hands its tools holds.
    let rebuilt: Value = serde_json::from_str(&ok(
        &taskbox(tmp.path(), &["build", "greeter", "--json"]),
        "rebuild",
    ))
    .unwrap();
    assert_eq!(rebuilt["schema"], "greeter/dist/schema.json", "{rebuilt}");
    assert!(dir.join("dist/schema.json").is_file());
    assert_eq!(run(&dir), json!({"greeting": "Hi, Ada! Hi, Ada!"}));

    // A bad input fails the attempt for good, with the field named.
    let out = taskbox(
        &dir,
        &["run", "dist/task.wasm", "--input", r#"{"name": 7}"#],
    );
    assert_eq!(out.status.code(), Some(1));
    let failed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(failed["error"]["code"], "bad_input", "{failed}");
}

#[test]
fn a_go_project_goes_from_init_to_a_run_and_fails_with_its_own_codes() {
    let tmp = tempfile::tempdir().unwrap();
    ok(&taskbox(tmp.path(), &["init", "go", "greeter-go"]), "init");
    let dir = tmp.path().join("greeter-go");
    assert!(dir.join("third_party/taskbox-sdk/taskbox.go").is_file());
    let built: Value =
        serde_json::from_str(&ok(&taskbox(&dir, &["build", "--json"]), "build")).unwrap();
    assert_eq!(built["language"], "go", "{built}");
    assert_eq!(built["schema"], Value::Null, "{built}");

    greets_ada_twice_and_fails_with_its_own_codes(&dir);
}

/// The template's task, built in `dir`, under `taskbox run`: its example's output, then its
/// own failure (`empty_name`) and an input of the wrong type (`bad_input`, which no server
/// checked here), each with its code and final.
fn greets_ada_twice_and_fails_with_its_own_codes(dir: &Path) {
    let out = ok(
        &taskbox(dir, &["run", "dist/task.wasm", "--input", "@example.json"]),
        "run",
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"greeting": "Hello, Ada! Hello, Ada!"})
    );
    for (input, code) in [
        (r#"{"name": " "}"#, "empty_name"),
        (r#"{"name": 7}"#, "bad_input"),
    ] {
        let out = taskbox(dir, &["run", "dist/task.wasm", "--input", input, "--json"]);
        assert_eq!(out.status.code(), Some(1), "{input}");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let error = &report["outcome"]["error"];
        assert_eq!(error["code"], code, "{input}: {report}");
        assert_eq!(error["retryable"], false, "{input}: {report}");
    }
}

#[test]
fn a_javascript_project_adds_a_real_npm_package_and_builds_and_runs_it() {
    let tmp = tempfile::tempdir().unwrap();
    ok(&taskbox(tmp.path(), &["init", "js", "notes-js"]), "init");
    let dir = tmp.path().join("notes-js");
    assert!(dir.join("third_party/taskbox-sdk/src/index.js").is_file());
    let built: Value =
        serde_json::from_str(&ok(&taskbox(&dir, &["build", "--json"]), "build")).unwrap();
    assert_eq!(built["language"], "js", "{built}");
    let out = ok(
        &taskbox(&dir, &["run", "dist/task.wasm", "--input", "@example.json"]),
        "run",
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"greeting": "Hello, Ada! Hello, Ada!"})
    );

    // A package from the registry, used by an async task with awaits.
    let npm = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "marked@18.2.1"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(npm.status.success(), "{npm:?}");
    std::fs::write(
        dir.join("src/task.js"),
        r#"import { defineTask, Fail } from "@taskbox/sdk";
import { marked } from "marked";

export default defineTask(async (input, ctx) => {
  if (typeof input.markdown !== "string") throw new Fail("no_markdown", "give `markdown`");
  const [html, words] = await Promise.all([
    marked.parse(input.markdown, { async: true }),
    Promise.resolve(input.markdown.split(/\s+/u).filter(Boolean).length),
  ]);
  ctx.info(`${words} words`);
  return { html, words };
});
"#,
    )
    .unwrap();
    ok(&taskbox(&dir, &["build"]), "build with marked");
    let out = ok(
        &taskbox(
            &dir,
            &[
                "run",
                "dist/task.wasm",
                "--input",
                r##"{"markdown": "# Título\n\n*ünïcode* [link](https://example.com)"}"##,
            ],
        ),
        "run with marked",
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({
            "html": "<h1>Título</h1>\n<p><em>ünïcode</em> <a href=\"https://example.com\">link</a></p>\n",
            "words": 4
        })
    );
    let out = taskbox(&dir, &["run", "dist/task.wasm", "--input", "{}", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["outcome"]["error"]["code"], "no_markdown",
        "{report}"
    );
    assert_eq!(report["outcome"]["error"]["retryable"], false, "{report}");
}

/// `taskbox run` of a project's component in a blocking thread (the origin serves on this
/// test's runtime).
async fn run_off_thread(dir: &Path, args: &[String]) -> Output {
    let dir = dir.to_owned();
    let args = args.to_vec();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        taskbox(&dir, &args)
    })
    .await
    .unwrap()
}

/// `fetch` in JavaScript and `ctx.fetch` in Python reach an origin the run allows, with
/// their headers and body, through the host's checks; without the grant the host refuses
/// them (`denied`), and the guest sees why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_and_python_sdks_fetch_through_the_tasks_grant() {
    let (port, seen) = crate::sandbox_outbound::origin().await;
    let tmp = tempfile::tempdir().unwrap();
    let js = tmp.path().join("fetch-js");
    let py = tmp.path().join("fetch-py");
    ok(&taskbox(tmp.path(), &["init", "js", "fetch-js"]), "init js");
    ok(
        &taskbox(tmp.path(), &["init", "python", "fetch-py"]),
        "init python",
    );
    std::fs::write(
        js.join("src/task.js"),
        r#"import { defineTask } from "@taskbox/sdk";

export default defineTask(async (input) => {
  try {
    const res = await fetch(input.url, { headers: { "x-from": "js" } });
    console.log("fetched", res.status);
    return { status: res.status, ok: res.ok, body: await res.text(), type: res.headers.get("Content-Type") };
  } catch (e) {
    return { refused: e.code, message: String(e.message) };
  }
});
"#,
    )
    .unwrap();
    std::fs::write(
        py.join("app.py"),
        r#"import taskbox


@taskbox.task
def get(input: dict, ctx: taskbox.Ctx) -> dict:
    try:
        res = ctx.fetch(input["url"], headers={"x-from": "python"})
    except taskbox.Fail as f:
        return {"refused": f.code, "retryable": f.retryable}
    return {"status": res.status, "ok": res.ok, "body": res.text(), "type": res.header("content-type")}
"#,
    )
    .unwrap();
    for dir in [&js, &py] {
        ok(&taskbox(dir, &["build"]), "build");
    }
    let input = |path: &str| format!(r#"{{"url": "http://127.0.0.1:{port}{path}"}}"#);
    let allow = format!("127.0.0.1:{port}");
    let run = |dir: &Path, path: &str, granted: bool| {
        let mut args: Vec<String> = ["run", "dist/task.wasm", "--input"]
            .map(String::from)
            .to_vec();
        args.push(input(path));
        if granted {
            args.extend(["--allow".into(), allow.clone(), "--allow-private".into()]);
        }
        let dir = dir.to_owned();
        async move {
            let out = run_off_thread(&dir, &args).await;
            serde_json::from_str::<Value>(&ok(&out, "run")).unwrap()
        }
    };

    let got = run(&js, "/ok", true).await;
    assert_eq!(
        got,
        json!({"status": 200, "ok": true, "body": "hello from the origin", "type": "text/plain; charset=utf-8"})
    );
    assert_eq!(seen.header("/ok", "x-from").as_deref(), Some("js"));
    let got = run(&js, "/missing", true).await;
    assert_eq!(
        (got["status"].clone(), got["ok"].clone()),
        (json!(404), json!(false)),
        "{got}"
    );
    let got = run(&js, "/ok", false).await;
    assert_eq!(got["refused"], "denied", "{got}");
    assert!(
        got["message"].as_str().unwrap().contains("network"),
        "{got}"
    );

    let got = run(&py, "/ok", true).await;
    assert_eq!(
        got,
        json!({"status": 200, "ok": true, "body": "hello from the origin", "type": "text/plain; charset=utf-8"})
    );
    assert!(
        seen.0
            .lock()
            .unwrap()
            .iter()
            .any(|(p, h)| p == "/ok" && h["x-from"] == "python"),
        "the origin saw the Python request's header"
    );
    let got = run(&py, "/ok", false).await;
    assert_eq!(got, json!({"refused": "http_denied", "retryable": false}));
    // Refused requests never reached the origin.
    assert_eq!(seen.paths(), ["/ok", "/missing", "/ok"]);
}

#[test]
fn a_python_project_goes_from_init_to_a_run_with_its_schema_and_own_codes() {
    let tmp = tempfile::tempdir().unwrap();
    ok(
        &taskbox(tmp.path(), &["init", "python", "greeter-py"]),
        "init",
    );
    let dir = tmp.path().join("greeter-py");
    assert!(dir
        .join("third_party/taskbox-sdk/src/taskbox/__init__.py")
        .is_file());

    // The template's test, natively, with the language's own runner.
    let test = Command::new("python3")
        .args(["-m", "unittest", "-v"])
        .current_dir(&dir)
        .env("PYTHONPATH", "third_party/taskbox-sdk/src")
        .output()
        .unwrap();
    assert!(test.status.success(), "{test:?}");

    let built: Value =
        serde_json::from_str(&ok(&taskbox(&dir, &["build", "--json"]), "build")).unwrap();
    assert_eq!(built["language"], "python", "{built}");
    assert_eq!(built["schema"], "dist/schema.json", "{built}");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("dist/schema.json")).unwrap())
            .unwrap();
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
    assert_eq!(schema["properties"]["times"]["type"], "integer", "{schema}");

    greets_ada_twice_and_fails_with_its_own_codes(&dir);
}

#[test]
fn init_refuses_a_directory_that_is_not_empty_and_build_one_without_a_project() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let out = taskbox(tmp.path(), &["init", "rust", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not empty"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("notes.txt")).unwrap(),
        "mine"
    );

    let out = taskbox(tmp.path(), &["build"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("taskbox init"),
        "{out:?}"
    );

    let out = taskbox(tmp.path(), &["init", "cobol", "x"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// Runs every step of a first-task page in an empty directory against `server`, as a user
/// would: with `CARGO_TARGET_DIR` shared and the examples' Go on PATH. Each page greets Ada
/// twice with `taskbox run`, then Grace through a job. Its stdout.
async fn run_page(page: &str, server: &Served) -> String {
    let work = tempfile::tempdir().unwrap();
    let script = page_steps(page);
    // The PATH the script gets replaces its own: taskbox first again.
    let bin = Path::new(env!("CARGO_BIN_EXE_taskbox"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    let env = [
        ("CARGO_TARGET_DIR", cargo_target()),
        ("PATH", format!("{bin}:{}", path_with_go())),
    ];
    let out = run_script_in(work.path(), &script, &server.url, ADMIN, &env).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{page}'s steps failed:\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        stdout.contains("Hello, Ada! Hello, Ada!"),
        "taskbox run: {stdout}"
    );
    assert!(
        stdout.contains("Hello, Grace!"),
        "the job's output: {stdout}"
    );
    stdout
}

/// Each directory of `path` with the other languages' toolchains taken out (symlinks to the
/// rest, under `into`): what a machine with rustup and nothing else would have.
fn path_without_other_toolchains(path: &str, into: &Path) -> String {
    const EXACT: &[&str] = &[
        "node",
        "nodejs",
        "npm",
        "npx",
        "corepack",
        "go",
        "gofmt",
        "jco",
        "deno",
        "bun",
        "tinygo",
        "wasm-tools",
        "componentize-py",
        "esbuild",
        "tsc",
    ];
    const PREFIXES: &[&str] = &["python", "pip", "pydoc", "pyenv"];
    let mut dirs = Vec::new();
    for (i, dir) in std::env::split_paths(path).enumerate() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mirror = into.join(i.to_string());
        std::fs::create_dir_all(&mirror).unwrap();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if EXACT.contains(&name.as_str()) || PREFIXES.iter().any(|p| name.starts_with(p)) {
                continue;
            }
            let _ = std::os::unix::fs::symlink(entry.path(), mirror.join(&name));
        }
        dirs.push(mirror);
    }
    std::env::join_paths(dirs)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The README's quick start, run as a newcomer would after `taskbox serve`: `init rust`,
/// `build`, `task push`, `enqueue --wait`, in an empty directory, with rustup as the only
/// toolchain on PATH (no Node, Go or Python, so nothing scripts/build-guests installs); then
/// the dashboard it points at answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_quick_start_works_with_rustup_alone() {
    let data = tempfile::tempdir().unwrap();
    let server = Served::spawn(data.path(), &["--grace-ms", "2000"], Some(ADMIN));
    let work = tempfile::tempdir().unwrap();
    let shims = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_taskbox"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    let path = format!(
        "{bin}:{}",
        path_without_other_toolchains(&std::env::var("PATH").unwrap_or_default(), shims.path())
    );
    // The PATH holds what a Rust build needs and none of the others.
    let probe = Command::new("bash")
        .args(["-c", "command -v cargo rustup cc >/dev/null && ! command -v node && ! command -v npm && ! command -v go && ! command -v python3 && ! command -v python"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        probe.status.success(),
        "the PATH still holds another toolchain: {}",
        String::from_utf8_lossy(&probe.stdout)
    );
    let script = crate::e2e::doc_block("README.md", "<!-- quick-start -->");
    let env = [("CARGO_TARGET_DIR", cargo_target()), ("PATH", path)];
    let out = run_script_in(work.path(), &script, &server.url, ADMIN, &env).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the quick start failed:\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        stdout.contains("Hello, Grace!"),
        "the job's output: {stdout}\n{stderr}"
    );
    let dashboard = taskbox::http::default_client()
        .get(format!("{}/", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(dashboard.status(), 200);
    let page = dashboard.text().await.unwrap();
    assert!(
        page.contains("<html") || page.contains("<!doctype") || page.contains("<!DOCTYPE"),
        "{page}"
    );
}

/// docs/book/src/first-task/rust.md, every step, from an empty directory against a real server; then
/// the input schema its build derived, enforced by that server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_first_task_page_works_and_the_server_enforces_the_derived_schema() {
    let data = tempfile::tempdir().unwrap();
    let server = Served::spawn(data.path(), &["--grace-ms", "2000"], Some(ADMIN));
    run_page("docs/book/src/first-task/rust.md", &server).await;
    enforces_its_schema(
        &server,
        "hello",
        [
            (json!({"times": 3}), "name"),
            (json!({"name": "Ada", "times": 11}), "times"),
        ],
    )
    .await;
}

/// The server refuses each bad input of `task` with a 400 naming its field, and runs a good one.
async fn enforces_its_schema<const N: usize>(server: &Served, task: &str, bad: [(Value, &str); N]) {
    let client = Client::new(&server.url, ADMIN);
    for (input, field) in bad {
        let (status, body) = client
            .post("/v1/jobs", json!({"task": task, "input": input}))
            .await;
        assert_eq!(status, 400, "{input}: {body}");
        assert!(
            body.to_string().contains(field),
            "{input}: the error should name {field}: {body}"
        );
    }
    let (status, body) = client
        .post("/v1/jobs", json!({"task": task, "input": {"name": "Lin"}}))
        .await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_str().unwrap();
    let job = client.until(id, |j| j["status"] == "completed").await;
    assert_eq!(job["output"], json!({"greeting": "Hello, Lin!"}), "{job}");
}

/// docs/book/src/first-task/python.md, every step, from an empty directory against a real server;
/// then the schema its build derived from the input dataclass, enforced by that server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_first_task_page_works_and_the_server_enforces_the_derived_schema() {
    let data = tempfile::tempdir().unwrap();
    let server = Served::spawn(data.path(), &["--grace-ms", "2000"], Some(ADMIN));
    run_page("docs/book/src/first-task/python.md", &server).await;
    enforces_its_schema(
        &server,
        "hello-py",
        [
            (json!({"times": 3}), "name"),
            (json!({"name": "Ada", "times": "twice"}), "times"),
        ],
    )
    .await;
}

/// docs/book/src/first-task/typescript.md, every step, from an empty directory against a real server;
/// then the schema its build derived from the `Input` type, enforced by that server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_first_task_page_works_and_the_server_enforces_the_derived_schema() {
    let data = tempfile::tempdir().unwrap();
    let server = Served::spawn(data.path(), &["--grace-ms", "2000"], Some(ADMIN));
    run_page("docs/book/src/first-task/typescript.md", &server).await;
    enforces_its_schema(
        &server,
        "hello-ts",
        [
            (json!({"times": 3}), "name"),
            (json!({"name": "Ada", "times": 11}), "times"),
        ],
    )
    .await;
}

/// docs/book/src/first-task/javascript.md, every step, from an empty directory against a real server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_first_task_page_works() {
    let data = tempfile::tempdir().unwrap();
    let server = Served::spawn(data.path(), &["--grace-ms", "2000"], Some(ADMIN));
    run_page("docs/book/src/first-task/javascript.md", &server).await;
}

/// docs/book/src/first-task/go.md, every step, from an empty directory against a real server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_go_first_task_page_works() {
    let data = tempfile::tempdir().unwrap();
    let server = Served::spawn(data.path(), &["--grace-ms", "2000"], Some(ADMIN));
    run_page("docs/book/src/first-task/go.md", &server).await;
}
