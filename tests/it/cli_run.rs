//! `taskbox run` as a user runs it: the real binary on the bundled examples.

use crate::common::{guests_dir, repo_file};
use serde_json::{json, Value};
use std::process::{Command, Output};

fn taskbox(args: &[&str]) -> Output {
    taskbox_with(args, &[])
}

fn taskbox_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let cache = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-artifacts");
    Command::new(env!("CARGO_BIN_EXE_taskbox"))
        .args(args)
        .envs(env.iter().copied())
        .env("TASKBOX_CACHE_DIR", cache)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("start taskbox")
}

fn wasm(name: &str) -> String {
    guests_dir()
        .join(format!("{name}.wasm"))
        .display()
        .to_string()
}

fn stdout_json(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn runs_the_rust_javascript_go_and_python_examples() {
    let cases = [
        (
            "invoice",
            "@guest-examples/rust/invoice/example.json",
            "invoice_number",
            json!("INV-A-1001"),
        ),
        (
            "js-article",
            "@guest-examples/js/example.json",
            "slug",
            json!("sandboxing-jobs-with-webassembly-components"),
        ),
        (
            "go-stats",
            "@guest-examples/go/example.json",
            "unit",
            json!("°C"),
        ),
        (
            "py-sales",
            "@guest-examples/python/example.json",
            "rows",
            json!(5),
        ),
    ];
    for (name, input, field, want) in cases {
        let out = taskbox(&["run", &wasm(name), "--input", input]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(stdout_json(&out)[field], want, "{name}");
        let err = stderr(&out);
        assert!(
            err.contains("fuel") && err.contains("peak memory"),
            "{name}: {err}"
        );
    }
}

#[test]
fn a_failed_attempt_prints_the_error_and_exits_1() {
    let out = taskbox(&[
        "run",
        &wasm("hostile-loop"),
        "--timeout-ms",
        "200",
        "--fuel",
        "1000000000000",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json = stdout_json(&out);
    assert_eq!(json["error"]["kind"], "timeout");
    assert!(stderr(&out).contains("failed: timeout"));
}

/// A trap's log shows the guest's wasm frames and never the host's own
/// stack. With `RUST_BACKTRACE` set, each trap used to capture and
/// symbolize the server's backtrace (129 ms of a core for a 1.2 ms attempt
/// the first time), and the tenant's log showed the host's source paths.
#[test]
fn a_trap_logs_the_guests_frames_and_not_the_hosts() {
    let spin = r#"{"op": "spin", "iterations": 1000000000000}"#;
    let args = [
        "run",
        &wasm("limits"),
        "--fuel",
        "20000000",
        "--input",
        spin,
        "--json",
    ];
    let out = taskbox_with(
        &args,
        &[("RUST_BACKTRACE", "1"), ("RUST_LIB_BACKTRACE", "1")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json = stdout_json(&out);
    assert_eq!(json["outcome"]["error"]["kind"], "fuel_exhausted");
    let log = json["log"]["lines"].to_string();
    assert!(log.contains("wasm backtrace"), "the guest's frames: {log}");
    for host in ["Stack backtrace", ".rs:", "wasmtime_internal"] {
        assert!(!log.contains(host), "the host's stack ({host}) in {log}");
    }
}

#[test]
fn the_guest_log_goes_to_stderr() {
    let input = repo_file("guest-examples/rust/invoice/example.json");
    let out = taskbox(&["run", &wasm("invoice"), "--input", &input]);
    assert!(
        stderr(&out).contains("invoicing order A-1001"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn refusals_exit_2_and_say_why() {
    let out = taskbox(&["run", &wasm("hostile-import")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("evil:net/raw@0.1.0"),
        "{}",
        stderr(&out)
    );

    let out = taskbox(&["run", &wasm("noop"), "--input", "{not json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--input is not JSON"),
        "{}",
        stderr(&out)
    );

    let out = taskbox(&["run", &wasm("noop"), "--memory-mb", "999999"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ceilings"), "{}", stderr(&out));

    let out = taskbox(&["run", "/nonexistent.wasm"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read /nonexistent.wasm"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn help_shows_the_default_limits() {
    let out = taskbox(&["run", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for default in [
        "[default: 30000]",
        "[default: 10000000000]",
        "[default: 256]",
    ] {
        assert!(text.contains(default), "{default} missing from:\n{text}");
    }
}

#[test]
fn a_thousand_attempts_leak_no_memory() {
    let out = taskbox(&[
        "run",
        &wasm("invoice"),
        "--input",
        "@guest-examples/rust/invoice/example.json",
        "--repeat",
        "2000",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout_json(&out);
    let warm = report["repeat"]["rss_warm_kib"]
        .as_u64()
        .expect("RSS after warm-up");
    let end = report["repeat"]["rss_end_kib"]
        .as_u64()
        .expect("RSS at the end");
    // A store or instance leaked per attempt would be ≥ 1 MiB each: ≥ 1.8 GiB here.
    assert!(
        end <= warm + 8 * 1024,
        "RSS grew from {warm} KiB to {end} KiB over 1,800 attempts"
    );
    assert_eq!(report["outcome"]["invoice_number"], "INV-A-1001");
}

/// A one-request HTTP server on 127.0.0.1 on a thread: answers 200 "pong"
/// and hands over the request's head.
fn one_request_server() -> (u16, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        let mut head = String::new();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\npong");
        let _ = tx.send(head);
    });
    (port, rx)
}

#[test]
fn run_grants_hosts_by_flag_and_secrets_from_the_environment() {
    let (port, heads) = one_request_server();
    let input = json!({
        "requests": [{"method": "GET", "url": format!("http://127.0.0.1:{port}/ping"),
                      "secret_headers": {"x-api-key": "PROBE_KEY"}}],
        "print_secrets": ["PROBE_KEY"],
    })
    .to_string();
    let allow = format!("127.0.0.1:{port}");
    let out = taskbox_with(
        &[
            "run",
            &wasm("http-probe"),
            "--input",
            &input,
            "--json",
            "--allow",
            &allow,
            "--allow-private",
            "--secret",
            "PROBE_KEY",
        ],
        &[("PROBE_KEY", "local-secret-value-123")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout_json(&out);
    assert_eq!(
        report["outcome"]["results"][0]["body"], "pong",
        "{report:#}"
    );
    assert_eq!(report["network"]["requests"], 1);
    let head = heads
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("x-api-key: local-secret-value-123"),
        "{head}"
    );
    let log = report["log"].to_string();
    assert!(
        !log.contains("local-secret-value-123") && log.contains("[redacted]"),
        "{log}"
    );

    // Without the flag, the request is refused; without the variable, it says what to do.
    let out = taskbox(&["run", &wasm("http-probe"), "--input", &input, "--json"]);
    assert_eq!(
        stdout_json(&out)["outcome"]["results"][0]["error"],
        "HTTP-request-denied"
    );
    let out = taskbox(&["run", &wasm("http-probe"), "--secret", "NOT_SET_ANYWHERE_1"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("set the environment variable NOT_SET_ANYWHERE_1"),
        "{}",
        stderr(&out)
    );
}
