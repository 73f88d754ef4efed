//! kiro-cli's SQLite database (the Database read kind): golden over a database the test builds
//! with AgentsView's payloads and a schema sample of tool use (`tests/fixtures/kiro/`, see
//! SOURCES.md), a conversation rewritten with a new turn, and a value that is not JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::{self, DirOrigin, FoundFile, SourceDir};
use rusqlite::Connection;
use serde_json::json;

fn payload(name: &str) -> String {
    std::fs::read_to_string(support::fixtures().join("kiro").join(name)).unwrap()
}

/// `<root>/kiro-cli/data.sqlite3` holding the fixture's conversations.
fn database(root: &Path) -> PathBuf {
    let db = root.join("kiro-cli/data.sqlite3");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL,
            value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
            PRIMARY KEY (key, conversation_id));",
    )
    .unwrap();
    for (cwd, id, file, at) in [
        (
            "/home/user/code/kiro-app",
            "sqlite-session",
            "standard_payload.json",
            1779012000000_i64,
        ),
        (
            "/home/user/code/current-kiro",
            "overlap-session",
            "overlap_payload.json",
            1779015600000,
        ),
        (
            "/home/dev/api",
            "cairn-kiro-tools",
            "tools_payload.json",
            1779094800000,
        ),
    ] {
        conn.execute(
            "INSERT INTO conversations_v2 VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![cwd, id, payload(file), at, at + 60_000],
        )
        .unwrap();
    }
    db
}

fn found(root: &Path) -> Vec<FoundFile> {
    let sd = SourceDir {
        agent: Agent::Kiro,
        path: root.join("kiro-cli"),
        origin: DirOrigin::Env,
    };
    let mut warnings = Vec::new();
    let files = discover::walk(&sd, &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    files
}

fn count(data: &Path, sql: &str) -> i64 {
    Connection::open(data.join("cairn.db"))
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

#[test]
fn kiro_database_is_pinned() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    database(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = found(src.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.sessions_added, 3);
    let keys: Vec<String> = {
        let conn = Connection::open(data.path().join("cairn.db")).unwrap();
        let mut stmt = conn
            .prepare("SELECT session_key FROM sessions ORDER BY session_id")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let mut sessions = Vec::new();
    for key in &keys {
        let d = cairn.session(key).unwrap();
        sessions.push(json!({
            "id": d.session_id, "model": d.model, "cwd": d.cwd, "turns": d.turn_count,
            "records": d.record_count, "kinds": d.kinds, "tools": d.tools,
            "edited_paths": d.edited_paths, "unknown_types": d.unknown_types,
            "started_at": d.started_at, "updated_at": d.updated_at,
        }));
    }
    // Every call answered by the result that names it; the shell result has its exit status.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records r JOIN records c ON c.call_id = r.call_id AND c.kind = 'tool_call'
             WHERE r.kind = 'tool_result' AND r.session_id = c.session_id"
        ),
        3
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_result' AND exit_code = 0 AND outcome = 'succeeded'"
        ),
        1
    );
    support::assert_ordinals_dense(data.path());
    insta::assert_json_snapshot!("kiro", json!({"sessions": sessions}));

    let before = support::dump(data.path());
    let again = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(support::dump(data.path()), before);
}

/// kiro-cli rewrites the whole conversation on every turn: a new turn adds its records only; a
/// value that is not JSON (a torn write, another version) is left for a later sync: nothing read,
/// nothing retracted.
#[test]
fn a_conversation_rewritten_and_a_broken_value() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = database(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = found(src.path());
    support::capture(&cairn, &files);
    let conn = Connection::open(&db).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&payload("overlap_payload.json")).unwrap();
    v["history"].as_array_mut().unwrap().push(json!({
        "user": {"content": {"Prompt": {"prompt": "And the old store?"}}, "timestamp": "2026-05-17T11:05:00Z"},
        "assistant": {"Response": {"message_id": "assistant-overlap-2", "content": "It is read too."}},
    }));
    conn.execute(
        "UPDATE conversations_v2 SET value = ?1, updated_at = updated_at + 1000 WHERE conversation_id = 'overlap-session'",
        [v.to_string()],
    )
    .unwrap();
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!((r.records_added, r.records_updated), (2, 0), "{r:?}");

    conn.execute(
        "UPDATE conversations_v2 SET value = ?1, updated_at = updated_at + 1000 WHERE conversation_id = 'overlap-session'",
        [payload("malformed_payload.txt")],
    )
    .unwrap();
    let before = support::dump(data.path());
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        support::dump(data.path()),
        before,
        "nothing read, nothing retracted"
    );
    assert_eq!(
        Connection::open(data.path().join("cairn.db"))
            .unwrap()
            .query_row(
                "SELECT count(*) FROM records WHERE retracted_at IS NOT NULL",
                [],
                |r| r.get::<_, i64>(0)
            )
            .unwrap(),
        0
    );
}
