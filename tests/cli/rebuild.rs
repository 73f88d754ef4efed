//! `cairn reindex --from-copies`: a damaged `cairn.db` rebuilt from the retained copies of
//! every read kind (Claude's and Codex's lines, Gemini's documents, OpenCode's tree, Crush's
//! database), the sessions and what `show` says of them as they were, the transcript an agent
//! deleted back, a forgotten session still forgotten, a sync afterwards adding nothing; doctor
//! sends a person there; a healthy archive is rebuilt only with --force; a rebuild stopped at
//! any point leaves the old database in place or the new one whole; what it says is clean.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::harden::kill_after;
use crate::support::{Env, copy_all, fixtures, succeeded};

/// The transcript sources beside Claude's and Codex's: Gemini's documents, OpenCode's storage
/// tree and a Crush database (found through `config.toml`).
fn with_more_agents(env: &Env) {
    let root = env.root.path();
    copy_all(&fixtures().join("gemini"), &root.join("gemini/tmp"));
    copy_all(&fixtures().join("opencode/legacy"), &root.join("opencode"));
    copy_all(&fixtures().join("crush"), &root.join("crush"));
    std::fs::write(
        env.data().join("config.toml"),
        format!("[sources.crush]\ndirs = [{:?}]\n", root.join("crush")),
    )
    .unwrap();
}

fn command(env: &Env) -> Command {
    let root = env.root.path();
    let mut cmd = env.command();
    cmd.env("GEMINI_DIR", root.join("gemini"))
        .env("OPENCODE_DATA_DIR", root.join("opencode"));
    cmd
}

fn run(env: &Env, args: &[&str]) -> Output {
    command(env).args(args).output().unwrap()
}

fn ok(env: &Env, args: &[&str]) -> String {
    succeeded(run(env, args), &format!("cairn {args:?}"))
}

fn json(env: &Env, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(env, &all)).unwrap()
}

/// Every session as `cairn sessions` lists it, and what `show` says of each.
fn archive_of(env: &Env) -> (serde_json::Value, Vec<serde_json::Value>) {
    let sessions = json(env, &["sessions", "--limit", "500"]);
    let shown = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| json(env, &["show", s["session_key"].as_str().unwrap()]))
        .collect();
    (sessions, shown)
}

/// What a failing disk does: 20 KB of a page run overwritten, past the header.
fn damage(db: &Path) {
    let mut bytes = std::fs::read(db).unwrap();
    assert!(bytes.len() > 8192 + 20 * 1024, "{} bytes", bytes.len());
    for (i, b) in bytes[8192..8192 + 20 * 1024].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37) ^ 0xA5;
    }
    std::fs::write(db, &bytes).unwrap();
}

/// The files directly in the data dir whose names start with `prefix`.
fn named(env: &Env, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(env.data())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    found.sort();
    found
}

const DELETED: &str = "-home-USER-projects-spotter/short.jsonl";

