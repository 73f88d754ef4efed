//! Cursor's IDE chat store (`User/globalStorage/state.vscdb`, the Database read kind): golden over
//! a store the test builds from the documented shapes (`tests/fixtures/cursor/vscdb/state.sql`;
//! no real store could be copied, see SOURCES.md), rows Cursor replaces, adds and deletes between
//! syncs, and hostile stores (the CLI's real `store.db` under the IDE's name, values of the wrong
//! type) never fatal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::FoundFile;
use rusqlite::Connection;
use serde_json::json;
use support::agent_dbs::{cursor_ide_set, cursor_ide_store};
use support::{count, live_records};

fn found(root: &Path) -> Vec<FoundFile> {
    support::found(Agent::Cursor, &root.join("User/globalStorage"))
}

#[test]
fn cursor_ide_store_is_pinned() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    cursor_ide_store(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = found(src.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // c-agent and c-legacy; c-empty has no message yet.
    assert_eq!(report.sessions_added, 2);

    let keys = support::session_keys(data.path(), "session_id");
    let mut sessions = Vec::new();
    for key in &keys {
        let d = cairn.session(key).unwrap();
        sessions.push(json!({
            "id": d.session_id, "title": d.title, "model": d.model, "cwd": d.cwd,
            "turns": d.turn_count, "records": d.record_count, "kinds": d.kinds, "tools": d.tools,
            "edited_paths": d.edited_paths, "unknown_types": d.unknown_types,
            "started_at": d.started_at, "updated_at": d.updated_at,
        }));
    }
    // The bubbles in the composer's order, not the rows' order.
    let agent_units: Vec<String> = live_records(data.path())
        .into_iter()
        .filter(|r| r.0 == "c-agent")
        .map(|r| r.2)
        .collect();
    let mut seen: Vec<String> = Vec::new();
    for u in agent_units {
        if seen.last() != Some(&u) {
            seen.push(u);
        }
    }
    assert_eq!(
        seen,
        [
            "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11"
        ]
    );
    // Two prompts typed by a person open the two turns; the tools keep their kinds and output.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.session_id = 'c-agent'"
        ),
        2
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_result' AND tool_name = 'run_terminal_cmd' AND exit_code = 101 AND outcome = 'failed'"
        ),
        1
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_result' AND tool_kind = 'file_edit' AND text LIKE '%+use std::collections::BTreeMap;%'"
        ),
        1
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT sum(input) + sum(output) FROM token_usage"
        ),
        1200 + 80 + 1500 + 200 + 1900 + 60 + 2100 + 40
    );
    support::assert_ordinals_dense(data.path());
    insta::assert_json_snapshot!("cursor_ide", json!({"sessions": sessions}));

    // Read again: nothing new, nothing changed.
    let before = support::dump(data.path());
    let again = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(support::dump(data.path()), before);
}

/// Cursor rewrites a bubble as it streams (the row is replaced), adds bubbles, deletes one:
/// each sync stores exactly that, a rewritten bubble keeps its place, a deleted one is retracted.
#[test]
fn bubbles_replaced_added_and_deleted() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = cursor_ide_store(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = found(src.path());
    support::capture(&cairn, &files);
    let ordinal_of_b11 = || {
        count(
            data.path(),
            "SELECT ordinal FROM records WHERE unit = 'b11' AND retracted_at IS NULL",
        )
    };
    let b11 = ordinal_of_b11();

    cursor_ide_set(
        &db,
        "bubbleId:c-agent:b11",
        r#"{"type":2,"bubbleId":"b11","text":"All 12 tests pass now, twice in a row.","tokenCount":{"inputTokens":2100,"outputTokens":45}}"#,
    );
    cursor_ide_set(
        &db,
        "bubbleId:c-agent:b13",
        r#"{"type":1,"bubbleId":"b13","text":"Thanks, commit it."}"#,
    );
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!((r.records_added, r.records_updated), (1, 1), "{r:?}");
    assert_eq!(ordinal_of_b11(), b11, "a rewritten bubble keeps its place");
    let texts: Vec<String> = live_records(data.path())
        .into_iter()
        .filter(|r| r.2 == "b11")
        .map(|r| r.3)
        .collect();
    assert_eq!(texts, ["All 12 tests pass now, twice in a row."]);

    Connection::open(&db)
        .unwrap()
        .execute(
            "DELETE FROM cursorDiskKV WHERE key = 'bubbleId:c-agent:b13'",
            [],
        )
        .unwrap();
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE unit = 'b13' AND retracted_at IS NOT NULL"
        ),
        1
    );
    // Once settled, a sync stores nothing.
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0));
}

