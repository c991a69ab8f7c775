//! `taskbox schedule …` and `taskbox workflow …` as a user runs them
//! against the real binary: schedules put (flags and a file), listed,
//! shown, triggered, paused, resumed and deleted; workflow versions
//! pushed and shown; tables for people, `--json` for scripts, and errors
//! that say what to do.

use crate::cli_events::Server;
use serde_json::Value;
use std::time::{Duration, Instant};

#[test]
fn schedules_are_put_listed_triggered_paused_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "127.0.0.1:0", &[]);
    server.push("echo", "limits", &[]);

    // A bad expression is refused before anything is made, and says why.
    let (code, _, err) = server.cli(&[
        "schedule", "put", "nightly", "--cron", "0 3 * *", "--task", "echo",
    ]);
    assert_ne!(code, Some(0));
    assert!(err.contains("4 fields"), "{err}");

    let (code, out, err) = server.cli(&[
        "schedule",
        "put",
        "nightly",
        "--cron",
        "30 2 * * *",
        "--task",
        "echo",
        "--timezone",
        "Europe/Berlin",
        "--input",
        r#"{"op": "echo", "value": "night"}"#,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("defined schedule nightly (30 2 * * * Europe/Berlin): next slot"),
        "{out}"
    );

    // From a file, the JSON the API takes.
    let file = dir.path().join("tick.json");
    std::fs::write(
        &file,
        r#"{"cron": "0 * * * * *", "task": "echo", "input": {"op": "echo", "value": 1}, "overlap": "allow"}"#,
    )
    .unwrap();
    let (code, _, err) = server.cli(&["schedule", "put", "tick", "--file", file.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");

    let (code, out, err) = server.cli(&["schedule", "list"]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("NEXT SLOT"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("nightly") && lines[2].starts_with("tick"),
        "{out}"
    );
    let (_, out, _) = server.cli(&["schedule", "list", "--json"]);
    let all: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(all["schedules"].as_array().unwrap().len(), 2);

    // Triggered: a job now, which runs.
    let (code, out, err) = server.cli(&["schedule", "trigger", "nightly", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    let job = s["last_job"]["id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, out, _) = server.cli(&["job", "get", &job, "--json"]);
        let j: Value = serde_json::from_str(&out).unwrap();
        if j["status"] == "completed" {
            assert_eq!(j["output"], "night");
            break;
        }
        assert!(Instant::now() < deadline, "{j}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, out, _) = server.cli(&["schedule", "show", "nightly"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("timezone") && out.contains("Europe/Berlin"),
        "{out}"
    );
    assert!(out.contains(&format!("{job} (completed)")), "{out}");

    let (code, out, _) = server.cli(&["schedule", "pause", "nightly"]);
    assert_eq!((code, out.trim()), (Some(0), "paused nightly"));
    let (_, out, _) = server.cli(&["schedule", "show", "nightly", "--json"]);
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (s["enabled"].clone(), s["next_slot"].clone()),
        (Value::Bool(false), Value::Null)
    );
    let (code, out, _) = server.cli(&["schedule", "resume", "nightly"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("resumed nightly: next slot"), "{out}");

    let (code, out, _) = server.cli(&["schedule", "delete", "nightly"]);
    assert_eq!((code, out.trim()), (Some(0), "deleted schedule nightly"));
    let (code, _, err) = server.cli(&["schedule", "show", "nightly"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("taskbox schedule list"), "{err}");
}

#[test]
fn workflow_push_defines_the_next_version() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "127.0.0.1:0", &[]);
    server.push("validate", "noop", &[]);
    server.push("invoice", "invoice", &[]);
    let file = dir.path().join("orders.json");
    std::fs::write(
        &file,
        r#"{"steps": [{"name": "validate", "task": "validate"},
                      {"name": "invoice", "task": "invoice", "retry": {"max_attempts": 2}}]}"#,
    )
    .unwrap();
    let (code, out, err) = server.cli(&["workflow", "push", file.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "workflow orders version 1: validate → invoice");
    let (_, out, _) = server.cli(&["workflow", "push", file.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], 2);
    let (code, out, _) = server.cli(&["workflow", "list"]);
    assert_eq!(code, Some(0));
    assert!(out.lines().nth(1).unwrap().starts_with("orders"), "{out}");
    let (code, out, _) = server.cli(&["workflow", "show", "orders", "--version", "1"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("2 attempts"), "{out}");
    // A task that is not there: the server's words, with the step's name.
    std::fs::write(
        &file,
        r#"{"steps": [{"name": "ship", "task": "shipping"}]}"#,
    )
    .unwrap();
    let (code, _, err) = server.cli(&["workflow", "push", file.to_str().unwrap()]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains("steps step \"ship\": task \"shipping\" does not exist"),
        "{err}"
    );
    let (code, _, err) = server.cli(&["workflow", "show", "nope"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("taskbox workflow list"), "{err}");

    // Run: `job enqueue --workflow … --wait` follows its steps, and `job
    // get` shows them.
    let order = crate::common::repo_file("guest-examples/rust/invoice/example.json");
    let (code, out, err) = server.cli(&[
        "job",
        "enqueue",
        "--workflow",
        "orders",
        "--input",
        &order,
        "--wait",
    ]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(
        err.contains("step validate completed after 1 attempt"),
        "{err}"
    );
    assert!(err.contains("step invoice started (task invoice)"), "{err}");
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["invoice_number"], "INV-A-1001");
    let (_, listed, _) = server.cli(&["job", "list", "--json"]);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let id = listed["jobs"][0]["id"].as_str().unwrap().to_owned();
    let (code, out, _) = server.cli(&["job", "get", &id]);
    assert_eq!(code, Some(0));
    assert!(out.contains("workflow: orders v2"), "{out}");
    let steps: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("STEP"))
        .take(3)
        .collect();
    assert_eq!(steps.len(), 3, "{out}");
    assert!(
        steps[1].starts_with("validate") && steps[1].contains("completed"),
        "{out}"
    );
    assert!(
        steps[2].starts_with("invoice") && steps[2].contains("1/2"),
        "{out}"
    );
}
