//! The archive is its owner's and `doctor` tells the truth about it (issue 14): what `cairn`
//! writes under the widest umask, and a database with corrupt pages.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::{Env, check};

/// `cairn args…` with `stdin`, under umask 000: nothing may owe its privacy to the umask.
fn under_umask_000(env: &Env, args: &[&str], stdin: &[u8]) -> Output {
    let plain = env.command();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("umask 000 && exec \"$0\" \"$@\"")
        .arg(plain.get_program())
        .args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in plain.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "cairn {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `(path relative to dir, mode, is_dir)` of everything under `dir`, itself included.
fn modes(dir: &Path) -> Vec<(String, u32, bool)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
        let rel = p.strip_prefix(dir).unwrap().display().to_string();
        out.push((rel, meta.permissions().mode() & 0o7777, meta.is_dir()));
    }
    out.sort();
    out
}

#[test]
fn a_fresh_data_dir_is_private_under_any_umask() {
    let env = Env::new().with_fixtures();
    std::fs::remove_dir(env.data()).unwrap();
    under_umask_000(&env, &["sync"], b"");
    let transcript = env
        .claude()
        .join("-home-USER-projects-spotter/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let payload = json!({"transcript_path": transcript, "cwd": env.root.path()}).to_string();
    under_umask_000(&env, &["hook", "--agent", "claude"], payload.as_bytes());
    let listed = modes(&env.data());
    let names: Vec<&str> = listed.iter().map(|(n, _, _)| n.as_str()).collect();
    for expected in [
        "",
        "cairn.db",
        "capture.lock",
        "retained",
        "retained/claude",
        "retained/codex",
    ] {
        assert!(names.contains(&expected), "{expected:?} missing: {names:?}");
    }
    assert!(
        names.iter().filter(|n| n.ends_with(".jsonl.zst")).count() >= 2,
        "{names:?}"
    );
    for (name, mode, is_dir) in &listed {
        assert_eq!(
            *mode,
            if *is_dir { 0o700 } else { 0o600 },
            "{name:?} is {mode:o}"
        );
    }
    // The doctor agrees (it runs under umask 000 too).
    let doctor = under_umask_000(&env, &["--json", "doctor"], b"");
    let doctor: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(
        check(&doctor, "data dir permissions")["status"],
        "ok",
        "{doctor}"
    );
}

#[test]
fn an_old_archive_open_to_others_is_tightened_by_the_next_command() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    // As an older Cairn left it under umask 022.
    for (name, _, is_dir) in modes(&env.data()) {
        let mode = if is_dir { 0o755 } else { 0o644 };
        std::fs::set_permissions(env.data().join(name), std::fs::Permissions::from_mode(mode))
            .unwrap();
    }
    env.ok(&["sessions"]);
    for (name, mode, is_dir) in modes(&env.data()) {
        assert_eq!(
            mode,
            if is_dir { 0o700 } else { 0o600 },
            "{name:?} is {mode:o}"
        );
    }
}

/// The pages of the tables and indexes `doctor`'s counts never read (every b-tree but those of
/// sessions, records, warnings and findings), as `(page number, page size)`.
fn pages_nothing_reads_at_open(db: &Path) -> (Vec<i64>, usize) {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let size: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    let pages: Vec<i64> = conn
        .prepare(
            "SELECT rootpage FROM sqlite_schema
             WHERE type IN ('table', 'index') AND rootpage > 1 AND tbl_name IN ('turns', 'captures', 'token_usage')
             ORDER BY rootpage",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    (pages, size as usize)
}

#[test]
fn doctor_fails_on_a_database_with_corrupt_pages_and_says_what_to_do() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let doctor = env.json(&["doctor"]);
    assert_eq!(check(&doctor, "archive")["status"], "ok", "{doctor}");

    // Damage what a failing disk damages: whole pages, here of tables the open and the counts
    // never read, so nothing but a check of every page can notice.
    let db = env.data().join("cairn.db");
    let (pages, size) = pages_nothing_reads_at_open(&db);
    assert!(pages.len() >= 3, "{pages:?}");
    let mut bytes = std::fs::read(&db).unwrap();
    for page in &pages {
        let at = (*page as usize - 1) * size;
        for (i, b) in bytes[at..at + size].iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37) ^ 0xA5;
        }
    }
    std::fs::write(&db, &bytes).unwrap();

    let out = env.run(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("archive"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.starts_with("FAIL"), "{line}");
    for needed in [
        db.display().to_string().as_str(),
        "is damaged (quick_check:",
        "cp -a",
        ".recover",
        "cairn sync",
    ] {
        assert!(line.contains(needed), "{needed:?} not in {line}");
    }
}

/// A database cut short (a disk that filled, a copy stopped half way) cannot be opened at
/// all: every command sends the person to doctor, and doctor still runs, fails the archive
/// check with the recovery recipe, and writes nothing.
#[test]
fn doctor_runs_on_a_database_too_damaged_to_open() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let db = env.data().join("cairn.db");
    let bytes = std::fs::read(&db).unwrap();
    // Past the header and a few pages: SQLite reads it as a database and finds it malformed.
    let cut = &bytes[..bytes.len() / 2];
    for extra in ["cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(env.data().join(extra));
    }
    std::fs::write(&db, cut).unwrap();
    let sessions = env.run(&["sessions"]);
    assert_eq!(sessions.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&sessions.stderr).contains("cairn doctor"));

    let out = env.run(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.contains(" archive "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.starts_with("FAIL"), "{line}");
    assert!(
        line.contains(".recover") && line.contains("cp -a"),
        "{line}"
    );
    // The other checks ran; the data dir is not called read-only.
    assert!(text.contains("claude source dir"), "{text}");
    assert!(!text.contains("read-only"), "{text}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        cut,
        "doctor changed the database"
    );
}
