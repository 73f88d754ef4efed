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

/// A transcript that holds no record Cairn reads (a Qwen chat of `{}` alone, a Claude file of
/// a summary line alone) makes no session a list shows: the sync counts no new session for it
/// and names the file instead, once; the lists and the agent counts agree with it.
#[test]
fn a_file_with_nothing_to_read_is_named_not_counted() {
    let env = Env::new();
    let qwen = env.home().join(".qwen/projects/p/chats");
    std::fs::create_dir_all(&qwen).unwrap();
    std::fs::write(qwen.join("x.jsonl"), "{}\n").unwrap();
    let project = env.claude().join("-p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("s.jsonl"),
        "{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u0\"}\n",
    )
    .unwrap();

    let report = env.json(&["sync"]);
    assert_eq!(report["sessions_added"], 0, "{report}");
    assert_eq!(report["subagents_added"], 0, "{report}");
    let named: Vec<&str> = report["nothing_to_read"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(named.len(), 2, "{report}");
    assert!(
        named[0].ends_with("s.jsonl") && named[1].ends_with("x.jsonl"),
        "{report}"
    );
    assert_eq!(report["agents"], serde_json::json!([]), "{report}");
    assert_eq!(env.json(&["sessions"]), serde_json::json!([]));

    // Read once: the next sync has nothing new to say of them.
    let again = env.json(&["sync"]);
    assert_eq!(again["nothing_to_read"], serde_json::json!([]), "{again}");

    // A person's summary names the file.
    let other = env.home().join(".qwen/projects/q/chats");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("y.jsonl"), "{}\n").unwrap();
    let said = env.ok(&["sync"]);
    assert!(
        said.starts_with("Scanned 3 files: 0 new sessions,"),
        "{said}"
    );
    assert!(
        said.contains("Nothing to read in ") && said.contains("q/chats/y.jsonl"),
        "{said}"
    );
}

/// A sync's counts by agent: one object per agent it changed, summing to the totals, and one
/// short line each in the summary; a sync that changes nothing has none.
#[test]
fn a_sync_counts_by_agent() {
    let env = Env::new().with_fixtures();
    let report = env.json(&["sync"]);
    let agents = report["agents"].as_array().unwrap();
    let names: Vec<&str> = agents
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["claude", "codex"], "{report}");
    for field in [
        "sessions_added",
        "subagents_added",
        "sessions_updated",
        "records_added",
        "records_updated",
    ] {
        let sum: u64 = agents.iter().map(|a| a[field].as_u64().unwrap()).sum();
        assert_eq!(Some(sum), report[field].as_u64(), "{field}: {report}");
    }
    assert!(agents.iter().all(|a| a["records_added"].as_u64() > Some(0)));

    let quiet = env.ok(&["sync"]);
    assert_eq!(quiet.lines().count(), 1, "{quiet}");

    // One more Claude session: its line alone.
    let project = env.claude().join("-p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("n.jsonl"),
        line("new-1", "u1", "one more") + "\n",
    )
    .unwrap();
    let said = env.ok(&["sync"]);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(
        lines[1], "  claude: 1 new session, 1 record added",
        "{said}"
    );
    assert!(!said.contains("  codex:"), "{said}");
}

/// Doctor's line for each source dir says how many transcript files it holds, found as a
/// sync finds them: the Claude and Codex folders' counts add up to what the first sync scans.
#[test]
fn doctor_counts_the_transcripts_of_each_source_dir() {
    let env = Env::new().with_fixtures();
    let doctor = env.json(&["doctor"]);
    let seen = |name: &str| -> u64 {
        let check = crate::support::check(&doctor, name);
        let detail = check["detail"].as_str().unwrap();
        let (_, tail) = detail.rsplit_once(": ").unwrap();
        tail.split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{detail}"))
    };
    let (claude, codex) = (seen("claude source dir"), seen("codex source dir"));
    assert!(claude > 0 && codex > 0, "{doctor}");
    let report = env.json(&["sync"]);
    assert_eq!(
        Some(claude + codex),
        report["files_scanned"].as_u64(),
        "{report}"
    );
}
