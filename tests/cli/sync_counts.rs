//! What a sync's report counts: sessions, not the keys a session had on the way.

use crate::support::Env;

/// A Claude transcript line of session `id`.
fn line(id: &str, uuid: &str, text: &str) -> String {
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/tmp/x",
        "sessionId": id, "version": "2.1.38", "gitBranch": "main", "type": "user",
        "uuid": uuid, "timestamp": "2026-11-20T10:00:00.000Z",
        "message": {"role": "user", "content": text}
    })
    .to_string()
}

/// A first line skipped (malformed here; one over the 64 MiB line limit does the same) that
/// fills a whole commit leaves the session keyed by its file until the next commit reads its
/// `sessionId` and re-keys it: still one new session, not a sub-agent and an updated one. A
/// second file of the same session, whose placeholder is folded into it, adds none.
#[test]
fn a_session_named_after_its_first_commit_counts_once() {
    let env = Env::new();
    let project = env.claude().join("-p");
    std::fs::create_dir_all(&project).unwrap();
    // More than a commit's 4 MiB of input before the first line that names the session.
    let skipped = format!("{{\"broken {}", "x".repeat(5 << 20));
    std::fs::write(
        project.join("s.jsonl"),
        format!(
            "{skipped}\n{}\n",
            line("big-1", "u2", "after the first line")
        ),
    )
    .unwrap();
    let report = env.json(&["sync"]);
    let counts = |r: &serde_json::Value| {
        (
            r["sessions_added"].clone(),
            r["subagents_added"].clone(),
            r["sessions_updated"].clone(),
        )
    };
    assert_eq!(counts(&report), (1.into(), 0.into(), 0.into()), "{report}");
    assert_eq!(env.json(&["sessions"]).as_array().unwrap().len(), 1);

    // The same session's second file, named late too: its placeholder goes into the session.
    std::fs::write(
        project.join("t.jsonl"),
        format!("{skipped}\n{}\n", line("big-1", "u3", "a second file")),
    )
    .unwrap();
    let report = env.json(&["sync"]);
    assert_eq!(counts(&report), (0.into(), 0.into(), 1.into()), "{report}");
    assert_eq!(env.json(&["sessions"]).as_array().unwrap().len(), 1);
}

/// A sync that finds another process holding the capture lock (a `cairn sync` stopped with
/// Ctrl-Z, the app's live capture) says it waits and for what, then goes on once it is let go:
/// it waited in silence, the bar at 0 B and "0s left".
#[test]
fn a_sync_waiting_for_the_capture_lock_says_so() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let project = env.claude().join("-p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("w.jsonl"),
        line("waits-1", "u1", "a new session") + "\n",
    )
    .unwrap();
    let lock = std::fs::File::options()
        .write(true)
        .open(env.data().join("capture.lock"))
        .unwrap();
    lock.lock().unwrap();
    let child = env
        .command()
        .args(["--json", "sync"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Held long enough for the sync to read the new file and reach its commit.
    std::thread::sleep(std::time::Duration::from_secs(2));
    lock.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Waiting for another Cairn capture to finish")
            && stderr.contains("capture.lock"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["sessions_added"], 1, "{report}");
}