#[test]
fn a_damaged_archive_is_rebuilt_from_the_copies_as_it_was() {
    let env = Env::new().with_fixtures();
    with_more_agents(&env);
    ok(&env, &["sync"]);
    let before = archive_of(&env);
    let agents: std::collections::BTreeSet<&str> = before
        .0
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent"].as_str().unwrap())
        .collect();
    for agent in ["claude", "codex", "gemini", "opencode", "crush"] {
        assert!(agents.contains(agent), "no {agent} session: {agents:?}");
    }
    // The same transcripts synced into a clean data dir: what a sync after the rebuild must
    // match.
    let clean = Env::new();
    std::fs::remove_dir_all(clean.data()).unwrap();
    let mut sync = command(&env);
    sync.env("CAIRN_DATA_DIR", clean.data()).arg("sync");
    std::fs::create_dir_all(clean.data()).unwrap();
    std::fs::copy(
        env.data().join("config.toml"),
        clean.data().join("config.toml"),
    )
    .unwrap();
    succeeded(sync.output().unwrap(), "a clean sync");

    let db = env.data().join("cairn.db");
    damage(&db);
    let doctor = run(&env, &["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    let line = text.lines().find(|l| l.contains(" archive ")).unwrap();
    assert!(line.starts_with("FAIL"), "{line}");
    let first = line.find("cairn reindex --from-copies").expect(line);
    assert!(first < line.find(".recover").unwrap(), "{line}");
    // The agent cleaned a transcript up: its copy is all that is left of it.
    std::fs::remove_file(env.claude().join(DELETED)).unwrap();
    let damaged = std::fs::read(&db).unwrap();

    let report = json(&env, &["reindex", "--from-copies"]);
    for field in [
        "database",
        "moved_aside",
        "sessions",
        "sources",
        "records",
        "turns",
        "forgotten",
        "copy_lines_to_redact",
        "carried",
        "not_carried",
        "skipped",
        "torn",
    ] {
        assert!(report.get(field).is_some(), "no {field} in {report}");
    }
    assert_eq!(report["skipped"], serde_json::json!([]), "{report}");
    let aside = report["moved_aside"][0].as_str().unwrap();
    assert!(aside.contains("cairn.db.damaged-"), "{report}");
    assert_eq!(
        std::fs::read(aside).unwrap(),
        damaged,
        "the old database was changed"
    );
    let tombstones = &report["carried"][0];
    assert!(tombstones["error"].is_null(), "{report}");

    assert_eq!(archive_of(&env), before);
    env.whole_db();
    let again = json(&env, &["sync"]);
    assert_eq!(again["records_added"], 0, "{again}");
    assert_eq!(again["sessions_added"], 0, "{again}");
    assert_eq!(archive_of(&env), before);
    let mut listed = command(&env);
    listed
        .env("CAIRN_DATA_DIR", clean.data())
        .args(["--json", "sessions", "--limit", "500"]);
    let clean_sessions: serde_json::Value =
        serde_json::from_str(&succeeded(listed.output().unwrap(), "clean sessions")).unwrap();
    assert_eq!(before.0, clean_sessions);
}

#[test]
fn a_forgotten_session_stays_forgotten_through_a_rebuild_and_a_sync() {
    let env = Env::new().with_fixtures();
    ok(&env, &["sync"]);
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    ok(&env, &["forget", id, "--yes"]);
    let listed = |env: &Env| {
        json(env, &["sessions", "--limit", "500"])
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["session_id"] == id)
    };
    assert!(!listed(&env));
    damage(&env.data().join("cairn.db"));
    let report = json(&env, &["reindex", "--from-copies"]);
    assert!(!listed(&env), "{report}");
    // Its transcript is still on disk: the carried tombstone keeps the sync off it.
    assert!(
        env.claude()
            .join("-home-USER-projects-spotter")
            .join(format!("{id}.jsonl"))
            .exists()
    );
    let sync = json(&env, &["sync"]);
    assert!(!listed(&env), "{sync}");
    assert!(sync["forgotten_skipped"].as_u64().unwrap() >= 1, "{sync}");
}

/// A healthy archive is not rebuilt unless asked to: without a terminal (or with --json) the
/// command says it is healthy, what a rebuild would do and how to run it anyway, and changes
/// nothing; with --force it rebuilds.
#[test]
fn a_healthy_archive_is_rebuilt_only_with_force() {
    let env = Env::new().with_fixtures();
    ok(&env, &["sync"]);
    let db = env.data().join("cairn.db");
    let old = std::fs::read(&db).unwrap();
    for args in [
        &["reindex", "--from-copies"][..],
        &["--json", "reindex", "--from-copies"][..],
    ] {
        let out = command(&env)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}: not refused");
        let said = String::from_utf8_lossy(&out.stderr);
        for want in [
            "is healthy",
            "moves this one aside",
            "--from-copies --force",
        ] {
            assert!(said.contains(want), "{args:?}: no {want:?} in {said}");
        }
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(std::fs::read(&db).unwrap(), old, "{args:?}");
        assert!(named(&env, "cairn.db.damaged-").is_empty(), "{args:?}");
    }
    let report = json(&env, &["reindex", "--from-copies", "--force"]);
    assert!(
        report["moved_aside"][0]
            .as_str()
            .unwrap()
            .contains("cairn.db.damaged-"),
        "{report}"
    );
}