/// Files named like the store that are not one: Cursor's CLI chat store (a real `store.db`,
/// tables `meta` and `blobs`), text, a store whose values are of every wrong type. A warning
/// names the problem or the value is counted; nothing fails the sync, nothing is written.
#[test]
fn stores_that_are_not_cursor_s_or_hold_wrong_types() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cli = support::copy_into(
        &support::fixtures().join("cursor/chats/store.db"),
        src.path(),
        "User/globalStorage/state.vscdb",
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &found(src.path()));
    let w: Vec<String> = r.warnings.iter().map(|w| w.message.clone()).collect();
    assert!(
        w.iter().any(|m| m.contains("no `cursorDiskKV` table")),
        "{w:?}"
    );
    assert_eq!(r.sessions_added, 0);
    let n: i64 = Connection::open(&cli)
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 4, "the file was only read");

    std::fs::write(&cli, "not a database").unwrap();
    let r = support::capture(&cairn, &found(src.path()));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("not a SQLite database")),
        "{:?}",
        r.warnings
    );

    std::fs::remove_file(&cli).unwrap();
    let db = cursor_ide_store(src.path());
    let conn = Connection::open(&db).unwrap();
    for (key, value) in [
        ("bubbleId:c-agent:b20", rusqlite::types::Value::Integer(7)),
        (
            "bubbleId:c-agent:b21",
            rusqlite::types::Value::Blob(br#"{"type":1,"text":"typed as a blob"}"#.to_vec()),
        ),
        (
            "bubbleId:c-agent:b22",
            rusqlite::types::Value::Text("{\"type\":2,\"text\":".into()),
        ),
        (
            "bubbleId:c-agent:b23",
            rusqlite::types::Value::Text(
                r#"{"type":2,"text":["x"],"toolFormerData":{"name":7,"rawArgs":"{","result":{"a":1}},"tokenCount":{"inputTokens":-1}}"#.into(),
            ),
        ),
        ("bubbleId:c-agent", rusqlite::types::Value::Text("{}".into())),
        ("composerData:", rusqlite::types::Value::Text("{}".into())),
        (
            "composerData:c-odd",
            rusqlite::types::Value::Text("[1,2]".into()),
        ),
        (
            "bubbleId:c-odd:o1",
            rusqlite::types::Value::Text(
                "{\"type\":1,\"text\":\"\\u001b[31mred\\u001b[0m\"}".into(),
            ),
        ),
    ] {
        conn.execute(
            "INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)",
            rusqlite::params![key, value],
        )
        .unwrap();
    }
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &found(src.path()));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.sessions_added, 3, "c-agent, c-legacy and c-odd");
    let texts: Vec<String> = live_records(data.path()).into_iter().map(|r| r.3).collect();
    assert!(texts.iter().any(|t| t == "typed as a blob"), "{texts:?}");
    let unknown: String = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT unknown_types FROM sessions WHERE session_id = 'c-agent'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(unknown.contains("cursor:bubble-not-an-object"), "{unknown}");
    // The call with a number for its name is still a call, its broken arguments kept as text.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_call' AND tool_name = 'unknown' AND tool_input = '\"{\"'"
        ),
        1
    );
}
