//! `cairn reindex`: what the branch views say survives a reindex after the transcripts are
//! gone, the command says what it did (and what it would do), and a reindex killed at any
//! point leaves every session as it was or rebuilt whole.

use std::path::Path;

use crate::branch::{edit_then_commit, key_of, repo, skim};
use crate::harden::{kill_after, quiet};
use crate::support::Env;

/// Links from records and from the snapshots taken at each capture, and a person's link, are
/// what they were; the transcript itself is gone.
#[test]
fn links_survive_a_reindex_from_the_copies_alone() {
    let env = Env::new();
    edit_then_commit(&env, &repo(env.root.path()), "s-reindex");
    let key = key_of(&env, "s-reindex");
    env.ok(&["link", &key, "--to", "main", "--reason", "started there"]);
    let feature = skim(&env, &["branch", "feature"]);
    let main = skim(&env, &["branch", "main"]);
    assert!(!feature["sessions"].as_array().unwrap().is_empty());
    assert!(!main["sessions"].as_array().unwrap().is_empty());
    std::fs::remove_file(env.claude().join("-repo/s-reindex.jsonl")).unwrap();

    let r = env.json(&["reindex"]);
    for field in [
        "sessions",
        "sessions_changed",
        "records_before",
        "records_after",
        "records_changed",
        "turns_before",
        "turns_after",
        "evidence_revoked",
        "skipped",
        "dry_run",
    ] {
        assert!(r.get(field).is_some(), "no {field} in {r}");
    }
    assert_eq!(r["sessions"], 1, "{r}");
    assert_eq!(r["records_changed"], 0, "{r}");
    assert_eq!(r["records_before"], r["records_after"], "{r}");
    assert_eq!(skim(&env, &["branch", "feature"]), feature);
    assert_eq!(skim(&env, &["branch", "main"]), main);
}