/// A rebuild stopped at a point (a test hook aborts the process there): before the new
/// database is whole, the old one is in place as it was and works; once the old one's names
/// are aside, the next command finishes putting the new one in place. A second rebuild then
/// succeeds.
#[test]
fn a_rebuild_stopped_anywhere_leaves_the_old_archive_or_the_new() {
    let env = Env::new().with_fixtures();
    ok(&env, &["sync"]);
    let before = archive_of(&env);
    let db = env.data().join("cairn.db");
    // Stopped before the swap: the old database in place, as it was (at "aside" it has names
    // aside too, which the next rebuild takes back).
    for stage in ["session", "rebuilt", "aside"] {
        let old = std::fs::read(&db).unwrap();
        let out = command(&env)
            .env("CAIRN_TEST_STOP_REBUILD", stage)
            .args(["reindex", "--from-copies", "--force"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{stage}: not stopped");
        assert_eq!(std::fs::read(&db).unwrap(), old, "{stage}");
        assert_eq!(archive_of(&env), before, "{stage}");
    }
    let out = command(&env)
        .env("CAIRN_TEST_STOP_REBUILD", "swap")
        .args(["reindex", "--from-copies", "--force"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "not stopped");
    assert!(env.data().join("cairn.db.swap").exists());
    // The next open finishes the swap (the relink the rebuild did not get to is the next
    // sync's).
    assert_eq!(json(&env, &["sessions", "--limit", "500"]), before.0);
    assert!(!env.data().join("cairn.db.swap").exists());
    ok(&env, &["sync"]);
    assert_eq!(archive_of(&env), before);
    assert!(!env.data().join("cairn.db.rebuilt").exists());

    let report = json(&env, &["reindex", "--from-copies", "--force"]);
    assert!(report["skipped"].as_array().unwrap().is_empty(), "{report}");
    assert_eq!(archive_of(&env), before);
    assert!(!env.data().join("cairn.db.rebuilding").exists());
    // One old database aside per swap: the names the stop at "aside" gave were taken back.
    let asides: Vec<PathBuf> = named(&env, "cairn.db.damaged-")
        .into_iter()
        .filter(|p| {
            !p.to_string_lossy().ends_with("-wal") && !p.to_string_lossy().ends_with("-shm")
        })
        .collect();
    assert_eq!(asides.len(), 2, "{asides:?}");
}

/// Killed with SIGKILL at random points of a rebuild over long sessions: the data dir holds
/// the old archive or the new one, never neither; the next rebuild succeeds.
#[test]
fn a_rebuild_killed_leaves_a_working_archive() {
    let env = Env::new();
    env.with_big_sessions(6);
    env.ok(&["sync"]);
    let sessions = json(&env, &["sessions", "--limit", "500"]);
    let started = std::time::Instant::now();
    ok(&env, &["reindex", "--from-copies", "--force"]);
    let clean_run = started.elapsed();
    let mut rng = crate::harden::Rng(0x5EED_0048);
    for round in 0..crate::harden::rounds(4) {
        let delay = Duration::from_micros(rng.next() % (clean_run.as_micros() as u64 + 1));
        let child = command(&env)
            .args(["reindex", "--from-copies", "--force"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        kill_after(child, delay);
        assert_eq!(
            json(&env, &["sessions", "--limit", "500"]),
            sessions,
            "round {round}, killed after {delay:?}"
        );
    }
    ok(&env, &["reindex", "--from-copies", "--force"]);
    assert_eq!(json(&env, &["sessions", "--limit", "500"]), sessions);
    env.whole_db();
}

/// A manifest a program wrote with escape sequences in it, a copy named with one: each named,
/// passed over, and nothing printed carries the escape.
#[test]
fn what_a_rebuild_says_is_clean() {
    let env = Env::new().with_fixtures();
    ok(&env, &["sync"]);
    let dir = env.data().join("retained/claude");
    let copy = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    // The manifest opens the copy: a skippable frame of JSON.
    let bytes = std::fs::read(&copy).unwrap();
    let magic = 0x184D_2A5Du32.to_le_bytes();
    assert_eq!(bytes[..4], magic);
    let len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let mut v: serde_json::Value = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
    v["path"] = serde_json::json!("/tmp/\u{1b}]0;owned\u{7}\u{1b}[2J.jsonl");
    let payload = v.to_string();
    let mut hostile = magic.to_vec();
    hostile.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    hostile.extend_from_slice(payload.as_bytes());
    hostile.extend_from_slice(&bytes[8 + len..]);
    std::fs::write(&copy, hostile).unwrap();
    std::fs::write(dir.join("\u{1b}[31mred.g0.jsonl.zst"), b"x").unwrap();

    let out = run(&env, &["reindex", "--from-copies", "--force"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains("Not rebuilt (2):"), "{text}");
    assert!(text.contains("holds control characters"), "{text}");
    assert!(
        text.contains("/red.g0.jsonl.zst: no manifest in it"),
        "{text}"
    );
    assert!(
        text.contains("The old database was moved aside, not deleted: "),
        "{text}"
    );
}

/// Recall comes through a rebuild: the report names its rows under `recall`, each with its
/// count, as it names the other rooms', and `cairn recall list` answers as before, a
/// rejection and all.
#[test]
fn recall_is_carried_and_said_room_by_room() {
    let env = Env::new().with_fixtures();
    ok(&env, &["sync"]);
    let entries = fixtures().join("recall/entries.jsonl");
    ok(
        &env,
        &["recall", "import", entries.to_str().unwrap(), "--yes"],
    );
    ok(&env, &["recall", "review", "--reject", "beads-sync"]);
    let listed = |env: &Env| {
        ["accepted", "archived"].map(|status| {
            json(
                env,
                &["recall", "list", "--status", status, "--limit", "500"],
            )
        })
    };
    let before = listed(&env);
    assert!(before[1].to_string().contains("beads-sync"), "{before:?}");

    let out = run(&env, &["reindex", "--from-copies", "--force"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    for line in [
        "  recall: entries, with their reviews, edits, rejections and replacements: 26",
        "  recall: evidence (record ranges of the rebuilt sessions): 26",
        "  recall: the ledger's queries: 0",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
    }
    let said = text.split("Not carried over:").nth(1).unwrap_or_default();
    assert!(!said.contains("Recall"), "{text}");
    assert_eq!(listed(&env), before);
}

/// A rebuild killed while it made the new database leaves `cairn.db.rebuilding`: doctor names
/// it with the fix, and a forget says before it is confirmed that it deletes it, then does.
/// After a whole rebuild, a forget's list names the database set aside it removes the session
/// from too, or the one it cannot clean with the `rm` that deletes it.
#[test]
fn a_forget_lists_what_rebuilds_left_before_it_is_confirmed() {
    let env = Env::new().with_fixtures();
    ok(&env, &["sync"]);
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    let out = command(&env)
        .env("CAIRN_TEST_STOP_REBUILD", "session")
        .args(["reindex", "--from-copies", "--force"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "not stopped");
    let building = env.data().join("cairn.db.rebuilding");
    assert!(building.exists());
    let doctor = json(&env, &["doctor"]);
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "unfinished rebuild")
        .unwrap_or_else(|| panic!("{doctor}"));
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("rm -f '{}'", building.display())),
        "{detail}"
    );
    let listed = ok(&env, &["forget", id, "--dry-run"]);
    assert!(
        listed.contains(&format!(
            "Also deleted: {}, left by a rebuild from the copies that did not finish",
            building.display()
        )),
        "{listed}"
    );
    let planned = json(&env, &["forget", id, "--dry-run"]);
    assert_eq!(
        planned["would_remove"]["set_aside"][0]["fate"], "deleted",
        "{planned}"
    );
    assert!(building.exists(), "the list deleted it");

    // A whole rebuild sets the old database aside; the forget's list names it.
    ok(&env, &["reindex", "--from-copies", "--force"]);
    assert!(!building.exists());
    let aside = named(&env, "cairn.db.damaged-")
        .into_iter()
        .find(|p| {
            let p = p.to_string_lossy();
            !p.ends_with("-wal") && !p.ends_with("-shm")
        })
        .unwrap();
    let listed = ok(&env, &["forget", id, "--dry-run"]);
    assert!(
        listed.contains(&format!(
            "Also removed from 1 database a rebuild set aside: {}.",
            aside.display()
        )),
        "{listed}"
    );
    // One the forget may not write: named, with the command that deletes it.
    rusqlite::Connection::open(&aside)
        .unwrap()
        .execute_batch("PRAGMA user_version = 3")
        .unwrap();
    let listed = ok(&env, &["forget", id, "--dry-run"]);
    assert!(
        listed.contains("1 database a rebuild set aside cannot be cleaned of them")
            && listed.contains(&format!(
                "{} holds 1 session (its schema (version 3) is not the archive's",
                aside.display()
            ))
            && listed.contains(&format!("rm -f '{}'", aside.display())),
        "{listed}"
    );
}

/// The `rm` a forget's list gives for a database it cannot clean names that file, not the name
/// cleaned for the terminal: in a data dir named `da␛[31mta`, which cleans to the `data` beside
/// it, the words run by bash delete the set-aside database and its `-wal`, and a file of the
/// same name in `data` stays. The forget, done, gives the same words.
#[cfg(unix)]
#[test]
fn a_forgets_rm_line_names_the_file_whatever_its_folder_is_called() {
    let env = Env::new().with_fixtures();
    let data = env.root.path().join("da\u{1b}[31mta");
    let cairn = |args: &[&str]| {
        let out = command(&env)
            .env("CAIRN_DATA_DIR", &data)
            .args(args)
            .output()
            .unwrap();
        succeeded(out, &format!("cairn {args:?}"))
    };
    cairn(&["sync"]);
    cairn(&["reindex", "--from-copies", "--force"]);
    let aside = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("cairn.db.damaged-")
                && !name.ends_with("-wal")
                && !name.ends_with("-shm")
        })
        .unwrap();
    rusqlite::Connection::open(&aside)
        .unwrap()
        .execute_batch("PRAGMA user_version = 3")
        .unwrap();
    // Where the cleaned name points: another file, which must stay.
    let decoy = env.data().join(aside.file_name().unwrap());
    std::fs::write(&decoy, b"not the set-aside database").unwrap();

    let listed = cairn(&[
        "forget",
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
        "--dry-run",
    ]);
    assert!(
        listed.contains("cannot be cleaned of them") && !listed.contains('\u{1b}'),
        "{listed}"
    );
    let line = listed
        .lines()
        .find(|l| l.contains("rm -f"))
        .unwrap_or_else(|| panic!("{listed}"));
    let rm = &line[line.find("rm -f").unwrap()..];
    // The forget done says the same words of it.
    let done = cairn(&["forget", "1af7fc5e-8455-4414-9ccd-011d40f70b2a", "--yes"]);
    assert!(done.contains(rm) && !done.contains('\u{1b}'), "{done}");
    // A write-ahead log beside it, as a database set aside while in use keeps.
    let wal = PathBuf::from(format!("{}-wal", aside.display()));
    std::fs::write(&wal, b"").unwrap();
    let ran = Command::new("bash")
        .args(["-c", rm])
        .current_dir(env.root.path())
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    assert!(!aside.exists() && !wal.exists(), "{rm}");
    assert!(decoy.exists(), "{rm} deleted {}", decoy.display());
    assert!(data.join("cairn.db").exists());
    assert!(
        line.contains("in bash or zsh (its name holds characters a terminal does not show"),
        "{line}"
    );
}
