//! hostile-probe: asks WASI for everything a task should not get, whatever the input, and reports
//! what it got: `done` with an object mapping each probe to `{"ok": <what it got>}` or
//! `{"err": "<error text>"}`. Probes: `read_dir_root` (names in "/"), `read_dir_cwd` (names in
//! "."), `read_etc_passwd`, `write_tmp` (writes "/tmp/taskbox-probe"), `env_vars` (names only),
//! `args`, `current_dir`, `env_home`, `stdin` (read to end). In a sandbox that grants nothing a
//! test should expect every file probe to be an `err`, `env_vars` to be `{"ok": []}`,
//! `env_home` an `err`, and no /tmp/taskbox-probe on the host.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

use serde_json::{json, Map, Value};
use std::io::Read;

fn report<T: Into<Value>, E: std::fmt::Display>(result: Result<T, E>) -> Value {
    match result {
        Ok(v) => json!({ "ok": v.into() }),
        Err(e) => json!({ "err": e.to_string() }),
    }
}

fn list_dir(path: &str) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(path)? {
        names.push(entry?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

struct HostileProbe;

impl Guest for HostileProbe {
    fn run(_job: Job, _input: String) -> Result<Outcome, Failure> {
        let mut probes = Map::new();
        probes.insert("read_dir_root".into(), report(list_dir("/")));
        probes.insert("read_dir_cwd".into(), report(list_dir(".")));
        probes.insert("read_etc_passwd".into(), report(std::fs::read_to_string("/etc/passwd")));
        probes.insert(
            "write_tmp".into(),
            report(std::fs::write("/tmp/taskbox-probe", "x").map(|()| "written")),
        );
        let env: Vec<String> = std::env::vars_os().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        probes.insert("env_vars".into(), json!({ "ok": env }));
        let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
        probes.insert("args".into(), json!({ "ok": args }));
        probes.insert(
            "current_dir".into(),
            report(std::env::current_dir().map(|p| p.to_string_lossy().into_owned())),
        );
        probes.insert("env_home".into(), report(std::env::var("HOME")));
        let mut stdin = Vec::new();
        probes.insert(
            "stdin".into(),
            report(std::io::stdin().read_to_end(&mut stdin).map(|_| String::from_utf8_lossy(&stdin).into_owned())),
        );
        Ok(Outcome::Done(Value::Object(probes).to_string()))
    }
}

export!(HostileProbe);
