//! `cairn forget`: a planted marker is nowhere under the data dir afterwards, Recall entries
//! citing only forgotten evidence go back to the inbox, a tombstone stops the next sync, and a
//! forget killed at any point leaves a consistent archive that a rerun finishes.

use std::path::Path;
use std::process::Stdio;

use serde_json::json;

use crate::support::{Env, run_while_locked};

const MARKER: &str = "zebrafjordquux7781";
const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";

/// A Claude session whose prompt, reply, command and output all carry [`MARKER`].
fn plant(env: &Env, id: &str) {
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value| {
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": id,
               "timestamp": "2026-03-01T10:00:00Z", "cwd": "/home/USER/projects/secretproj", "gitBranch": "master",
               "isSidechain": false, "userType": "external",
               "message": {"role": kind, "content": content}})
        .to_string()
    };
    let lines = [
        line(
            "u1",
            None,
            "user",
            json!(format!("remember {MARKER} please")),
        ),
        line(
            "a1",
            Some("u1"),
            "assistant",
            json!([{"type": "text", "text": format!("Noted {MARKER}.")},
                   {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": format!("echo {MARKER}")}}]),
        ),
        line(
            "r1",
            Some("a1"),
            "user",
            json!([{"type": "tool_result", "tool_use_id": "t1", "content": format!("{MARKER}\n")}]),
        ),
    ];
    let dir = env.claude().join("-home-USER-projects-secretproj");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{id}.jsonl")), lines.join("\n") + "\n").unwrap();
}

/// Every file under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Files under `dir` whose raw bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    files_under(dir)
        .into_iter()
        .filter(|p| {
            std::fs::read(p)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle)
        })
        .map(|p| p.display().to_string())
        .collect()
}

fn retained_files(data: &Path) -> usize {
    files_under(&data.join("retained")).len()
}

fn import_entry(env: &Env, id: &str, session: &str, title: &str) {
    let entry = json!({"candidate_id": id, "session_id": session, "type": "fact", "scope": "project",
        "title": title, "body": format!("{title}, from the transcript"),
        "transferable": true, "provenance_ok": true, "label": "correct",
        "evidence": {"ordinal_start": 0, "ordinal_end": 1, "snippets": ["remember"]}});
    let file = env.root.path().join(format!("{id}.jsonl"));
    std::fs::write(&file, format!("{entry}\n")).unwrap();
    env.ok(&["recall", "import", file.to_str().unwrap(), "--yes"]);
}