#[test]
fn it_says_what_it_did_and_what_it_would_do() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let dry = env.ok(&["reindex", "--dry-run", "--agent", "codex"]);
    assert!(dry.starts_with("Would read 2 sessions again"), "{dry}");
    assert!(dry.contains("Nothing was changed (--dry-run)."), "{dry}");
    let done = env.ok(&["reindex", "55604662-cf2a-4331-851a-ec234028f8ca"]);
    assert!(done.starts_with("Read 1 session again"), "{done}");
    assert!(done.contains("0 read differently now"), "{done}");
    assert!(!done.contains("Read differently:"), "{done}");

    // A session an older build misread is listed by the name a person types, with its title.
    rusqlite::Connection::open(env.data().join("cairn.db"))
        .unwrap()
        .execute(
            "UPDATE records SET prompt_source = 'system_injected' WHERE prompt_source = 'human'",
            [],
        )
        .unwrap();
    let dry = env.ok(&[
        "reindex",
        "--dry-run",
        "55604662-cf2a-4331-851a-ec234028f8ca",
    ]);
    let listed: Vec<&str> = dry
        .lines()
        .skip_while(|l| *l != "Would read differently:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(listed.len(), 1, "{dry}");
    assert!(
        listed[0].starts_with("  55604662-cf2a-4331-851a-ec234028f8ca"),
        "{dry}"
    );
    assert!(
        listed[0].ends_with(" record") || listed[0].ends_with(" records"),
        "{dry}"
    );

    // An unknown session: one line on stderr naming it, exit 1, nothing read.
    let out = env.run(&["reindex", "no-such-\u{1b}[31msession"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no-such-"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// The lines of the only retained copy under `data`, decoded.
fn copy_text(data: &Path) -> (std::path::PathBuf, String) {
    let dir = data.join("retained/claude");
    let path = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    let text = zstd::stream::decode_all(std::fs::File::open(&path).unwrap()).unwrap();
    (path, String::from_utf8(text).unwrap())
}

/// A secret in a retained copy that an older build's rules let through: the dry run counts the
/// lines, the reindex writes them again redacted and says so, and a second finds none.
#[test]
fn it_says_which_copy_lines_it_redacted() {
    const KEY: &str = "AKIAZ7QW3RT5YU8IOP2L";
    let env = Env::new();
    let dir = env.claude().join("-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let line = |uuid: &str, role: &str, text: &str| {
        serde_json::json!({"type": role, "uuid": uuid, "sessionId": "s-secret",
            "timestamp": "2026-03-01T10:00:00Z", "cwd": "/tmp/proj",
            "message": {"role": role, "content": text}})
        .to_string()
    };
    std::fs::write(
        dir.join("s-secret.jsonl"),
        format!(
            "{}\n{}\n",
            line("u1", "user", &format!("deploy with {KEY}")),
            line("a1", "assistant", "done")
        ),
    )
    .unwrap();
    env.ok(&["sync"]);
    // As a build without the rule wrote it: the key raw in the copy.
    let (copy, text) = copy_text(&env.data());
    let at = text.find("[REDACTED:").unwrap();
    let end = at + text[at..].find(']').unwrap() + 1;
    let aged = format!("{}{KEY}{}", &text[..at], &text[end..]);
    let bytes = zstd::stream::encode_all(aged.as_bytes(), 1).unwrap();
    std::fs::write(&copy, &bytes).unwrap();
    rusqlite::Connection::open(env.data().join("cairn.db"))
        .unwrap()
        .execute("UPDATE sources SET retained_len = ?1", [bytes.len() as i64])
        .unwrap();

    let dry = env.ok(&["reindex", "--dry-run"]);
    assert!(
        dry.contains(
            "Secrets: 1 line of the retained copies holds what today's redaction rules remove \
             (a reindex writes them again redacted)."
        ),
        "{dry}"
    );
    assert!(copy_text(&env.data()).1.contains(KEY), "a dry run wrote");
    let done = env.json(&["reindex"]);
    assert_eq!(done["copy_lines_redacted"], 1, "{done}");
    assert_eq!(done["changed"][0]["handle"], "s-secret", "{done}");
    assert_eq!(done["changed"][0]["copy_lines_redacted"], 1, "{done}");
    let (_, now) = copy_text(&env.data());
    assert!(!now.contains(KEY) && now.contains("[REDACTED:"), "{now}");
    let again = env.ok(&["reindex"]);
    assert!(!again.contains("Secrets:"), "{again}");
}

/// The records' words as an older build stored them: every other prompt taken for text the
/// agent injected (which also merged its turn into the one before).
fn age(data: &Path) {
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    db.execute(
        "UPDATE records SET prompt_source = 'system_injected'
         WHERE prompt_source = 'human' AND ordinal % 2 = 1",
        [],
    )
    .unwrap();
}

/// Per session, how many of its records an older build misread, with the index's agreement.
fn misread(data: &Path) -> Vec<(String, i64)> {
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let ok: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    db.execute(
        "INSERT INTO records_fts (records_fts) VALUES ('integrity-check')",
        [],
    )
    .unwrap();
    db.prepare(
        "SELECT s.session_key, (SELECT COUNT(*) FROM records r WHERE r.session_id = s.id
             AND r.prompt_source = 'system_injected' AND r.ordinal % 2 = 1)
         FROM sessions s ORDER BY s.session_key",
    )
    .unwrap()
    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// A reindex killed at random points: each session is as the older build left it or rebuilt
/// whole, never half; the index agrees with the records; a rerun ends where a clean run does.
#[test]
fn a_reindex_killed_at_random_points_leaves_each_session_whole() {
    let env = Env::new();
    env.with_big_sessions(4);
    env.ok(&["sync"]);
    let clean = misread(&env.data());
    age(&env.data());
    let aged = misread(&env.data());
    assert_ne!(aged, clean);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut kills = 0;
    for _ in 0..10 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = std::time::Duration::from_millis(seed % 600);
        kills += usize::from(kill_after(quiet(&env, &["reindex"]), at));
        let now = misread(&env.data());
        for ((key, n), ((_, was), (_, fresh))) in now.iter().zip(aged.iter().zip(&clean)) {
            assert!(
                n == was || n == fresh,
                "{key}: {n} (aged {was}, clean {fresh})"
            );
        }
        age(&env.data());
    }
    assert!(kills > 0, "no run was killed mid-way");
    env.ok(&["reindex"]);
    assert_eq!(misread(&env.data()), clean);
}

/// `cairn doctor` says whether the archive can be rebuilt from its copies, and names a
/// session's copy that went missing.
#[test]
fn doctor_says_which_copy_cannot_be_read_again() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let check = |doctor: &serde_json::Value| {
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "retained copies")
            .cloned()
            .unwrap_or_else(|| panic!("no retained copies check in {doctor}"))
    };
    let ok = check(&env.json(&["doctor"]));
    assert_eq!(ok["status"], "ok", "{ok}");
    // Every session read from a transcript, sub-agents' too (the session list shows those
    // under their parents).
    let listed = env.json(&["sessions"]).as_array().unwrap().len();
    let detail = ok["detail"].as_str().unwrap();
    let sessions: usize = detail.split(' ').next().unwrap().parse().unwrap();
    assert!(sessions >= listed, "{detail}");
    assert!(
        detail.ends_with("sessions can be read again from their copies (`cairn reindex`)"),
        "{detail}"
    );
    let copy = walk(&env.data().join("retained"))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    std::fs::remove_file(&copy).unwrap();
    let warn = check(&env.json(&["doctor"]));
    assert_eq!(warn["status"], "warn", "{warn}");
    let detail = warn["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!("1 of {sessions} sessions cannot be read again")),
        "{detail}"
    );
    assert!(detail.contains(copy.to_str().unwrap()), "{detail}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// After an upgrade whose parsers read transcripts differently, `cairn doctor` says which
/// sessions an older Cairn read and what to run; once read again, it says they are current.
#[test]
fn doctor_offers_a_reindex_for_sessions_an_older_cairn_read() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let parsers = || {
        env.json(&["doctor"])["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "parsers")
            .cloned()
            .unwrap()
    };
    let now = parsers();
    assert_eq!(now["status"], "ok", "{now}");
    assert!(
        now["detail"]
            .as_str()
            .unwrap()
            .contains("read by this build's parsers"),
        "{now}"
    );
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let older = db
        .execute("UPDATE sessions SET read_by = 0 WHERE agent = 'codex'", [])
        .unwrap();
    assert!(older > 0);
    let then = parsers();
    assert_eq!(then["status"], "warn", "{then}");
    let detail = then["detail"].as_str().unwrap();
    assert!(detail.starts_with(&format!("{older} of ")), "{detail}");
    assert!(detail.contains("cairn reindex --dry-run"), "{detail}");
    env.ok(&["reindex", "--agent", "codex"]);
    assert_eq!(parsers()["status"], "ok");
}
