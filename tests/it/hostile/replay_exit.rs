//! Round two, item 13: `taskbox job replay` says by its exit status how the
//! replayed attempt ended, so that a script can tell a fix from a repeat:
//! a failed attempt replayed fails again (1), the same input on a fixed
//! component completes (0), and one that ends another way says so (3).

use crate::common::guests_dir;
use crate::e2e::{Client, Served, ADMIN};
use crate::replay::{ended, replay};
use serde_json::json;

#[tokio::test]
async fn a_replay_exits_by_how_the_replayed_attempt_ended() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let digest = admin.upload("limits").await;
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            "/v1/tasks/once",
            Some(json!({"component": digest, "retry": {"max_attempts": 1}})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (_, job) = admin
        .post(
            "/v1/jobs",
            json!({"task": "once", "input": {"op": "fail", "code": "broken", "retryable": true}}),
        )
        .await;
    let id = job["id"].as_str().unwrap();
    assert_eq!(ended(&admin, id).await["status"], "failed");

    // The same component fails the same way: 1, as `taskbox run` says.
    let (code, r, stderr) = replay(&served.url, id, &[]);
    assert_eq!(code, Some(1), "{r}\n{stderr}");
    assert_eq!(r["exit_status"], 1, "{r}");

    // A fixed build on the same input completes: 0, so `&& echo fixed` works.
    let fixed = guests_dir().join("noop.wasm");
    let (code, r, stderr) = replay(&served.url, id, &["--component", fixed.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{r}\n{stderr}");
    assert_eq!(r["replayed"]["outcome"], "completed", "{r}");
    assert!(stderr.contains("in place of the pinned"), "{stderr}");

    // A build that fails another way (a trap, not the guest's own
    // failure) ended otherwise than the record: 3.
    let other = guests_dir().join("hostile-panic.wasm");
    let (code, r, stderr) = replay(&served.url, id, &["--component", other.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{r}\n{stderr}");
    assert_eq!(r["replayed"]["error"]["kind"], "trap", "{r}");
    assert_eq!(r["same_ending"], false, "{r}");
}