#[test]
fn a_forgotten_session_leaves_no_byte_under_the_data_dir() {
    let env = Env::new().with_fixtures();
    plant(&env, "marked-session");
    env.ok(&["sync"]);
    import_entry(&env, "m1", "marked-session", "Marker fact");
    import_entry(&env, "s1", SMALL, "Phoenix fact");
    // A rejected entry citing the session stays archived: the list must not promise the inbox.
    import_entry(&env, "r1", "marked-session", "Rejected fact");
    let rejected = env.json(&["recall", "list", "--limit", "50"]);
    let rejected_id = rejected
        .as_array()
        .or_else(|| rejected["entries"].as_array())
        .unwrap()
        .iter()
        .find(|e| e["title"] == "Rejected fact")
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .unwrap();
    env.ok(&["recall", "review", "--reject", &rejected_id]);
    // The marker is there to find before (the test can fail).
    assert!(!files_containing(&env.data(), MARKER.as_bytes()).is_empty());
    let retained_before = retained_files(&env.data());
    let sessions_before = env.json(&["sessions"]).as_array().unwrap().len();

    // Without --yes (and no terminal) nothing goes, and the list says what would.
    let out = env.run(&["forget", "marked-session"]);
    assert_eq!(out.status.code(), Some(1));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("Would forget 1 session:"), "{listed}");
    // Named by its first request, as every view heads an untitled session.
    assert!(
        listed.contains(&format!("remember {MARKER} please")),
        "{listed}"
    );
    assert!(!listed.contains("(no prompt)"), "{listed}");
    assert!(
        listed.contains("3 records") || listed.contains("4 records"),
        "{listed}"
    );
    assert!(
        listed.contains("Marker fact (accepted before: back to the inbox, unreviewed)"),
        "{listed}"
    );
    assert!(
        listed.contains("Rejected fact (rejected: stays archived)"),
        "{listed}"
    );
    assert!(
        listed.contains("Recall: 2 evidence links revoked in 2 entries:"),
        "{listed}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert!(!files_containing(&env.data(), MARKER.as_bytes()).is_empty());

    // Nothing matching and something removed read alike: `removed` is the plan either way.
    let none = env.json(&["forget", "--before", "2000-01-01"]);
    assert_eq!(none["removed"]["sessions"], serde_json::json!([]));
    assert_eq!(
        (&none["sessions"], &none["retained_files_deleted"]),
        (&0.into(), &0.into())
    );
    let done = env.json(&["forget", "marked-session", "--yes"]);
    assert_eq!(done["sessions"], 1);
    assert_eq!(done["retained_files_deleted"], 1);
    assert_eq!(done["removed"]["recall_evidence"], 2);
    assert_eq!(done["removed"]["sessions"].as_array().unwrap().len(), 1);
    assert!(
        done["db_bytes_after"].as_u64().unwrap() > 0,
        "a count: {done}"
    );
    assert_eq!(
        files_containing(&env.data(), MARKER.as_bytes()),
        Vec::<String>::new(),
        "the marker survived the forget"
    );
    assert_eq!(retained_files(&env.data()), retained_before - 1);
    assert_eq!(
        env.json(&["sessions"]).as_array().unwrap().len(),
        sessions_before - 1
    );

    // The entry that cited only the forgotten session is unreviewed again, its evidence gone;
    // the other keeps its evidence and state.
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let state = |title: &str| -> (String, i64, Option<String>) {
        db.query_row(
            "SELECT e.review_state, (SELECT COUNT(*) FROM recall_evidence v WHERE v.entry_id = e.id), e.provenance_note
             FROM recall_entries e WHERE e.title = ?1",
            [title],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    let (review, evidence, note) = state("Marker fact");
    assert_eq!((review.as_str(), evidence), ("unreviewed_auto", 0));
    assert!(note.unwrap().contains("evidence revoked"));
    let (_, evidence, _) = state("Phoenix fact");
    assert_eq!(evidence, 1);
    let status: String = db
        .query_row(
            "SELECT status FROM recall_entries WHERE title = 'Rejected fact'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(status, "archived");
    // Taking the rejection back needs evidence that still holds: none is left.
    drop(db);
    let out = env.run(&["recall", "review", "--accept", &rejected_id]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no evidence is left"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let (status, provenance): (String, bool) = db
        .query_row(
            "SELECT status, provenance_ok FROM recall_entries WHERE title = 'Rejected fact'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((status.as_str(), provenance), ("archived", false));
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    drop(db);

    // The tombstone holds: the transcript is still on disk, and sync does not bring it back;
    // it says it passed a forgotten file over.
    let synced = env.ok(&["sync"]);
    assert!(
        synced.contains("(1 forgotten file passed over)"),
        "{synced}"
    );
    assert_eq!(env.json(&["sync"])["forgotten_skipped"], 1);
    assert!(env.run(&["show", "marked-session"]).status.code() == Some(1));
    // The session is forgotten, not only its path: its transcript moved (Codex archives a
    // chat; a folder becomes a link to another) is not imported again, nor read at the sync
    // after.
    let dir = env.claude().join("-home-USER-projects-secretproj");
    let moved = env.claude().join("-home-USER-projects-moved");
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::rename(
        dir.join("marked-session.jsonl"),
        moved.join("marked-session.jsonl"),
    )
    .unwrap();
    env.ok(&["sync"]);
    assert!(env.run(&["show", "marked-session"]).status.code() == Some(1));
    assert!(files_containing(&env.data(), MARKER.as_bytes()).is_empty());
    assert_eq!(env.json(&["sync"])["forgotten_skipped"], 1);
    // Nor when the file is first read before it names its session (a summary line first, the
    // rest caught later, as a copy being written is): the session read by its path so far
    // goes the way of the forgotten one.
    let lines = std::fs::read_to_string(moved.join("marked-session.jsonl")).unwrap();
    let copy = env.claude().join("-home-USER-projects-copy");
    std::fs::create_dir_all(&copy).unwrap();
    let summary = "{\"type\":\"summary\",\"summary\":\"notes\",\"leafUuid\":\"u1\"}\n";
    std::fs::write(copy.join("marked-session.jsonl"), summary).unwrap();
    env.ok(&["sync"]);
    std::fs::write(
        copy.join("marked-session.jsonl"),
        format!("{summary}{lines}"),
    )
    .unwrap();
    env.ok(&["sync"]);
    assert!(env.run(&["show", "marked-session"]).status.code() == Some(1));
    assert!(
        String::from_utf8_lossy(&env.run(&["search", MARKER]).stdout).contains("No matches"),
        "the forgotten text is searchable again"
    );
    // Until the person allows it: forget again with --allow-reimport lifts it for that file.
    plant(&env, "second-marked");
    env.ok(&["sync"]);
    let forgot = env.ok(&["forget", "second-marked", "--yes", "--allow-reimport"]);
    // Done, not proposed: no "Would forget" once it is gone.
    assert!(forgot.starts_with("Removed 1 session:"), "{forgot}");
    assert!(!forgot.contains("Would forget"), "{forgot}");
    env.ok(&["sync"]);
    assert!(env.run(&["show", "second-marked"]).status.success());
}

#[test]
fn forget_needs_a_selector_and_refuses_bad_dates() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    // Nothing named: a usage error, which lists what may name it.
    let out = env.run(&["forget", "--yes"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--project") && err.contains("--before") && err.contains("<SESSION|"),
        "{err}"
    );
    let out = env.run(&["forget", "--before", "last tuesday\u{1b}[31m", "--yes"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a date"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
    // By agent and date: Codex sessions before 2026 (one of the two fixtures).
    let plan = env.run(&[
        "--json",
        "forget",
        "--agent",
        "codex",
        "--before",
        "2026-01-01",
    ]);
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let sessions = plan["would_remove"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["agent"], "codex");
    // A sub-agent goes with its parent.
    let plan = env.run(&["--json", "forget", "ae4a77f8-aedd-4bc1-888f-c94edc91af04"]);
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(
        plan["would_remove"]["sessions"].as_array().unwrap().len(),
        3
    );
    // Without --yes a listing exits 1 (nothing was removed); --dry-run is a listing that
    // succeeds, and removes nothing either.
    let before = env.json(&["sessions"]).as_array().unwrap().len();
    let dry = env.run(&[
        "--json",
        "forget",
        "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
        "--dry-run",
    ]);
    assert!(dry.status.success(), "{dry:?}");
    let dry: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(dry["would_remove"], plan["would_remove"]);
    // The counts CLI.md names for forget's JSON, as a forget done has them.
    assert_eq!(
        (
            dry["dry_run"].as_bool(),
            dry["sessions"].as_u64(),
            dry["records"].as_u64()
        ),
        (
            Some(true),
            Some(plan["would_remove"]["sessions"].as_array().unwrap().len() as u64),
            plan["would_remove"]["records"].as_u64()
        )
    );
    assert_eq!(env.json(&["sessions"]).as_array().unwrap().len(), before);
    let text = env.run(&["forget", "--project", "no-such-project", "--dry-run"]);
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("nothing to forget"));
    assert!(
        !env.run(&["forget", "--yes", "--dry-run", "--agent", "codex"])
            .status
            .success()
    );
}

/// A forget killed at any moment leaves a consistent archive: every session of the project
/// is there whole or gone whole, and a rerun finishes the job.
#[test]
fn a_forget_killed_at_random_points_leaves_a_consistent_archive() {
    let env = Env::new();
    env.with_big_sessions(4);
    env.ok(&["sync"]);
    let project = env.json(&["sessions"])[0]["project"]
        .as_str()
        .unwrap()
        .to_owned();
    let counts = |env: &Env| -> (i64, i64, i64) {
        let db = env.whole_db();
        let n = |sql: &str| db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
        // No orphan: every record's session and every FTS row's record exist.
        assert_eq!(
            n(
                "SELECT COUNT(*) FROM records r WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = r.session_id)"
            ),
            0
        );
        (
            n("SELECT COUNT(*) FROM sessions"),
            n("SELECT COUNT(*) FROM records"),
            n("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH 'bead'"),
        )
    };
    let before = counts(&env);
    assert!(before.0 >= 4 && before.2 > 0);
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut kills = 0;
    for _ in 0..12 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = std::time::Duration::from_millis(seed % 400);
        let mut child = env
            .command()
            .args(["forget", "--project", &project, "--yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
        let now = counts(&env);
        // All or nothing: either everything is still there, or the project is gone whole.
        assert!(
            now == before || now.0 < before.0 && now.2 == 0,
            "{now:?} vs {before:?}"
        );
        if now != before {
            break;
        }
    }
    eprintln!("{kills} forget runs were interrupted");
    // A rerun (or the first complete run) leaves nothing of the project, and no retained copy
    // of a tombstoned file survives even if a kill came after the commit.
    env.ok(&["forget", "--project", &project, "--yes"]);
    let after = counts(&env);
    assert_eq!(after.2, 0);
    assert_eq!(retained_files(&env.data()), 0);
}

/// A forget by the agent's session id keeps another session that carries the same id (an ATIF
/// import of it), and says which, so the person can forget that one too.
#[test]
fn a_forget_by_id_names_the_other_sessions_with_that_id() {
    let env = crate::export::synced();
    let file = env.root.path().join("small.atif.json");
    crate::export::export(
        &env,
        &[
            crate::export::SMALL,
            "--format",
            "atif",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    let imported = env.json(&["import", file.to_str().unwrap()]);
    let copy = imported["session_key"].as_str().unwrap().to_owned();
    let listed = String::from_utf8(
        env.run(&["forget", crate::export::SMALL, "--dry-run"])
            .stdout,
    )
    .unwrap();
    assert!(
        listed.contains("Kept: 1 other session with the same session id") && listed.contains(&copy),
        "{listed}"
    );
    let plan = env.json(&["forget", crate::export::SMALL, "--dry-run"]);
    assert_eq!(
        plan["would_remove"]["same_id_kept"],
        json!([copy]),
        "{plan}"
    );
    // The copy's forget, by its key, names the captured session it came from.
    let plan = env.json(&["forget", &copy, "--dry-run"]);
    let kept = plan["would_remove"]["same_id_kept"].as_array().unwrap();
    assert_eq!(kept.len(), 1, "{plan}");
    assert_ne!(kept[0], json!(copy));

    // Sub-agents share their parent's id and go with it: never named as copies, on either side.
    let parent = crate::export::WITH_SUBAGENT;
    let file = env.root.path().join("parent.atif.json");
    crate::export::export(
        &env,
        &[parent, "--format", "atif", "-o", file.to_str().unwrap()],
    );
    let import = env.json(&["import", file.to_str().unwrap()]);
    let import_key = import["session_key"].as_str().unwrap().to_owned();
    assert!(
        !import["subagents"].as_array().unwrap().is_empty(),
        "{import}"
    );
    let plan = env.json(&["forget", parent, "--dry-run"]);
    assert_eq!(
        plan["would_remove"]["same_id_kept"],
        json!([import_key]),
        "{plan}"
    );
    let sub: String = rusqlite::Connection::open(env.data().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT c.session_key FROM sessions c JOIN sessions p ON p.session_key = c.parent_key
             WHERE c.relation = 'subagent' AND p.session_id = ?1 AND p.agent = 'claude'",
            [parent],
            |r| r.get(0),
        )
        .unwrap();
    let plan = env.json(&["forget", &sub, "--dry-run"]);
    assert_eq!(plan["would_remove"]["same_id_kept"], json!([]), "{plan}");
}

/// A forget is undone as far as the agents still keep the transcripts: `--lift` takes the
/// tombstones away (listed and asked first, like a forget), and the next sync imports the
/// sessions again; filtered by agent and by when they were laid.
#[test]
fn a_lifted_forget_lets_the_next_sync_import_the_sessions_again() {
    let env = Env::new().with_fixtures();
    plant(&env, "marked-session");
    env.ok(&["sync"]);
    let sessions_before = env
        .json(&["sessions", "--limit", "500"])
        .as_array()
        .unwrap()
        .len();
    env.ok(&["forget", "marked-session", "--yes"]);
    env.ok(&["forget", "--agent", "codex", "--yes"]);
    let forgotten = env
        .json(&["sessions", "--limit", "500"])
        .as_array()
        .unwrap()
        .len();
    assert!(
        forgotten < sessions_before - 1,
        "{forgotten} of {sessions_before}"
    );
    env.ok(&["sync"]);
    assert_eq!(
        env.json(&["sessions", "--limit", "500"])
            .as_array()
            .unwrap()
            .len(),
        forgotten,
        "the tombstones hold before a lift"
    );

    // Not asked in a terminal: nothing lifted, the listing says what would be.
    let out = env.run(&["forget", "--lift", "--agent", "claude"]);
    assert_eq!(out.status.code(), Some(1));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("Would lift the tombstones of 1 forgotten session and 1 transcript file"),
        "{listed}"
    );
    let dry = env.json(&["forget", "--lift", "--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    assert!(dry["lifted"]["sessions"].as_u64().unwrap() > 1, "{dry}");
    // A time to the second takes in the tombstones laid within that second (they are stored to
    // the millisecond, which sorted them before it).
    let laid: String = rusqlite::Connection::open(env.data().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT MAX(forgotten_at) FROM forgotten_sessions",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let second = format!("{}Z", &laid[..19]);
    let within = env.json(&["forget", "--lift", "--since", &second, "--dry-run"]);
    assert!(
        within["lifted"]["sessions"].as_u64().unwrap() >= 1,
        "{laid} {within}"
    );
    // Tombstones laid from tomorrow on: none.
    let later = env.json(&["forget", "--lift", "--since", "2999-01-01", "--yes"]);
    assert_eq!(later["lifted"]["sessions"], 0, "{later}");

    // Claude's only: the Codex sessions stay forgotten through the next sync.
    let lifted = env.json(&["forget", "--lift", "--agent", "claude", "--yes"]);
    assert_eq!(lifted["lifted"]["sessions"], 1, "{lifted}");
    assert_eq!(lifted["lifted"]["files"], 1, "{lifted}");
    env.ok(&["sync"]);
    let now = env.json(&["sessions", "--limit", "500"]);
    assert_eq!(now.as_array().unwrap().len(), forgotten + 1);
    assert!(env.ok(&["show", "marked-session"]).contains(MARKER));
    assert!(
        !now.as_array()
            .unwrap()
            .iter()
            .any(|s| s["agent"] == "codex"),
        "{now}"
    );

    // Every other tombstone: the Codex sessions come back too.
    env.ok(&["forget", "--lift", "--yes"]);
    env.ok(&["sync"]);
    assert_eq!(
        env.json(&["sessions", "--limit", "500"])
            .as_array()
            .unwrap()
            .len(),
        sessions_before
    );
    assert_eq!(
        env.ok(&["forget", "--lift", "--yes"]).trim(),
        "Lifted the tombstones of 0 forgotten sessions and 0 transcript files: the next `cairn sync` imports them again where the agent still keeps the transcripts."
    );

    // A lift is a choice of what to lift: it takes no session, project or day of activity.
    let refused = env.run(&["forget", "--lift", "marked-session"]);
    assert_eq!(refused.status.code(), Some(2));
}

/// A forget that finds the capture lock held (a rebuild from the copies holds it for as long
/// as it runs) says on stderr that it waits, before it waits, then forgets once the lock is
/// let go. Before, it took no lock and went ahead in a database a rebuild could then replace.
#[test]
fn a_forget_says_it_waits_for_the_capture_lock() {
    let env = Env::new();
    plant(&env, "waited-session");
    env.ok(&["sync"]);
    let (line, out) = run_while_locked(&env, &["forget", "waited-session", "--yes"]);
    assert!(
        line.starts_with("Waiting for another Cairn process to let go of the archive"),
        "{line}"
    );
    assert!(line.contains("capture.lock"), "{line}");
    assert!(
        line.trim_end().ends_with("the forget runs once it does."),
        "{line}"
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Forgot 1 session"),
        "{out:?}"
    );
    assert_eq!(
        env.json(&["sessions"]).as_array().unwrap().len(),
        0,
        "the session is still listed"
    );
}
