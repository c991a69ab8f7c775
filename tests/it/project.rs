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

    let out = ok(
        &taskbox(&dir, &["run", "dist/task.wasm", "--input", "@example.json"]),
        "run",
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"greeting": "Hello, Ada! Hello, Ada!"})
    );

    // The SDK's failures reach the host with their codes, final ones final.
    for (input, code) in [
        (r#"{"name": " "}"#, "empty_name"),
        (r#"{"name": 7}"#, "bad_input"),
    ] {
        let out = taskbox(&dir, &["run", "dist/task.wasm", "--input", input, "--json"]);
        assert_eq!(out.status.code(), Some(1), "{input}");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let error = &report["outcome"]["error"];
        assert_eq!(error["code"], code, "{input}: {report}");
        assert_eq!(error["retryable"], false, "{input}: {report}");
    }
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

/// docs/first-task/rust.md, every step, from an empty directory against a real server; then
/// the input schema its build derived, enforced by that server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_first_task_page_works_and_the_server_enforces_the_derived_schema() {
    let data = tempfile::tempdir().unwrap();
    let server = Served::spawn(data.path(), &["--grace-ms", "2000"], Some(ADMIN));
    run_page("docs/first-task/rust.md", &server).await;

    let client = Client::new(&server.url, ADMIN);
    for (input, field) in [
        (json!({"times": 3}), "name"),
        (json!({"name": "Ada", "times": 11}), "times"),
    ] {
        let (status, body) = client
            .post("/v1/jobs", json!({"task": "hello", "input": input}))
            .await;
        assert_eq!(status, 400, "{input}: {body}");
        assert!(
            body.to_string().contains(field),
            "{input}: the error should name {field}: {body}"
        );
    }
    let (status, body) = client
        .post(
            "/v1/jobs",
            json!({"task": "hello", "input": {"name": "Lin"}}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_str().unwrap();
    let job = client.until(id, |j| j["status"] == "completed").await;
    assert_eq!(job["output"], json!({"greeting": "Hello, Lin!"}), "{job}");
}

/// docs/first-task/go.md, every step, from an empty directory against a real server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_go_first_task_page_works() {
    let data = tempfile::tempdir().unwrap();
    let server = Served::spawn(data.path(), &["--grace-ms", "2000"], Some(ADMIN));
    run_page("docs/first-task/go.md", &server).await;
}
