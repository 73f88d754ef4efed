//! kiro-cli's SQLite database (the Database read kind): golden over a database the test builds
//! with AgentsView's payloads and a schema sample of tool use (`tests/fixtures/kiro/`, see
//! SOURCES.md), a conversation rewritten with a new turn, and a value that is not JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::FoundFile;
use rusqlite::Connection;
use serde_json::json;
use support::agent_dbs::{kiro_add_turn, kiro_database, kiro_payload};
use support::count;

fn found(root: &Path) -> Vec<FoundFile> {
    support::found(Agent::Kiro, &root.join("kiro-cli"))
}

#[test]
fn kiro_database_is_pinned() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    kiro_database(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = found(src.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.sessions_added, 3);
    let keys = support::session_keys(data.path(), "session_id");
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
    let db = kiro_database(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = found(src.path());
    support::capture(&cairn, &files);
    kiro_add_turn(&db);
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!((r.records_added, r.records_updated), (2, 0), "{r:?}");

    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE conversations_v2 SET value = ?1, updated_at = updated_at + 1000 WHERE conversation_id = 'overlap-session'",
            [kiro_payload("malformed_payload.txt")],
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

/// kiro-cli 2.x's session logs (`sessions/cli/<id>.jsonl` with its metadata beside it), real
/// logs of 2.6.0: golden over the four; a rewind's repeated lines read once; a line appended is
/// read alone.
#[test]
fn kiro_session_logs_are_pinned() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let from = support::fixtures().join("kiro/sessions/cli");
    for e in std::fs::read_dir(&from).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        support::copy_into(
            &from.join(&name),
            src.path(),
            &format!(".kiro/sessions/cli/{name}"),
        );
    }
    let files = support::found(Agent::Kiro, &src.path().join(".kiro/sessions/cli"));
    assert_eq!(files.len(), 4, "the logs, not their metadata: {files:?}");
    let cairn = Cairn::open(data.path()).unwrap();
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.sessions_added, 4);
    let mut sessions = Vec::new();
    for key in support::session_keys(data.path(), "session_id") {
        let d = cairn.session(&key).unwrap();
        sessions.push(json!({
            "id": d.session_id, "title": d.title, "model": d.model, "cwd": d.cwd,
            "turns": d.turn_count, "records": d.record_count, "kinds": d.kinds,
            "tools": d.tools, "edited_paths": d.edited_paths,
            "unknown_types": d.unknown_types, "started_at": d.started_at,
            "updated_at": d.updated_at,
        }));
    }
    let conn = Connection::open(data.path().join("cairn.db")).unwrap();
    let results: Vec<(String, Option<i64>, Option<String>)> = conn
        .prepare(
            "SELECT coalesce(tool_name, ''), exit_code, outcome FROM records
             WHERE kind = 'tool_result' ORDER BY session_id, ordinal",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Eleven shell results, each with `exit status: 0`, and the write's.
    assert_eq!(results.len(), 12, "{results:?}");
    assert!(
        results.iter().all(
            |(tool, code, outcome)| outcome.as_deref() == Some("succeeded")
                && (tool == "write" || *code == Some(0))
        ),
        "{results:?}"
    );
    // The rewind re-appended its kept prompt and answer: three prompts, three answers.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE s.session_id = '8799deca-3405-4e04-9328-f76e07e48669'"
        ),
        6
    );
    support::assert_ordinals_dense(data.path());
    insta::assert_json_snapshot!("kiro_sessions", json!({"sessions": sessions}));

    let again = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    let log = src
        .path()
        .join(".kiro/sessions/cli/e36d6e16-bf0a-4982-91e1-68e63be0fa60.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(r#"{"version":"v1","kind":"Prompt","data":{"message_id":"p2","content":[{"kind":"text","data":"and now?"}],"meta":{"timestamp":1787363600}}}"#);
    text.push('\n');
    std::fs::write(&log, text).unwrap();
    let r = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!((r.records_added, r.records_updated), (1, 0), "{r:?}");
}
